//! An unlisted skill called in a helper given the context.

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

async fn helper(ctx: &Ctx<tidy>, input: In) -> In {
    purge(ctx, input).await
}

/// Looks harmless.
#[skill]
pub async fn tidy(ctx: Ctx, input: In) -> In {
    helper(&ctx, input).await
}

fn main() {}
