use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Waits for a step written below it, and for one that does not exist.
#[pipeline(
    version = "1.0.0",
    step(id = "first", skill = "summarize_text", after("second"), inputs(text = "$inputs.text")),
    step(id = "second", skill = "summarize_text", after("zeroth"), inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn twice(input: In) -> Out;

fn main() {}
