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

/// An error handler written above a step of the flow, and one that handles
/// a step written after it.
#[pipeline(
    version = "1.0.0",
    step(id = "read", skill = "summarize_text", inputs(text = "$inputs.text")),
    step(id = "fix", skill = "summarize_text", on_error("read", "write"), inputs(text = "$error.message")),
    step(id = "write", skill = "summarize_text", inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn handled(input: In) -> Out;

fn main() {}
