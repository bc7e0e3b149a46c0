//! The structure ARCHITECTURE.md describes, checked on the code: no module of
//! any crate imports (directly or through others) a module that imports it;
//! each crate's layers, as ARCHITECTURE.md lists them, depend only downward;
//! and no source file outside tests is longer than 600 lines.
//!
//! Edges are read from the source text: every `crate::`, `super::` and
//! `self::` path (in `use` trees, groups included, and in expressions), with
//! comments, strings and `#[cfg(test)]` code left out. A path leads to the
//! deepest module it names; a name re-exported by a parent module leads to
//! that parent, so a child that imports through its parent's re-exports is
//! reported as the cycle it is.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use skill_tests::root;

/// A module: its path from the crate root (`[]` for the root itself).
type Module = Vec<String>;

const MAX_LINES: usize = 600;

/// The crates checked, by source directory.
const CRATES: &[&str] = &[
    "skill-core/src",
    "skill-macros/src",
    "skill-runtime/src",
    "skill-build/src",
    "examples/seed-skills/src",
    "examples/team-skills/src",
    "examples/app/src",
];

#[test]
fn no_module_imports_itself_through_others() {
    let mut cycles = Vec::new();
    for krate in CRATES {
        let graph = Graph::read(&root().join(krate));
        for cycle in graph.cycles() {
            cycles.push(format!("{krate}: {}", show(&cycle)));
        }
        let top = graph.top_level();
        for cycle in top.cycles() {
            cycles.push(format!("{krate} (top-level modules): {}", show(&cycle)));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn layers_depend_only_on_the_layers_below_them() {
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let layers = declared_layers(&architecture);
    assert!(
        layers.contains_key("skill-runtime"),
        "ARCHITECTURE.md declares the layers of skill-runtime as `skill-runtime: a < b < ...`"
    );
    let mut wrong = Vec::new();
    for (krate, order) in &layers {
        let graph = Graph::read(&root().join(krate).join("src"));
        let rank = |m: &str| order.iter().position(|l| l == m);
        let modules: BTreeSet<String> = graph
            .edges
            .keys()
            .filter_map(|m| m.first().cloned())
            .collect();
        for m in &modules {
            if rank(m).is_none() {
                wrong.push(format!(
                    "{krate}: module `{m}` is in no layer of ARCHITECTURE.md"
                ));
            }
        }
        for (from, to) in graph.top_level().edge_list() {
            let (Some(f), Some(t)) = (from.first(), to.first()) else {
                continue;
            };
            if let (Some(rf), Some(rt)) = (rank(f), rank(t))
                && rf < rt
            {
                wrong.push(format!("{krate}: `{f}` depends on `{t}`, a layer above it"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut long = Vec::new();
    for krate in CRATES {
        for file in rust_files(&root().join(krate)) {
            let n = fs::read_to_string(&file).map_or(0, |t| t.lines().count());
            if n > MAX_LINES {
                long.push(format!("{} ({n} lines)", file.display()));
            }
        }
    }
    assert!(long.is_empty(), "split by concern:\n{}", long.join("\n"));
}

/// `crate: a < b < c` lines of ARCHITECTURE.md, lowest layer first.
fn declared_layers(text: &str) -> BTreeMap<String, Vec<String>> {
    text.lines()
        .filter_map(|l| {
            let (krate, order) = l.trim().split_once(": ")?;
            let layers: Vec<String> = order.split(" < ").map(|s| s.trim().to_owned()).collect();
            let word = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
            };
            (layers.len() > 1 && word(krate) && layers.iter().all(|l| word(l)))
                .then(|| (krate.to_owned(), layers))
        })
        .collect()
}

fn show(cycle: &[Module]) -> String {
    cycle
        .iter()
        .map(|m| {
            if m.is_empty() {
                "crate".to_owned()
            } else {
                m.join("::")
            }
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Modules and the modules each imports.
struct Graph {
    edges: BTreeMap<Module, BTreeSet<Module>>,
}

impl Graph {
    /// The modules of the crate whose sources are in `src`: `lib.rs` or
    /// `main.rs` is the root; `src/bin/` holds other crates and is left out,
    /// and so are test-only modules (declared under `#[cfg(test)]`).
    fn read(src: &Path) -> Graph {
        let mut files: BTreeMap<Module, String> = BTreeMap::new();
        for file in rust_files(src) {
            let rel = file.strip_prefix(src).expect("under src");
            if rel.starts_with("bin") {
                continue;
            }
            let mut m: Module = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            let text = fs::read_to_string(&file).expect("readable source");
            files.insert(m, text);
        }
        let mut test_only = BTreeSet::new();
        for (m, text) in &files {
            for name in test_module_declarations(&strip(text)) {
                let mut t = m.clone();
                t.push(name);
                test_only.insert(t);
            }
        }
        files.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
        let modules: BTreeSet<Module> = files.keys().cloned().collect();
        let mut edges = BTreeMap::new();
        for (m, text) in &files {
            let mut to = BTreeSet::new();
            for path in paths(&without_tests(&strip(text))) {
                if let Some(target) = resolve(m, &path, &modules)
                    && target != *m
                {
                    to.insert(target);
                }
            }
            edges.insert(m.clone(), to);
        }
        Graph { edges }
    }

    /// The graph of top-level modules (the root left out: it declares them).
    fn top_level(&self) -> Graph {
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (from, tos) in &self.edges {
            let Some(f) = from.first() else { continue };
            let entry = edges.entry(vec![f.clone()]).or_default();
            for to in tos {
                if let Some(t) = to.first()
                    && t != f
                {
                    entry.insert(vec![t.clone()]);
                }
            }
        }
        Graph { edges }
    }

    fn edge_list(&self) -> Vec<(Module, Module)> {
        self.edges
            .iter()
            .flat_map(|(f, ts)| ts.iter().map(move |t| (f.clone(), t.clone())))
            .collect()
    }

    /// One cycle through each strongly connected group of modules (Tarjan's
    /// algorithm for the groups, then a walk inside each).
    fn cycles(&self) -> Vec<Vec<Module>> {
        let nodes: Vec<&Module> = self.edges.keys().collect();
        let index_of: BTreeMap<&Module, usize> =
            nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let next = |v: usize| -> Vec<usize> {
            self.edges[nodes[v]]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        };
        let mut t = Tarjan {
            index: vec![None; nodes.len()],
            low: vec![0; nodes.len()],
            on: vec![false; nodes.len()],
            stack: Vec::new(),
            counter: 0,
            groups: Vec::new(),
        };
        for v in 0..nodes.len() {
            if t.index[v].is_none() {
                t.visit(v, &next);
            }
        }
        let mut found = Vec::new();
        for group in t.groups.into_iter().filter(|g| g.len() > 1) {
            // Follow edges inside the group until a module comes back.
            let inside: BTreeSet<usize> = group.iter().copied().collect();
            let mut path = vec![group[0]];
            loop {
                let here = *path.last().expect("non-empty");
                let step = next(here)
                    .into_iter()
                    .find(|n| inside.contains(n))
                    .expect("a group is strongly connected");
                if let Some(at) = path.iter().position(|&m| m == step) {
                    let mut cycle: Vec<Module> =
                        path[at..].iter().map(|&m| nodes[m].clone()).collect();
                    cycle.push(nodes[step].clone());
                    found.push(cycle);
                    break;
                }
                path.push(step);
            }
        }
        found
    }
}

struct Tarjan {
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    groups: Vec<Vec<usize>>,
}

impl Tarjan {
    fn visit(&mut self, v: usize, next: &impl Fn(usize) -> Vec<usize>) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on[v] = true;
        for w in next(v) {
            match self.index[w] {
                None => {
                    self.visit(w, next);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on[w] => self.low[v] = self.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut group = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            self.groups.push(group);
        }
    }
}

/// The module `path` (written in module `from`) leads to: the deepest module
/// it names.
fn resolve(from: &Module, path: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    let (mut base, rest): (Module, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (from.clone(), &path[1..]),
        Some("super") => {
            let mut b = from.clone();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                b.pop();
                rest = &rest[1..];
            }
            (b, rest)
        }
        _ => return None,
    };
    for seg in rest {
        let mut deeper = base.clone();
        deeper.push(seg.clone());
        if modules.contains(&deeper) {
            base = deeper;
        } else {
            break;
        }
    }
    Some(base)
}

/// Every `crate::`/`super::`/`self::` path in `code`, with `use` groups
/// (`crate::a::{b, c::d}`) expanded. `$crate` (in `macro_rules!`) is not a
/// path of this crate's modules and is skipped.
fn paths(code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = |w: &str| code[i..].starts_with(w);
        let boundary =
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'$');
        if boundary && (starts("crate::") || starts("super::") || starts("self::")) {
            let mut j = i;
            let mut found = Vec::new();
            tree(code, &mut j, Vec::new(), &mut found);
            out.extend(found);
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// One use tree at `*j`: `a::b::c`, `a::{...}`, `a::*`; its full paths go to `out`.
fn tree(code: &str, j: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let b = code.as_bytes();
    let mut path = prefix;
    loop {
        skip_space(b, j);
        if *j < b.len() && b[*j] == b'{' {
            *j += 1;
            loop {
                skip_space(b, j);
                if *j >= b.len() || b[*j] == b'}' {
                    *j += 1;
                    return;
                }
                tree(code, j, path.clone(), out);
                skip_space(b, j);
                if *j < b.len() && b[*j] == b',' {
                    *j += 1;
                }
            }
        }
        let start = *j;
        while *j < b.len() && (b[*j].is_ascii_alphanumeric() || b[*j] == b'_') {
            *j += 1;
        }
        if *j == start {
            // `*`, or the end of the path.
            if *j < b.len() && b[*j] == b'*' {
                *j += 1;
            }
            out.push(path);
            return;
        }
        path.push(code[start..*j].to_owned());
        skip_space(b, j);
        if code[*j..].starts_with("::") {
            *j += 2;
            continue;
        }
        // `as name`, `;`, `,`, `}` or anything else ends the path.
        out.push(path);
        if code[*j..].starts_with("as") && b.get(*j + 2).is_some_and(u8::is_ascii_whitespace) {
            *j += 2;
            skip_space(b, j);
            while *j < b.len() && (b[*j].is_ascii_alphanumeric() || b[*j] == b'_') {
                *j += 1;
            }
        }
        return;
    }
}

fn skip_space(b: &[u8], j: &mut usize) {
    while *j < b.len() && b[*j].is_ascii_whitespace() {
        *j += 1;
    }
}

/// `code` without comments and string literals (blanked, so offsets stay).
fn strip(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if code[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if code[i..].starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if code[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if code[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(b' ');
        } else if b[i] == b'r'
            && (code[i..].starts_with("r\"") || code[i..].starts_with("r#"))
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
        {
            let hashes = code[i + 1..].bytes().take_while(|&c| c == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                let end = code[body..]
                    .find(&close)
                    .map_or(b.len(), |e| body + e + close.len());
                out.extend_from_slice(b"\"\"");
                i = end;
            } else {
                out.push(b[i]);
                i += 1;
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A one-byte char literal ('"', '{', ...); lifetimes stay.
            out.extend_from_slice(b"' '");
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            let end = code[i + 2..].find('\'').map_or(b.len(), |e| i + 3 + e);
            out.extend_from_slice(b"' '");
            i = end;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Names of modules declared as files under `#[cfg(test)]` (`mod tests;`).
fn test_module_declarations(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        if let Some(decl) = after.strip_prefix("mod ") {
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                out.push(name);
            }
        }
        rest = &rest[at + 1..];
    }
    out
}

/// `code` without the items under `#[cfg(test)]` (a braced module or item).
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // The item ends at its first `;` when that comes before any `{`, else
        // at the brace that closes its first `{`.
        let (semi, brace) = (after.find(';'), after.find('{'));
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = after.len();
                for (k, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (Some(s), None) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_reader_sees_groups_aliases_and_relative_paths() {
    let code = strip(
        r#"
        use crate::a::{b::C, d, e::{f, g as h}};
        // use crate::commented::Out;
        let s = "crate::in_string::Out";
        fn x() { super::sib::f(); self::child::g(); $crate::macro_path::M; }
        "#,
    );
    let found: Vec<String> = paths(&code).into_iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "crate::a::b::C",
            "crate::a::d",
            "crate::a::e::f",
            "crate::a::e::g",
            "super::sib::f",
            "self::child::g"
        ]
    );
    let modules: BTreeSet<Module> = [
        vec![],
        vec!["a".into()],
        vec!["a".into(), "b".into()],
        vec!["x".into()],
        vec!["x".into(), "sib".into()],
    ]
    .into_iter()
    .collect();
    let from: Module = vec!["x".into(), "me".into()];
    assert_eq!(
        resolve(&from, &["super".into(), "sib".into(), "f".into()], &modules),
        Some(vec!["x".into(), "sib".into()])
    );
    assert_eq!(
        resolve(
            &from,
            &["crate".into(), "a".into(), "b".into(), "C".into()],
            &modules
        ),
        Some(vec!["a".into(), "b".into()])
    );
    assert_eq!(
        resolve(&from, &["crate".into(), "Z".into()], &modules),
        Some(vec![])
    );
    let cut = without_tests("a\n#[cfg(test)]\nmod tests { use crate::x::{y}; }\nb");
    assert_eq!(cut.trim().replace('\n', ""), "ab");
    // A cycle is found, and only a cycle.
    let g = Graph {
        edges: [
            (vec!["a".into()], [vec!["b".into()]].into()),
            (vec!["b".into()], [vec!["a".into()]].into()),
            (vec!["c".into()], [vec!["a".into()]].into()),
        ]
        .into_iter()
        .collect(),
    };
    assert_eq!(g.cycles().len(), 1);
}
