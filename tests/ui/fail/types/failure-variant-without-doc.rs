use skill_runtime::prelude::*;

#[derive(Debug, FailureModes)]
pub enum LookupError {
    /// The key is not there.
    NotFound,
    Timeout,
}

fn main() {}
