//! Execution values past their bounds: a timeout past 30 days, retries past
//! ten, a zero timeout.

use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Wait a very long time.
#[skill(timeout_ms = 18446744073709551, retries = 1000000000)]
pub async fn patient(input: In) -> Out {
    Out { y: input.x }
}

/// Never get a chance.
#[skill(timeout_ms = 0)]
pub async fn hasty(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
