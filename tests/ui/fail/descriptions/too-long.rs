use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Looks things up in the store and returns them, Looks things up in the store and returns them, Looks things up in the store and returns them, Looks things up in the store and returns them, Looks things up in the store and returns them, 
#[skill(version = "1.0.0")]
pub async fn lookup(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
