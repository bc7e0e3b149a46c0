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
pub async fn lookup(ctx: Ctx, other: Ctx, input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
