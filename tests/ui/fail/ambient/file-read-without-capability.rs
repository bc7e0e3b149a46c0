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
#[skill()]
pub async fn lookup(input: In) -> Out {
    let y = std::fs::read_to_string(&input.x).unwrap_or_default();
    Out { y }
}

fn main() {}
