//! Ops that run outside this process: a tool on an MCP client, or a script.
//! Native ops are Rust functions and run like skills.

use std::process::Stdio;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use skill_core::manifest::OpRuntime;

use crate::contract::skill::Ctx;
use crate::contract::skill::Skill;
use crate::sync::BoxFuture;

pub use crate::exec::provided::OpFailed;

fn failed(message: String) -> OpFailed {
    OpFailed::new(message)
}

/// Something that calls MCP tools: the client `runtime = "mcp"` ops use. The
/// `mcp-client` feature provides one over a child process (`McpClient`).
pub trait ToolClient: Send + Sync + 'static {
    /// Call `tool` with `arguments`; the tool's structured result, or its error
    /// text when the tool (or the transport) failed.
    fn call_tool<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, String>>;
}

/// The MCP client of a runtime, registered as a resource:
/// `Resources::new().with(McpTools::new(client))`.
#[derive(Clone)]
pub struct McpTools {
    client: Arc<dyn ToolClient>,
}

impl McpTools {
    /// Ops call tools on `client`.
    pub fn new(client: impl ToolClient) -> Self {
        McpTools {
            client: Arc::new(client),
        }
    }
}

/// Where script ops' commands are resolved, registered as a resource:
/// `Resources::new().with(ScriptRoot::new(dir)?)`. A script op runs in this
/// directory, and a program or argument written as a relative path names a
/// file under it; without a root, script ops refuse to run rather than
/// resolve their command against whatever the current directory is.
#[derive(Clone, Debug)]
pub struct ScriptRoot(std::path::PathBuf);

impl ScriptRoot {
    /// `dir`, resolved once (it must exist): the root stays the same whatever
    /// the process's current directory becomes.
    pub fn new(dir: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let dir = dir.as_ref();
        let resolved = std::fs::canonicalize(dir).map_err(|e| {
            std::io::Error::new(e.kind(), format!("script root {}: {e}", dir.display()))
        })?;
        Ok(ScriptRoot(resolved))
    }

    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

/// The handler `#[op]` generates for an op without a body.
pub async fn run<S: Skill>(ctx: Ctx<'_, S>, input: S::Input) -> Result<S::Output, OpFailed>
where
    S::Input: Serialize,
    S::Output: DeserializeOwned,
{
    let m = S::MANIFEST;
    let input = serde_json::to_value(&input)
        .map_err(|e| failed(format!("the op's input does not serialize: {e}")))?;
    let output = match m.op {
        Some(OpRuntime::Mcp { tool }) => {
            let Some(tools) = ctx.invocation().resources.get::<McpTools>() else {
                return Err(failed(format!(
                    "op `{}` calls MCP tool `{tool}`, but no MCP client is configured; register one with `Resources::new().with(McpTools::new(client))`",
                    m.name
                )));
            };
            tools
                .client
                .call_tool(tool, input)
                .await
                .map_err(|e| failed(format!("MCP tool `{tool}` failed: {e}")))?
        }
        Some(OpRuntime::Script { command }) => {
            let Some(root) = ctx.invocation().resources.get::<ScriptRoot>() else {
                return Err(failed(format!(
                    "op `{}` runs the script `{command}`, but no script root is configured; register one with `Resources::new().with(ScriptRoot::new(dir)?)` (a command is never resolved against the current directory)",
                    m.name
                )));
            };
            script(command, root.path(), &input).await?
        }
        Some(OpRuntime::Http { url }) => http(url, &input).await?,
        Some(OpRuntime::Native) | None => {
            return Err(failed(format!("op `{}` has no external runtime", m.name)));
        }
    };
    serde_json::from_value(output).map_err(|e| {
        failed(format!(
            "the op's result does not decode as `{}`'s output: {e}",
            m.name
        ))
    })
}

/// Run `command` (program and arguments, split on spaces) in `root`, with
/// `input` as JSON on stdin; its stdout is the output. A program written as a
/// relative path (`./count.sh`, `bin/count`) is taken under `root`; a bare
/// name (`python3`) is looked up on `PATH`.
async fn script(command: &str, root: &std::path::Path, input: &Value) -> Result<Value, OpFailed> {
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return Err(failed("the script op's command is empty".to_owned()));
    };
    let program = if program.contains('/') {
        root.join(program)
    } else {
        std::path::PathBuf::from(program)
    };
    let mut child = tokio::process::Command::new(program)
        .args(words)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| failed(format!("cannot start `{command}`: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        let bytes = serde_json::to_vec(input).unwrap_or_default();
        stdin
            .write_all(&bytes)
            .await
            .map_err(|e| failed(format!("cannot write the input to `{command}`: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| failed(format!("`{command}` did not finish: {e}")))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(failed(format!(
            "`{command}` exited with {}: {}",
            out.status,
            stderr.trim()
        )));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        failed(format!(
            "`{command}` did not print one JSON value on stdout: {e}"
        ))
    })
}

/// POST `input` as JSON to `url`; the JSON body of a 2xx answer is the output.
#[cfg(feature = "http-ops")]
async fn http(url: &str, input: &Value) -> Result<Value, OpFailed> {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};

    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| failed(format!("`{url}` is not a URL: {e}")))?;
    if uri.scheme_str() != Some("http") {
        return Err(failed(format!(
            "`{url}`: HTTP ops speak plain http:// (this runtime links no TLS); reach https endpoints through a native op with an HTTP capability"
        )));
    }
    let (Some(host), Some(authority)) = (uri.host(), uri.authority()) else {
        return Err(failed(format!("`{url}` has no host")));
    };
    let port = uri.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| failed(format!("cannot connect to `{url}`: {e}")))?;
    // The request's head and body go out at once, not a delayed ACK apart.
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| failed(format!("`{url}`: HTTP handshake failed: {e}")))?;
    let connection = tokio::spawn(conn);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let body = serde_json::to_vec(input).unwrap_or_default();
    let request = hyper::Request::post(path)
        .header(HOST, authority.as_str())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| failed(format!("`{url}`: {e}")))?;
    let answer = async {
        let response = sender.send_request(request).await?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        Ok::<_, hyper::Error>((status, bytes))
    }
    .await;
    connection.abort();
    let (status, bytes) = answer.map_err(|e| failed(format!("`{url}`: {e}")))?;
    if !status.is_success() {
        return Err(failed(format!(
            "`{url}` answered {status}: {}",
            String::from_utf8_lossy(&bytes).trim()
        )));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| failed(format!("`{url}` did not answer with JSON: {e}")))
}

#[cfg(not(feature = "http-ops"))]
async fn http(url: &str, _input: &Value) -> Result<Value, OpFailed> {
    Err(failed(format!(
        "`{url}`: this build of skill-runtime calls no HTTP endpoints; enable its `http-ops` feature"
    )))
}

/// An MCP client over a child process's stdio, on the official SDK.
#[cfg(feature = "mcp-client")]
pub struct McpClient {
    service: rmcp::service::RunningService<rmcp::RoleClient, ()>,
}

#[cfg(feature = "mcp-client")]
impl McpClient {
    /// Start `command` and complete the MCP handshake with it.
    pub async fn spawn(command: tokio::process::Command) -> Result<McpClient, String> {
        use rmcp::ServiceExt;
        let transport = rmcp::transport::TokioChildProcess::new(command)
            .map_err(|e| format!("cannot start the MCP server: {e}"))?;
        let service = ().serve(transport).await.map_err(|e| format!("MCP handshake failed: {e}"))?;
        Ok(McpClient { service })
    }
}

#[cfg(feature = "mcp-client")]
impl ToolClient for McpClient {
    fn call_tool<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            let mut params = rmcp::model::CallToolRequestParams::new(tool.to_owned());
            if let Value::Object(map) = arguments {
                params = params.with_arguments(map);
            }
            let result = self
                .service
                .call_tool(params)
                .await
                .map_err(|e| e.to_string())?;
            let text: Vec<String> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect();
            if result.is_error == Some(true) {
                return Err(text.join("\n"));
            }
            match result.structured_content {
                Some(v) => Ok(v),
                None => serde_json::from_str(&text.join("")).map_err(|e| {
                    format!("the tool returned neither structured content nor JSON text: {e}")
                }),
            }
        })
    }
}
