use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}
fn both(i: &Out, o: &In) -> bool {
    i.y == o.x
}

/// Do the thing.
#[skill(validation_rule(id = "same", severity = "error", message = "same", check = both))]
pub async fn lookup(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
