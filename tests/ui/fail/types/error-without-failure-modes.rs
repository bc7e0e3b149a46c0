use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

#[derive(Debug)]
pub struct Oops;

impl std::fmt::Display for Oops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("oops")
    }
}

/// Do the thing.
#[skill()]
pub async fn lookup(input: In) -> Result<Out, Oops> {
    Ok(Out { y: input.x })
}

fn main() {}
