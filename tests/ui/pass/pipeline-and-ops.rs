use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Summarize here.
#[skill(version = "1.0.0")]
pub async fn summarize(input: In) -> Out {
    Out { summary: input.text }
}

/// Run a script.
#[capability(id = "process.script", effect = "process", operation = "execute")]
pub struct ScriptRun;

/// Summarize with a script.
#[op(
    version = "1.0.0",
    runtime = "script",
    command = "python3 summarize.py",
    capabilities(ScriptRun),
    side_effects(ScriptRun(target = "summarize.py", reversible = true, description = "Runs the script")),
)]
pub async fn summarize_script(input: In) -> Out;

/// A native op.
#[op(version = "1.0.0")]
pub async fn native(input: In) -> Out {
    Out { summary: input.text }
}

/// Summarize, then summarize the summary with the script.
#[pipeline(
    version = "1.0.0",
    step(id = "local", skill = "summarize@1.0.0", inputs(text = "$inputs.text"), outputs(summary = "$step.local.summary")),
    step(id = "remote", op = "summarize_script", inputs(text = "$step.local.summary"), outputs(summary = "$outputs.summary")),
)]
pub async fn summarize_twice(input: In) -> Out;

fn main() {
    let registry = skill_runtime::Registry::from_inventory().expect("valid registry");
    let p = registry.get("summarize_twice").expect("the pipeline is a skill");
    assert_eq!(p.entry.manifest.steps.len(), 2);
    let ops = registry.ops_json();
    assert_eq!(ops["ops"].as_array().unwrap().len(), 2);
}
