//! Write options set on a parenthesised receiver.

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
    let _ = (std::fs::OpenOptions::new().read(true)).write(true).open(&input.path);
    let _ = ctx;
    input
}

fn main() {}
