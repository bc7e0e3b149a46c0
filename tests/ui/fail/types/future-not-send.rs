use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

async fn pause() {}

/// Holds an Rc across an await.
#[skill]
pub async fn lookup(input: In) -> Out {
    let shared = std::rc::Rc::new(input.x);
    pause().await;
    Out { y: (*shared).clone() }
}

fn main() {}
