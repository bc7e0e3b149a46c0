use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub summary: String,
}

/// Read a file (it covers neither a process nor a request).
#[capability(id = "files.read", effect = "file", operation = "read")]
pub struct FilesRead;

// An op's kind is the authority it exercises: every skill that lists the op
// would otherwise run a process or make a request with nothing declared.

/// Clean up with a script.
#[op(version = "1.0.0", runtime = "script", command = "sh cleanup.sh")]
pub async fn cleanup(input: In) -> Out;

/// Post the text.
#[op(version = "1.0.0", runtime = "http", url = "http://127.0.0.1:9/post", capabilities(FilesRead))]
pub async fn post(input: In) -> Out;

/// Summarize remotely.
#[op(version = "1.0.0", runtime = "mcp", tool = "summarize_text")]
pub async fn remote(input: In) -> Out;

fn main() {}
