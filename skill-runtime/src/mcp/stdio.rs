//! The stdio transport: one JSON-RPC message per line, as rmcp's own, except
//! that no frame goes unanswered. A line that is not JSON, or too long, is
//! answered with a parse error (-32700, `id` null: no id can be read from it);
//! a request for a known method whose params do not fit is answered -32602
//! here, where rmcp would take it for an unknown method. Notifications that do
//! not parse are ignored, as the spec and rmcp do.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ClientRequest;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Stdin, Stdout};
use tokio::sync::Mutex;

/// The longest line read as a frame; a longer one is answered and skipped.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// The client requests of MCP: one of these with params that do not parse is
/// a bad request (-32602), not an unknown method.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

pub(crate) struct StdioFront {
    input: BufReader<Stdin>,
    output: Arc<Mutex<Stdout>>,
    line: Vec<u8>,
}

impl StdioFront {
    pub(crate) fn new() -> Self {
        StdioFront {
            input: BufReader::new(tokio::io::stdin()),
            output: Arc::new(Mutex::new(tokio::io::stdout())),
            line: Vec::new(),
        }
    }

    /// Read one line, at most [`MAX_FRAME_BYTES`]: `None` at the end of
    /// input, `Some(false)` for a line that was longer (its rest skipped).
    async fn read_line(&mut self) -> Option<bool> {
        self.line.clear();
        let mut fits = true;
        loop {
            let available = match self.input.fill_buf().await {
                Ok([]) | Err(_) => return (!self.line.is_empty() || !fits).then_some(fits),
                Ok(bytes) => bytes,
            };
            let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if fits && self.line.len() + chunk.len() <= MAX_FRAME_BYTES {
                self.line.extend_from_slice(chunk);
            } else {
                fits = false;
                self.line.clear();
            }
            let used = done.unwrap_or(available.len());
            self.input.consume(used);
            if done.is_some() {
                return Some(fits);
            }
        }
    }

    async fn reply(&self, reply: Value) {
        let mut line = reply.to_string().into_bytes();
        line.push(b'\n');
        let mut out = self.output.lock().await;
        let _ = out.write_all(&line).await;
        let _ = out.flush().await;
    }
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl Transport<RoleServer> for StdioFront {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut out = output.lock().await;
            out.write_all(&line).await?;
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.read_line().await? {
                let message =
                    format!("Parse error: a frame is longer than {MAX_FRAME_BYTES} bytes");
                self.reply(error(Value::Null, -32700, message)).await;
                continue;
            }
            let mut line = self.line.as_slice();
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
                Ok(rmcp::model::JsonRpcMessage::Request(r)) if matches!(&r.request, ClientRequest::CustomRequest(c) if KNOWN_METHODS.contains(&c.method.as_str())) =>
                {
                    let ClientRequest::CustomRequest(c) = &r.request else {
                        unreachable!("matched above")
                    };
                    let id = serde_json::to_value(&r.id).unwrap_or(Value::Null);
                    let message = format!(
                        "Invalid params: the params of `{}` do not match its schema",
                        c.method
                    );
                    self.reply(error(id, -32602, message)).await;
                }
                Ok(message) => return Some(message),
                Err(e) => {
                    // A well-formed object without an id is a notification:
                    // ignored. Anything else gets an error, with its id when
                    // one can be read.
                    let value = serde_json::from_slice::<Value>(line).ok();
                    match value.as_ref().map(|v| v.get("id")) {
                        Some(None) => continue,
                        Some(Some(id)) => {
                            let message = format!("Invalid request: {e}");
                            self.reply(error(id.clone(), -32600, message)).await;
                        }
                        None => {
                            let message = format!("Parse error: {e}");
                            self.reply(error(Value::Null, -32700, message)).await;
                        }
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}
