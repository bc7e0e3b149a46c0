use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

fn not_empty(i: &Out) -> bool {
    !i.y.is_empty()
}

/// Do the thing.
#[skill(precondition(code = "EMPTY", message = "x must not be empty", check = not_empty))]
pub async fn lookup(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
