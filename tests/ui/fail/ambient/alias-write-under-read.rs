use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Read files.
#[capability(id = "files.read", effect = "file", operation = "read")]
pub struct FilesRead;

/// Do the thing.
#[skill(capabilities(FilesRead))]
pub async fn lookup(input: In) -> Out {
    use std::fs as f;
    let _ = f::write(&input.x, "data");
    Out { y: input.x }
}

fn main() {}
