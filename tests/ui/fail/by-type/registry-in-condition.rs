//! A registry built in a precondition's closure.

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
#[skill(precondition(code = "X", message = "x", check = |i: &In| skill_runtime::Registry::from_inventory().is_ok() && !i.path.is_empty()))]
pub async fn tidy(ctx: Ctx, input: In) -> In {
    let _ = ctx;
    input
}

fn main() {}
