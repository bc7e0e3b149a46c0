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

/// Lists purge, and hands its context to a thread.
#[skill(calls(purge))]
pub async fn lister(ctx: Ctx, input: In) -> Out {
    let kept = ctx.clone();
    std::thread::spawn(move || drop(kept));
    purge(&ctx, input).await
}

fn main() {}
