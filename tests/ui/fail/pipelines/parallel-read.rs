use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Two steps at the same time, one reading the other's output.
#[pipeline(
    version = "1.0.0",
    step(id = "start", skill = "summarize_text", inputs(text = "$inputs.text")),
    step(id = "left", skill = "summarize_text", after("start"), inputs(text = "$step.start.summary")),
    step(id = "right", skill = "summarize_text", after("start"), inputs(text = "$step.left.summary"), outputs(summary = "$outputs.summary")),
)]
pub async fn fanned(input: In) -> Out;

fn main() {}
