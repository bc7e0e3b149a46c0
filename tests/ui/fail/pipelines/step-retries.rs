use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
    pub go: bool,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// A step that would retry past the bound.
#[pipeline(
    version = "1.0.0",
    step(id = "only", skill = "summarize_text", retries = 50, inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn retried(input: In) -> Out;

fn main() {}
