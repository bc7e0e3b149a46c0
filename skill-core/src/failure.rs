//! Failure modes: the expected error codes of a skill, derived from its error type.

use std::fmt;

/// One expected failure, as exported in `failure_modes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailureMode {
    /// snake_case.
    pub code: &'static str,
    /// What the failure means, for callers and registries.
    pub description: &'static str,
    /// Whether running the job again may succeed (the runtime retries it).
    pub retryable: bool,
}

/// Implemented by `#[derive(FailureModes)]` on a skill's error enum: each variant is
/// one failure mode, its code the variant name in snake_case (or
/// `#[failure(code = "...")]`), its description the variant's doc comment, and it is
/// retryable when marked `#[failure(retryable)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a skill's error type: it does not list its failure modes",
    label = "this error type has no failure modes",
    note = "add `#[derive(FailureModes)]` to `{Self}` and document each variant"
)]
pub trait FailureModes {
    /// Every failure mode of the type, in declaration order.
    const FAILURE_MODES: &'static [FailureMode];

    /// The failure mode of this value.
    fn failure_mode(&self) -> &'static FailureMode;
}

/// The error type of a skill that cannot fail (its function returns a plain value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Never {}

impl fmt::Display for Never {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

impl std::error::Error for Never {}

impl FailureModes for Never {
    const FAILURE_MODES: &'static [FailureMode] = &[];

    fn failure_mode(&self) -> &'static FailureMode {
        match *self {}
    }
}

/// `Result<Out, Infallible>`: a skill that cannot fail, written the std way.
impl FailureModes for std::convert::Infallible {
    const FAILURE_MODES: &'static [FailureMode] = &[];

    fn failure_mode(&self) -> &'static FailureMode {
        match *self {}
    }
}
