//! Ambient uses covered by a capability, or allowed with a reason.

use skill_runtime::prelude::*;

/// Read and write the scratch folder.
#[capability(id = "scratch.write", effect = "file", operation = "write")]
pub struct ScratchWrite;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub path: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub bytes: u64,
}

/// Copy a file into the scratch folder.
#[skill(
    capabilities(ScratchWrite),
    side_effects(ScratchWrite(target = "scratch/", reversible = true)),
    ambient(process = "reads the process id only, to name the copy"),
)]
pub async fn stash(input: In) -> Out {
    let data = std::fs::read(&input.path).unwrap_or_default();
    let copy = format!("scratch-{}", std::process::id());
    let _ = std::fs::write(&copy, &data);
    Out { bytes: data.len() as u64 }
}

fn main() {
    use skill_runtime::Skill;
    let allowed = <stash as Skill>::MANIFEST.ambient_allowances;
    assert_eq!(allowed[0].kind, "process");
    assert_eq!(allowed[0].reason, "reads the process id only, to name the copy");
}
