use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Do the thing.
#[skill]
pub async fn lookup(input: Vec<In>) -> Out {
    Out { y: input[0].x.clone() }
}

fn main() {}
