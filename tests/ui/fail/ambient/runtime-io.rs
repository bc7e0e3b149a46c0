use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: bool,
}

// The runtime's own I/O needs what `std::fs` would: its functions are not
// trusted for being the runtime's.
/// Keep a line.
#[skill()]
pub async fn keep(input: In) -> Out {
    let y = skill_runtime::record::JsonLinesSink::append(input.x.as_ref()).is_ok();
    Out { y }
}

fn main() {}
