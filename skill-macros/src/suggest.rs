//! "Did you mean" suggestions for misspelled keys.

use skill_core::names::did_you_mean;

/// The suffix of an "unknown key" message: `; did you mean `x`?` or the list.
pub fn hint(word: &str, candidates: &[&str]) -> String {
    match did_you_mean(word, candidates) {
        Some(c) => format!("; did you mean `{c}`?"),
        None => format!("; expected one of: {}", candidates.join(", ")),
    }
}
