//! An application context taken inside a body from a runtime built there.

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
    let registry = std::sync::Arc::new(skill_runtime::Registry::from_inventory().unwrap());
    let rt = skill_runtime::Runtime::builder(registry).build().unwrap();
    purge(&rt.context(), input).await
}

fn main() {}
