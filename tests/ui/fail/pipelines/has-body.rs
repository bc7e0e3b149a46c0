use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Summarize.
#[pipeline(
    version = "1.0.0",
    step(id = "sum", skill = "summarize_text", inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn once(input: In) -> Out {
    Out { summary: input.text }
}

fn main() {}
