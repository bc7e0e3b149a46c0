use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Do the thing.
#[skill]
pub async fn lookup(input: impl Into<String>) -> Out {
    Out { y: input.into() }
}

fn main() {}
