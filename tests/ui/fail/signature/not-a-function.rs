use skill_runtime::prelude::*;

/// Do the thing.
#[skill]
pub struct Lookup {
    pub x: String,
}

fn main() {}
