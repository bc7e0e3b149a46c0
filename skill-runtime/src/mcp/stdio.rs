//! The stdio transport: one JSON-RPC message per line, as rmcp's own, except
//! that no frame goes unanswered. A line that is not JSON, or too long, is
//! answered with a parse error (-32700, `id` null: no id can be read from it);
//! a request for a known method whose params do not fit is answered -32602
//! here, where rmcp would take it for an unknown method. Notifications that do
//! not parse are ignored, as the spec and rmcp do. A client on 2025-11-25,
//! on a server that runs tasks, gets them in that revision's form
//! (`tasks_2025.rs`): its task requests answered here, rmcp's answers
//! reshaped on their way out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, GetExtensions};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::{StdioReader, StdioWriter, Transport, stdio_pipes};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::mcp::server::McpServer;
use crate::mcp::tasks::TaskAsked;
use crate::mcp::tasks_2025::{self, Said};

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

impl McpServer {
    /// Serve over standard input and output until the client closes them.
    /// Every frame gets an answer: a line that is not JSON, or over
    /// 16 MiB, a parse error (-32700); a known method with params that do not
    /// fit, -32602.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let front = StdioFront::new(&self);
        let running = rmcp::ServiceExt::serve(self, front).await?;
        running.waiting().await?;
        Ok(())
    }
}

pub(crate) struct StdioFront {
    input: BufReader<StdioReader>,
    output: Arc<Mutex<StdioWriter>>,
    /// The line being read. It survives a cancelled `receive` (rmcp polls it
    /// in a `select!` and drops it when a response is ready to send), so a
    /// partial line is resumed, never lost; it is cleared once handled.
    line: Vec<u8>,
    /// Whether the line being read is over the limit (its bytes are dropped).
    oversized: bool,
    /// The server, when it runs tasks: a client on 2025-11-25 gets them in
    /// that revision's form.
    tasks_2025: Option<McpServer>,
    /// Whether the client negotiated 2025-11-25 (set as `initialize` is
    /// answered).
    on_2025: Arc<AtomicBool>,
}

impl StdioFront {
    /// Over rmcp's stdio pipes: non-blocking FIFOs through tokio's IO driver
    /// where standard input and output are pipes (not the blocking thread
    /// pool, a task per read and per write).
    pub(crate) fn new(server: &McpServer) -> Self {
        let (input, output) = stdio_pipes();
        StdioFront {
            input: BufReader::new(input),
            output: Arc::new(Mutex::new(output)),
            line: Vec::new(),
            oversized: false,
            tasks_2025: server.offers_tasks_2025().then(|| server.clone()),
            on_2025: Arc::default(),
        }
    }

    /// What the line read says of tasks in 2025-11-25's form, for a client
    /// on that revision: a call asking for a task is marked for the handler;
    /// a task request is answered here, in a task of its own (a
    /// `tasks/result` waits for its job), and `true` returned.
    fn tasks_2025(&self, message: &mut RxJsonRpcMessage<RoleServer>) -> bool {
        let Some(server) = &self.tasks_2025 else {
            return false;
        };
        if !self.on_2025.load(Ordering::Relaxed) {
            return false;
        }
        // Only these can say anything of tasks.
        let rmcp::model::JsonRpcMessage::Request(r) = &*message else {
            return false;
        };
        let may = match &r.request {
            ClientRequest::CallToolRequest(_)
            | ClientRequest::GetTaskRequest(_)
            | ClientRequest::CancelTaskRequest(_) => true,
            ClientRequest::CustomRequest(c) => c.method == "tasks/result",
            _ => false,
        };
        if !may {
            return false;
        }
        match tasks_2025::said(&self.line) {
            None => false,
            Some(Said::CallAsksTask) => {
                if let rmcp::model::JsonRpcMessage::Request(r) = message {
                    r.request.extensions_mut().insert(TaskAsked);
                }
                false
            }
            Some(Said::Request {
                method,
                id,
                task_id,
            }) => {
                let (server, output) = (server.clone(), self.output.clone());
                let task_id = task_id.map(std::borrow::Cow::into_owned);
                tokio::spawn(async move {
                    let caller = server.own_caller();
                    let answer = server
                        .task_answer_2025(
                            method,
                            id,
                            task_id.as_deref(),
                            caller,
                            Default::default(),
                        )
                        .await;
                    let _ = write_line(&output, &answer).await;
                });
                true
            }
        }
    }

    /// Read up to the end of the current line, at most [`MAX_FRAME_BYTES`]
    /// of it kept: `None` at the end of input, `Some(true)` for a line in
    /// `self.line`, `Some(false)` for one that was longer. Cancel-safe: bytes
    /// are moved from the reader's buffer into `self.line` without an await
    /// in between.
    async fn read_line(&mut self) -> Option<bool> {
        loop {
            let available = match self.input.fill_buf().await {
                Ok([]) | Err(_) => return None,
                Ok(bytes) => bytes,
            };
            let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if !self.oversized && self.line.len() + chunk.len() <= MAX_FRAME_BYTES {
                self.line.extend_from_slice(chunk);
            } else {
                self.oversized = true;
                self.line.clear();
            }
            let used = done.unwrap_or(available.len());
            self.input.consume(used);
            if done.is_some() {
                return Some(!std::mem::take(&mut self.oversized));
            }
        }
    }

    /// An answer of this transport's own (a failed write means the client is
    /// gone, which the next read reports).
    async fn reply(&self, reply: Value) {
        let _ = write_line(&self.output, &reply).await;
    }
}

/// Write `message` as one line and flush it.
async fn write_line(
    output: &Mutex<StdioWriter>,
    message: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut out = output.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

/// What a line read from the client is.
#[expect(
    clippy::large_enum_variant,
    reason = "moved once per frame; boxing it cost an over-aligned allocation (posix_memalign) per call, measured"
)]
pub(crate) enum Frame {
    /// A message for rmcp.
    Message(RxJsonRpcMessage<RoleServer>),
    /// An error to answer with, here.
    Reply(Value),
    /// Nothing to do: a blank line, or a notification that does not parse.
    Ignore,
}

/// Classify one line (without its `\n`): every line is a message, an answer,
/// or nothing to answer, and no line can make this panic.
pub(crate) fn classify(line: &[u8]) -> Frame {
    let mut line = line;
    line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Frame::Ignore;
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(rmcp::model::JsonRpcMessage::Request(r)) => match &r.request {
            ClientRequest::CustomRequest(c) if KNOWN_METHODS.contains(&c.method.as_str()) => {
                let id = serde_json::to_value(&r.id).unwrap_or(Value::Null);
                let message = format!(
                    "Invalid params: the params of `{}` do not match its schema",
                    c.method
                );
                Frame::Reply(error(id, -32602, message))
            }
            _ => Frame::Message(rmcp::model::JsonRpcMessage::Request(r)),
        },
        Ok(message) => Frame::Message(message),
        Err(e) => {
            // A well-formed object without an id is a notification: ignored.
            // Anything else gets an error, with its id when one can be read.
            match serde_json::from_slice::<Value>(line) {
                Err(_) => Frame::Reply(error(Value::Null, -32700, format!("Parse error: {e}"))),
                Ok(Value::Object(o)) if o.contains_key("method") && !o.contains_key("id") => {
                    Frame::Ignore
                }
                Ok(v) => {
                    let id = v.get("id").cloned().unwrap_or(Value::Null);
                    Frame::Reply(error(id, -32600, format!("Invalid request: {e}")))
                }
            }
        }
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
        let reshaped = self.tasks_2025.as_ref().and_then(|server| {
            if let rmcp::model::JsonRpcMessage::Response(r) = &item
                && let rmcp::model::ServerResult::InitializeResult(i) = &r.result
            {
                let on = i.protocol_version.as_str() == tasks_2025::VERSION;
                self.on_2025.store(on, Ordering::Relaxed);
            }
            if !self.on_2025.load(Ordering::Relaxed) {
                return None;
            }
            server.reshaped_2025(&item)
        });
        let item = reshaped.unwrap_or(item);
        async move { write_line(&output, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let frame = if self.read_line().await? {
                let mut frame = classify(&self.line);
                if let Frame::Message(m) = &mut frame
                    && self.tasks_2025(m)
                {
                    frame = Frame::Ignore;
                }
                self.line.clear();
                frame
            } else {
                Frame::Reply(error(
                    Value::Null,
                    -32700,
                    format!("Parse error: a frame is longer than {MAX_FRAME_BYTES} bytes"),
                ))
            };
            match frame {
                Frame::Message(m) => return Some(m),
                Frame::Reply(reply) => self.reply(reply).await,
                Frame::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `PROPTEST_CASES` (bench/fuzz.sh sets it high), or a short pass.
    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256)
    }

    const FRAMES: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    ];

    /// Every answer this transport writes is a JSON-RPC error object.
    fn check(frame: Frame) -> Result<(), TestCaseError> {
        if let Frame::Reply(v) = frame {
            prop_assert_eq!(&v["jsonrpc"], "2.0");
            prop_assert!(v["error"]["code"].is_i64(), "{}", v);
            prop_assert!(v.get("id").is_some(), "{}", v);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn any_bytes_are_a_message_an_answer_or_nothing(
            line in proptest::collection::vec(any::<u8>(), 0..256)
        ) {
            check(classify(&line))?;
        }

        #[test]
        fn edited_frames_are_a_message_an_answer_or_nothing(
            which in 0..FRAMES.len(),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..8)
        ) {
            let mut line = FRAMES[which].as_bytes().to_vec();
            for (at, byte, how) in edits {
                let at = at % (line.len() + 1);
                match how {
                    0 => line.insert(at, byte),
                    1 if at < line.len() => { line.remove(at); }
                    _ if at < line.len() => line[at] = byte,
                    _ => line.push(byte),
                }
            }
            check(classify(&line))?;
        }
    }

    #[test]
    fn valid_frames_are_messages_and_bad_params_an_answer() {
        for f in FRAMES {
            assert!(matches!(classify(f.as_bytes()), Frame::Message(_)), "{f}");
        }
        let bad = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#;
        let Frame::Reply(v) = classify(bad) else {
            panic!("an answer")
        };
        assert_eq!(v["error"]["code"], -32602);
        assert_eq!(v["id"], 7);
        let Frame::Reply(v) = classify(b"5") else {
            panic!("an answer")
        };
        assert_eq!(v["error"]["code"], -32600);
        assert!(matches!(classify(b"  "), Frame::Ignore));
    }
}
