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
#[skill()]
pub async fn lookup(ctx: Ctx, input: In) -> Out {
    ctx.call::<other>(In { x: input.x }).await
}

/// Another.
#[skill]
pub async fn other(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
