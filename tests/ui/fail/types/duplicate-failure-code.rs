use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum LookupError {
    /// The key is missing.
    #[error("missing")]
    #[failure(code = "not_found")]
    Missing,
    /// The key was never there.
    #[error("gone")]
    NotFound,
}

/// Do the thing.
#[skill]
pub async fn lookup(input: In) -> Result<Out, LookupError> {
    Ok(Out { y: input.x })
}

fn main() {}
