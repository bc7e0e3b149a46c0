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

/// A branch on a step that may run at the same time as the guarded one.
#[pipeline(
    version = "1.0.0",
    step(id = "start", skill = "summarize_text", inputs(text = "$inputs.text")),
    step(id = "left", skill = "summarize_text", after("start"), inputs(text = "$step.start.summary")),
    step(id = "right", skill = "summarize_text", after("start"), when = "$step.left.done", inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn branched(input: In) -> Out;

fn main() {}
