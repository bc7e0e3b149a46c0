use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Read the store.
#[capability(id = "store.read", effect = "database", operation = "read")]
pub struct StoreRead;

/// Summarize.
#[pipeline(
    version = "1.0.0",
    capabilities(StoreRead),
    step(id = "sum", skill = "summarize_text", inputs(text = "$inputs.text"), outputs(summary = "$outputs.summary")),
)]
pub async fn once(input: In) -> Out;

fn main() {}
