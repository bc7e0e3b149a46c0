//! `tokio::join!` of an unlisted skill and a plain future.

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
    let (a, _) = tokio::join!(purge(&ctx, input), async { 1 });
    a
}

fn main() {}
