//! A pipeline whose steps do not fit its targets compiles (the macro cannot see
//! other skills' schemas) but the registry refuses to build, naming the pipeline,
//! where it is defined, and each mistake.

use seed_skills as _;
use skill_runtime::Registry;
use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct CountIn {
    pub count: u32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct SummaryOut {
    pub summary: String,
    pub words: u32,
}

/// Summarize a number, which is not text.
#[pipeline(
    version = "1.0.0",
    step(
        id = "sum",
        skill = "summarize_text",
        inputs(text = "$inputs.count"),
        outputs(summary = "$outputs.summary")
    )
)]
pub async fn mistyped(input: CountIn) -> SummaryOut;

#[test]
fn the_registry_names_every_mistake_of_the_pipeline() {
    let e = Registry::from_inventory().expect_err("the pipeline does not fit its target");
    let text = e.to_string();
    let mine: Vec<&str> = text.lines().filter(|l| l.contains("mistyped")).collect();
    assert!(
        mine.iter().all(|l| l.contains("tests/pipeline_build.rs")),
        "each problem says where the pipeline is: {text}"
    );
    for expected in [
        "`$inputs.count` is integer but input `text` of `summarize_text@1.0.0` takes string",
        "required output `words` is written by no step",
    ] {
        assert!(
            mine.iter().any(|l| l.contains(expected)),
            "{expected}: {text}"
        );
    }
    assert_eq!(mine.len(), 2, "one line per mistake: {text}");
}
