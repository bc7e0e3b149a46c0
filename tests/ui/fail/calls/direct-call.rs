//! One skill awaiting another's function directly, as a plain `async fn`,
//! without listing it in `calls(...)`: it would get the callee's effects
//! with neither the call edge nor a covering capability.

use skill_runtime::prelude::*;

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct In {
    pub path: String,
}

/// Remove a scratch file.
#[skill(ambient(file_write = "removes its own scratch file"))]
pub async fn purge(input: In) -> In {
    let _ = std::fs::remove_file(&input.path);
    input
}

/// Looks harmless.
#[skill]
pub async fn tidy(ctx: Ctx, input: In) -> In {
    let again = purge(&ctx, input).await;
    let later = crate::purge(&ctx, again);
    later.await
}

fn main() {}
