use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Summarize remotely.
#[op(version = "1.0.0", runtime = "mcp")]
pub async fn remote(input: In) -> Out;

fn main() {}
