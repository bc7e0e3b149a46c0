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
#[skill(domain = "marketing")]
pub async fn lookup(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
