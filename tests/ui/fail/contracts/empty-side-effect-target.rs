//! A side effect whose target is empty.

use skill_runtime::prelude::*;

/// Write the store.
#[capability(id = "store.write", effect = "database", operation = "write")]
pub struct StoreWrite;

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct In {
    pub key: String,
}

/// Write a key.
#[skill(capabilities(StoreWrite), side_effects(StoreWrite(target = "", reversible = true)))]
pub async fn put(input: In) -> In {
    input
}

fn main() {}
