//! "Did you mean" suggestions for misspelled keys.

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (closeness(word, c), *c))
        .filter(|(d, c)| {
            *d <= (c.len().max(word.len()) / 3).max(1) || c.starts_with(word) && word.len() >= 3
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The suffix of an "unknown key" message: `; did you mean `x`?` or the list.
pub fn hint(word: &str, candidates: &[&str]) -> String {
    match did_you_mean(word, candidates) {
        Some(c) => format!("; did you mean `{c}`?"),
        None => format!("; expected one of: {}", candidates.join(", ")),
    }
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
