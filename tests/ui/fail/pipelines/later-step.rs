use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Summarize twice.
#[pipeline(
    version = "1.0.0",
    step(id = "first", skill = "summarize_text", inputs(text = "$step.second.summary"), outputs(summary = "$step.first.summary")),
    step(id = "second", skill = "summarize_text", inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn twice(input: In) -> Out;

fn main() {}
