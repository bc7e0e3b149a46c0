//! Under `#![forbid(unsafe_code)]` not even an `unsafe impl` grants a
//! capability; the macro's own implementations are exempt.
#![forbid(unsafe_code)]

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

/// Write a line.
#[skill(capabilities(LedgerWrite), side_effects(LedgerWrite(target = "ledger", reversible = true, description = "Appends a line")))]
pub async fn writer(input: In) -> Out {
    Out { y: input.x }
}

/// Read a line.
#[skill(calls(writer), capabilities(LedgerWrite), side_effects(LedgerWrite(target = "ledger", reversible = true, description = "Appends a line")))]
pub async fn reader(input: In) -> Out {
    Out { y: input.x }
}

/// Sneak.
#[skill]
pub async fn sneak(input: In) -> Out {
    Out { y: input.x }
}

unsafe impl skill_runtime::capability::Declares<LedgerWrite> for sneak {}

fn main() {}
