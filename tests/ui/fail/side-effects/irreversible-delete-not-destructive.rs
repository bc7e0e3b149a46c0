use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Read the store.
#[capability(id = "store.read", effect = "database", operation = "read")]
pub struct StoreRead;

/// Write the store.
#[capability(id = "store.write", effect = "database", operation = "write")]
pub struct StoreWrite;

/// Delete from the store.
#[capability(id = "store.delete", effect = "database", operation = "delete")]
pub struct StoreDelete;

/// Do the thing.
#[skill(capabilities(StoreDelete), side_effects(StoreDelete(target = "t", reversible = false)))]
pub async fn lookup(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
