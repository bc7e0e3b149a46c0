use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

pub struct Service;

impl Service {
    /// Do the thing.
    #[skill]
    pub async fn lookup(&self, input: In) -> Out {
        Out { y: input.x }
    }
}

fn main() {}
