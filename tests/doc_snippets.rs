//! Snippets in the guides that are compiled as doc tests: each ```rust block
//! of the guide must appear, line for line, among the visible lines of a doc
//! test in the source file that compiles it (hidden `# ` lines set it up).

use skill_tests::root;

/// (guide, source file whose doc tests compile its snippets).
const COMPILED: &[(&str, &str)] = &[
    ("docs/mcp.md", "skill-runtime/src/mcp/server.rs"),
    ("docs/console.md", "skill-runtime/src/console/builder.rs"),
];

fn rust_blocks(markdown: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, l) if l.starts_with("```rust") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(b), _) => b.push(line.to_owned()),
            _ => {}
        }
    }
    blocks
}

/// The visible lines of every doc test in `source`.
fn doc_tests(source: &str) -> Vec<Vec<String>> {
    let docs: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("///"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let mut tests = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in docs {
        match (&mut current, line) {
            (None, l) if l.starts_with("```") && !l.contains("text") => current = Some(Vec::new()),
            (Some(_), "```") => tests.push(current.take().unwrap()),
            // Hidden set-up lines.
            (Some(_), l) if l == "#" || l.starts_with("# ") => {}
            (Some(t), l) => t.push(l.to_owned()),
            _ => {}
        }
    }
    tests
}

#[test]
fn guide_snippets_are_compiled_doc_tests() {
    for (guide, source) in COMPILED {
        let md = std::fs::read_to_string(root().join(guide)).unwrap();
        let src = std::fs::read_to_string(root().join(source)).unwrap();
        let tests = doc_tests(&src);
        let blocks = rust_blocks(&md);
        assert!(!blocks.is_empty(), "{guide} has rust snippets");
        for block in blocks {
            assert!(
                tests
                    .iter()
                    .any(|t| t.windows(block.len()).any(|w| w == block.as_slice())),
                "this snippet of {guide} is no doc test of {source}:\n{}",
                block.join("\n")
            );
        }
    }
}
