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

/// Lists purge, and runs it in a task that may outlive the call.
#[skill(calls(purge))]
pub async fn lister(ctx: Ctx, input: In) -> Out {
    let later = ctx.clone();
    let handle = tokio::spawn(async move { purge(&later, input).await });
    handle.await.unwrap()
}

fn main() {}
