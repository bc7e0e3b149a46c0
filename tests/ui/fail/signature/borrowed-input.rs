use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Borrowed<'a> {
    pub x: &'a str,
}

/// Do the thing.
#[skill]
pub async fn lookup(input: Borrowed<'static>) -> Out {
    Out { y: input.x.to_owned() }
}

fn main() {}
