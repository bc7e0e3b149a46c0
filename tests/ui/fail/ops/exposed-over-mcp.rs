use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Summarize here.
#[op(version = "1.0.0", mcp)]
pub async fn local(input: In) -> Out {
    Out { summary: input.text }
}

fn main() {}
