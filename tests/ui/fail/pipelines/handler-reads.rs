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

/// An error handler that reads a step which may not have run when the
/// step it handles fails, and writes an output; and a step of the flow
/// that reads `$error` and waits for the handler.
#[pipeline(
    version = "1.0.0",
    step(id = "start", skill = "summarize_text", inputs(text = "$inputs.text")),
    step(id = "left", skill = "summarize_text", after("start"), inputs(text = "$error.message")),
    step(id = "right", skill = "summarize_text", after("start"), inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
    step(id = "fix", skill = "summarize_text", on_error("right"), inputs(text = "$step.left.summary"), outputs(summary = "$outputs.summary")),
    step(id = "undo", skill = "summarize_text", on_error("fix"), after("start"), inputs(text = "$error.cause")),
)]
pub async fn handled(input: In) -> Out;

fn main() {}
