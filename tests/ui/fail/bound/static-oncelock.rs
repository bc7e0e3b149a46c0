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

static STASH: std::sync::OnceLock<Ctx<'static, lister>> = std::sync::OnceLock::new();

/// Lists purge, and keeps its context for later.
#[skill(calls(purge))]
pub async fn lister(ctx: Ctx, input: In) -> Out {
    let _ = STASH.set(ctx.clone());
    purge(&ctx, input).await
}

fn main() {}
