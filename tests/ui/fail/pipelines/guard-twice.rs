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

/// Two guards on one step.
#[pipeline(
    version = "1.0.0",
    step(id = "only", skill = "summarize_text", when = "$inputs.go", unless = "$inputs.go", inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn guarded(input: In) -> Out;

fn main() {}
