//! Generated code uses absolute paths only: shadowing prelude names breaks nothing.
#![allow(dead_code, non_camel_case_types)]

use skill_runtime::prelude::*;

struct Result;
struct Ok;
struct Err;
struct Option;
struct Some;
struct None;
struct Box;
struct Vec;
struct String;
struct Send;
struct Future;
mod serde {}
mod inventory {}
mod skill_macros {}
// `schemars` is not shadowed: its own derive refers to `schemars::` by name.

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: u32,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: u32,
}

/// Add one.
#[skill(version = "1.0.0", precondition(code = "SMALL", message = "x < 100", check = |i: &In| i.x < 100))]
pub async fn add_one(input: In) -> Out {
    Out { y: input.x + 1 }
}

fn main() {}
