use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// What can go wrong.
#[derive(Debug, thiserror::Error, FailureModes, Serialize, JsonSchema)]
pub enum LookupError {
    /// The key is unknown.
    #[error("unknown key")]
    Unknown,
}

pub type Res<T> = Result<T, LookupError>;

/// Do the thing.
#[skill]
pub async fn lookup(input: In) -> Res<Out> {
    Ok(Out { y: input.x })
}

fn main() {}
