//! The validators of names, versions and ids, one implementation each:
//! `#[skill]` applies them when the code compiles, the registry when it is
//! built, and `skill-registry validate` to files.

/// The longest description the AI-COS skill model allows, in characters.
pub const MAX_DESCRIPTION: usize = 200;

/// snake_case: lowercase ASCII letters, digits and single underscores, starting
/// with a letter and not ending with an underscore.
pub const fn is_snake_case(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_lowercase() || b[b.len() - 1] == b'_' {
        return false;
    }
    let mut i = 1;
    while i < b.len() {
        let c = b[i];
        let ok = c.is_ascii_lowercase() || c.is_ascii_digit() || (c == b'_' && b[i - 1] != b'_');
        if !ok {
            return false;
        }
        i += 1;
    }
    true
}

/// `domain.verb`: two snake_case words joined by one dot, each starting with a
/// letter.
pub const fn is_capability_id(id: &str) -> bool {
    let b = id.as_bytes();
    let mut i = 0;
    let mut dots = 0;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            if word_start {
                return false;
            }
            dots += 1;
            word_start = true;
        } else if c.is_ascii_lowercase() || (!word_start && (c.is_ascii_digit() || c == b'_')) {
            word_start = false;
        } else {
            return false;
        }
        i += 1;
    }
    dots == 1 && !word_start
}

/// An agent id: two or more snake_case words joined by dots, like
/// `agent.seo.vlevel` (the AI-COS agent model's ids).
pub fn is_agent_id(id: &str) -> bool {
    let mut words = 0;
    for word in id.split('.') {
        if !is_snake_case(word) {
            return false;
        }
        words += 1;
    }
    words >= 2
}

/// MCP's tool naming rule: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
pub fn is_mcp_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Semantic Versioning 2.0.0, as the `semver` crate reads it; the error says
/// what is wrong.
pub fn check_semver(version: &str) -> Result<semver::Version, semver::Error> {
    semver::Version::parse(version)
}

/// Whether `version` is a Semantic Versioning 2.0.0 version.
pub fn is_semver(version: &str) -> bool {
    check_semver(version).is_ok()
}

/// Why a description is not acceptable: empty, or longer than
/// [`MAX_DESCRIPTION`] characters (with the count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptionProblem {
    /// Empty or only whitespace.
    Empty,
    /// Longer than the limit; the count of characters.
    TooLong(usize),
}

/// Descriptions say what a skill does, in at most [`MAX_DESCRIPTION`]
/// characters: LLM routers choose tools by them.
pub fn check_description(text: &str) -> Result<(), DescriptionProblem> {
    let n = text.chars().count();
    if text.trim().is_empty() {
        Err(DescriptionProblem::Empty)
    } else if n > MAX_DESCRIPTION {
        Err(DescriptionProblem::TooLong(n))
    } else {
        Ok(())
    }
}

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (closeness(word, c), *c))
        .filter(|(d, c)| {
            *d <= (word.chars().count() / 3).max(1) || c.starts_with(word) && word.len() >= 3
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance to `candidate` or to a prefix of it about as long as `word`, so
/// `timout` is close to `timeout_ms`.
fn closeness(word: &str, candidate: &str) -> usize {
    let n = word.chars().count();
    let prefixes =
        [n.saturating_sub(1), n, n + 1].map(|k| candidate.chars().take(k).collect::<String>());
    let prefix = prefixes
        .iter()
        .map(|p| distance(word, p))
        .min()
        .unwrap_or(usize::MAX);
    // A prefix match is weaker evidence than a whole match.
    distance(word, candidate).min(prefix + usize::from(prefix > 0))
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_is_lowercase_words_joined_by_single_underscores() {
        for ok in ["a", "seo_role_audit", "v2", "a1_b2"] {
            assert!(is_snake_case(ok), "{ok}");
        }
        for bad in ["", "A", "_a", "a_", "a__b", "1a", "a-b", "aB", "é"] {
            assert!(!is_snake_case(bad), "{bad}");
        }
    }

    #[test]
    fn capability_ids_are_domain_dot_verb() {
        for ok in [
            "database.write",
            "obsidian.read",
            "rag.ingest",
            "a.b",
            "seo_x.read_2",
        ] {
            assert!(is_capability_id(ok), "{ok}");
        }
        for bad in [
            "database",
            "database.",
            ".write",
            "a.b.c",
            "Database.write",
            "a.2b",
            "a-b.c",
            "",
        ] {
            assert!(!is_capability_id(bad), "{bad}");
        }
    }

    #[test]
    fn versions_are_semver() {
        for ok in ["1.0.0", "0.1.2-alpha.1", "1.2.3+build.5", "10.20.30"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["1.0", "01.0.0", "1.0.0-", "v1.0.0", "1.0.0-01"] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn agent_ids_are_dotted_snake_case() {
        assert!(is_agent_id("agent.seo.vlevel"));
        assert!(is_agent_id("agent.team_ops"));
        for bad in [
            "agent",
            "agent..seo",
            "Agent.seo",
            "agent.seo-x",
            ".agent",
            "agent.",
            "",
        ] {
            assert!(!is_agent_id(bad), "{bad}");
        }
    }

    #[test]
    fn misspellings_find_their_word() {
        assert_eq!(
            did_you_mean("timout_ms", &["timeout_ms", "retries"]),
            Some("timeout_ms")
        );
        assert_eq!(
            did_you_mean("vlevel_calc", &["vlevel_calculator", "echo"]),
            Some("vlevel_calculator")
        );
        assert_eq!(did_you_mean("zzz", &["echo"]), None);
    }

    #[test]
    fn tool_names_follow_mcp() {
        assert!(is_mcp_tool_name("ai_cos.seo-role_audit"));
        assert!(!is_mcp_tool_name(""));
        assert!(!is_mcp_tool_name("a b"));
        assert!(!is_mcp_tool_name(&"x".repeat(129)));
    }

    #[test]
    fn descriptions_are_short_and_not_empty() {
        assert_eq!(check_description("  "), Err(DescriptionProblem::Empty));
        assert_eq!(
            check_description(&"é".repeat(201)),
            Err(DescriptionProblem::TooLong(201))
        );
        assert_eq!(check_description(&"é".repeat(200)), Ok(()));
    }
}
