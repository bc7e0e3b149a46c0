//! A capability granted by hand, beside the manifest: `Declares` and `Calls`
//! are only ever implemented by `#[skill]`.

use skill_runtime::prelude::*;

/// Write the ledger.
#[capability(id = "ledger.write", effect = "database", operation = "write")]
pub struct LedgerWrite;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Read a line.
#[skill]
pub async fn reader(input: In) -> Out {
    Out { y: input.x }
}

/// Write a line.
#[skill(capabilities(LedgerWrite), side_effects(LedgerWrite(target = "ledger", reversible = true, description = "Appends a line")))]
pub async fn writer(input: In) -> Out {
    Out { y: input.x }
}

impl skill_runtime::capability::Declares<LedgerWrite> for reader {}
impl skill_runtime::__private_v2::Calls<writer> for reader {}

fn main() {}
