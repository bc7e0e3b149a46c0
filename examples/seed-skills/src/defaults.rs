//! Defaults of input fields (`#[serde(default = "...")]`) shared by skills.

/// The default of the `dry_run` fields that default to a dry run.
pub(crate) fn yes() -> bool {
    true
}
