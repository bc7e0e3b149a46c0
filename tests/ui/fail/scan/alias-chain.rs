//! An alias of an alias of `std::fs::write`.

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
    use std::fs as files;
    use files::write as save;
    let _ = save(&input.path, b"x");
    let _ = ctx;
    input
}

fn main() {}
