//! A file opened to read, then changed through the value held.

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
    use std::fs::File;
    if let Ok(f) = File::open(&input.path) {
        let _ = f.set_permissions(std::fs::Permissions::from(std::os::unix::fs::PermissionsExt::from_mode(0o600)));
    }
    let _ = ctx;
    input
}

fn main() {}
