use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Bad.
#[capability(id = "store-read", effect = "database", operation = "read")]
pub struct StoreRead;

fn main() {}
