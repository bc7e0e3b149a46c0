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

static STASH: std::sync::Mutex<Vec<Ctx<'static, lister>>> = std::sync::Mutex::new(Vec::new());

/// A helper that keeps what it is given.
fn keep<'a>(ctx: &Ctx<'a, lister>) {
    STASH.lock().unwrap().push(ctx.clone());
}

/// Lists purge, and hands its context to a helper that keeps it.
#[skill(calls(purge))]
pub async fn lister(ctx: Ctx, input: In) -> Out {
    keep(&ctx);
    purge(&ctx, input).await
}

fn main() {}
