//! A callee with a side effect the caller declares as a capability and does
//! not list (a read capability listed as a side effect by the callee).

use skill_runtime::prelude::*;

/// Read the store.
#[capability(id = "store.read", effect = "database", operation = "read")]
pub struct StoreRead;

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct In {
    pub key: String,
}

/// Read and say so.
#[skill(capabilities(StoreRead), side_effects(StoreRead(target = "store", reversible = true)))]
pub async fn reader(input: In) -> In {
    input
}

/// Reads too, and lists nothing.
#[skill(capabilities(StoreRead), calls(reader))]
pub async fn caller(ctx: Ctx, input: In) -> In {
    reader(&ctx, input).await
}

fn main() {}
