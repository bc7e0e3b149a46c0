//! The span of each MCP request the server answers (feature `otel`), as
//! OpenTelemetry's MCP semantic conventions name it: `{method}` (for
//! `tools/call`, `tools/call {tool}`), kind server, with `mcp.method.name`,
//! `jsonrpc.request.id`, `mcp.protocol.version`, `network.transport`; over
//! HTTP `network.protocol.name` and `.version`, `client.address` and
//! `client.port`, and `mcp.session.id` when the request names a session;
//! `gen_ai.tool.name` and `gen_ai.operation.name` for a tool call,
//! `mcp.resource.uri` for a read; `error.type` = `tool_error` when the result
//! is a tool error, the error's code when the answer is a protocol error.
//! Its parent is the client's `_meta.traceparent` (SEP-414), else the HTTP
//! request's `traceparent` header, when there is one; a job's span is its
//! child. Each request's duration goes to `mcp.server.operation.duration`, and
//! each HTTP session's, when it ends, to `mcp.server.session.duration`.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};

use crate::exec::trace::continue_from;
use crate::model::trace::TraceParent;

/// The address of the client a request came from (its connection's peer),
/// put in the request's extensions by the HTTP server: what its span names
/// as `client.address` and `client.port`.
#[cfg(feature = "mcp-http")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Peer(pub(crate) SocketAddr);

/// What the transport says of a request: over HTTP, its protocol version,
/// the client's address, the session it names, its `traceparent` header.
#[derive(Default)]
pub(crate) struct Via<'a> {
    pub(crate) http: Option<&'static str>,
    pub(crate) peer: Option<SocketAddr>,
    pub(crate) session: Option<&'a str>,
    pub(crate) traceparent: Option<&'a str>,
}

/// What an HTTP request's `parts` say of it.
#[cfg(feature = "mcp-http")]
pub(crate) fn via(parts: &hyper::http::request::Parts) -> Via<'_> {
    let version = match parts.version {
        hyper::Version::HTTP_10 => "1.0",
        hyper::Version::HTTP_2 => "2",
        hyper::Version::HTTP_3 => "3",
        _ => "1.1",
    };
    Via {
        http: Some(version),
        peer: parts.extensions.get::<Peer>().map(|p| p.0),
        session: parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok()),
        traceparent: parts
            .headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok()),
    }
}

/// What the transport of `context`'s request says of it.
fn via_context(context: &RequestContext<RoleServer>) -> Via<'_> {
    #[cfg(feature = "mcp-http")]
    if let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() {
        return via(parts);
    }
    let _ = context;
    Via::default()
}

/// The span of a request of `method` (about `name`: the tool, the resource
/// URI), and when it started.
pub(crate) fn request_span(
    method: &'static str,
    name: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> (tracing::Span, Instant) {
    let version = context
        .protocol_version()
        .map(|v| v.to_string())
        .unwrap_or_default();
    span_of(&Call {
        method,
        name,
        id: &context.id,
        version: &version,
        via: via_context(context),
        meta: context.meta.get_traceparent(),
    })
}

/// The span of a `tools/call` `request`, and when it started.
pub(crate) fn call_span(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> (tracing::Span, Instant) {
    request_span("tools/call", Some(&request.name), context)
}

/// What a request's span is made of, however the request came.
pub(crate) struct Call<'a> {
    pub(crate) method: &'static str,
    /// The tool called, or the resource read.
    pub(crate) name: Option<&'a str>,
    pub(crate) id: &'a dyn std::fmt::Display,
    /// The protocol version the request uses.
    pub(crate) version: &'a str,
    pub(crate) via: Via<'a>,
    /// The request's `_meta` `traceparent`.
    pub(crate) meta: Option<&'a str>,
}

/// The span of `call`, and when it started.
pub(crate) fn span_of(call: &Call<'_>) -> (tracing::Span, Instant) {
    let tool = (call.method == "tools/call").then_some(call.name).flatten();
    let span = tracing::info_span!(
        "mcp",
        otel.name = %match tool {
            Some(tool) => format!("tools/call {tool}"),
            None => call.method.to_owned(),
        },
        otel.kind = "server",
        mcp.method.name = call.method,
        jsonrpc.request.id = %call.id,
        mcp.protocol.version = %call.version,
        network.transport = if call.via.http.is_some() { "tcp" } else { "pipe" },
        network.protocol.name = tracing::field::Empty,
        network.protocol.version = tracing::field::Empty,
        client.address = tracing::field::Empty,
        client.port = tracing::field::Empty,
        mcp.session.id = tracing::field::Empty,
        gen_ai.operation.name = tracing::field::Empty,
        gen_ai.tool.name = tracing::field::Empty,
        mcp.resource.uri = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    if let Some(version) = call.via.http {
        span.record("network.protocol.name", "http");
        span.record("network.protocol.version", version);
    }
    if let Some(peer) = call.via.peer {
        span.record("client.address", tracing::field::display(peer.ip()));
        span.record("client.port", i64::from(peer.port()));
    }
    if let Some(session) = call.via.session {
        span.record("mcp.session.id", session);
    }
    if let Some(tool) = tool {
        span.record("gen_ai.operation.name", "execute_tool");
        span.record("gen_ai.tool.name", tool);
    } else if call.method == "resources/read"
        && let Some(uri) = call.name
    {
        span.record("mcp.resource.uri", uri);
    }
    // The request's own `_meta` first (SEP-414), else the HTTP header.
    let parent = call
        .meta
        .or(call.via.traceparent)
        .and_then(|t| TraceParent::parse(t).ok());
    continue_from(&span, parent.as_ref());
    (span, Instant::now())
}

/// How a tool call's answer went wrong, as the span and the metric say it.
pub(crate) fn error_type(answer: &Result<CallToolResponse, ErrorData>) -> Option<String> {
    match answer {
        Ok(CallToolResponse::Complete(r)) => tool_error(r).map(str::to_owned),
        Ok(_) => None,
        Err(e) => Some(protocol_error(e)),
    }
}

/// A protocol error as `error.type` names it: its JSON-RPC code.
pub(crate) fn protocol_error(e: &ErrorData) -> String {
    e.code.0.to_string()
}

/// `tool_error` when `result` is a tool error.
pub(crate) fn tool_error(result: &rmcp::model::CallToolResult) -> Option<&'static str> {
    (result.is_error == Some(true)).then_some("tool_error")
}

/// Run `answer`, a request of `method` (about `name`), in its span, and
/// record how it ended.
pub(crate) async fn traced<T>(
    method: &'static str,
    name: Option<&str>,
    context: &RequestContext<RoleServer>,
    answer: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    use tracing::Instrument;
    let (span, started) = request_span(method, name, context);
    let answer = answer.instrument(span.clone()).await;
    let error = answer.as_ref().err().map(protocol_error);
    ended(&span, started, method, None, error.as_deref());
    answer
}

/// Record how a request of `method` ended, on its span and in the duration
/// metric (`tool`: the tool a call named).
pub(crate) fn ended(
    span: &tracing::Span,
    started: Instant,
    method: &'static str,
    tool: Option<&str>,
    error: Option<&str>,
) {
    if let Some(e) = error {
        span.record("error.type", e);
        span.record("otel.status_code", "ERROR");
    }
    if !crate::exec::trace::otel::exporting() {
        return;
    }
    static DURATION: OnceLock<Histogram<f64>> = OnceLock::new();
    let histogram = DURATION.get_or_init(|| {
        opentelemetry::global::meter("skill-runtime")
            .f64_histogram("mcp.server.operation.duration")
            .with_unit("s")
            .with_description("Duration of MCP requests, as the server saw them")
            .build()
    });
    let mut attributes = vec![KeyValue::new("mcp.method.name", method)];
    if let Some(tool) = tool {
        attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
    }
    if let Some(e) = error {
        attributes.push(KeyValue::new("error.type", e.to_owned()));
    }
    histogram.record(started.elapsed().as_secs_f64(), &attributes);
}

/// An HTTP session's clock: when it is let go (rmcp drops the session's
/// server when the session ends: deleted, idle, evicted), the time since it
/// started goes to `mcp.server.session.duration`, if an `initialize` opened
/// it (a stateless request's server is no session).
#[derive(Default)]
pub(crate) struct SessionClock {
    started: OnceLock<(Instant, String)>,
}

impl SessionClock {
    /// The session's `initialize` was answered, on protocol `version`.
    pub(crate) fn opened(&self, version: &str) {
        let _ = self.started.set((Instant::now(), version.to_owned()));
    }
}

impl Drop for SessionClock {
    fn drop(&mut self) {
        let Some((started, version)) = self.started.get() else {
            return;
        };
        if !crate::exec::trace::otel::exporting() {
            return;
        }
        static DURATION: OnceLock<Histogram<f64>> = OnceLock::new();
        let histogram = DURATION.get_or_init(|| {
            opentelemetry::global::meter("skill-runtime")
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("Duration of MCP sessions, as the server saw them")
                .build()
        });
        histogram.record(
            started.elapsed().as_secs_f64(),
            &[
                KeyValue::new("mcp.protocol.version", version.clone()),
                KeyValue::new("network.transport", "tcp"),
                KeyValue::new("network.protocol.name", "http"),
            ],
        );
    }
}
