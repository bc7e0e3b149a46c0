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
    let _ = std::os::unix::net::UnixStream::connect(&input.x);
    Out { y: input.x }
}

fn main() {}
