use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Purge something (the skill the others must not reach).
#[skill]
pub async fn purge(input: In) -> Out {
    Out { y: input.x }
}

/// Lists purge, and leaks its context to make it last.
#[skill(calls(purge))]
pub async fn lister(ctx: Ctx, input: In) -> Out {
    let forever: &'static Ctx<'static, lister> = Box::leak(Box::new(ctx.clone()));
    purge(forever, input).await
}

fn main() {}
