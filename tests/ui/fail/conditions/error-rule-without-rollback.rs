use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Write the store.
#[capability(id = "store.write", effect = "database", operation = "write")]
pub struct StoreWrite;

/// Write the thing, then check it.
#[skill(
    capabilities(StoreWrite),
    side_effects(StoreWrite(target = "things", reversible = true)),
    validation_rule(id = "short", severity = "error", message = "too long", check = |o: &Out| o.y.len() < 10),
)]
pub async fn write_thing(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
