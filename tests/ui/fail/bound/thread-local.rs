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

thread_local! {
    static KEPT: std::cell::RefCell<Option<Ctx<'static, lister>>> = const { std::cell::RefCell::new(None) };
}

/// Lists purge, and keeps its context in a thread-local.
#[skill(calls(purge))]
pub async fn lister(ctx: Ctx, input: In) -> Out {
    KEPT.with(|k| *k.borrow_mut() = Some(ctx.clone()));
    purge(&ctx, input).await
}

fn main() {}
