//! The span of an MCP `tools/call` (feature `otel`), as OpenTelemetry's MCP
//! semantic conventions name it: `tools/call {tool}`, kind server, with
//! `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
//! `mcp.protocol.version`, `network.transport`, and `error.type` =
//! `tool_error` when the result is a tool error. Its parent is the client's
//! `_meta.traceparent` (SEP-414), else the HTTP request's `traceparent`
//! header, when there is one; the job's span is its child. The request's duration goes to `mcp.server.operation.duration`.

use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};

use crate::exec::trace::continue_from;
use crate::model::trace::TraceParent;

/// The span of `request`, and when it started.
pub(crate) fn call_span(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> (tracing::Span, Instant) {
    #[cfg(feature = "mcp-http")]
    let parts = context.extensions.get::<hyper::http::request::Parts>();
    #[cfg(feature = "mcp-http")]
    let (http, header) = (
        parts.is_some(),
        parts
            .and_then(|p| p.headers.get("traceparent"))
            .and_then(|v| v.to_str().ok()),
    );
    #[cfg(not(feature = "mcp-http"))]
    let (http, header): (bool, Option<&str>) = (false, None);
    let version = context
        .protocol_version()
        .map(|v| v.to_string())
        .unwrap_or_default();
    span_of(&Call {
        name: &request.name,
        id: &context.id,
        version: &version,
        http,
        header,
        meta: context.meta.get_traceparent(),
    })
}

/// What a call's span is made of, however the request came.
pub(crate) struct Call<'a> {
    pub(crate) name: &'a str,
    pub(crate) id: &'a dyn std::fmt::Display,
    /// The protocol version the request uses.
    pub(crate) version: &'a str,
    /// Over HTTP (else over a pipe).
    pub(crate) http: bool,
    /// The HTTP request's `traceparent` header, and the request's `_meta` one.
    pub(crate) header: Option<&'a str>,
    pub(crate) meta: Option<&'a str>,
}

/// The span of `call`, and when it started.
pub(crate) fn span_of(call: &Call<'_>) -> (tracing::Span, Instant) {
    let span = tracing::info_span!(
        "mcp",
        otel.name = %format_args!("tools/call {}", call.name),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.name,
        jsonrpc.request.id = %call.id,
        mcp.protocol.version = %call.version,
        network.transport = if call.http { "tcp" } else { "pipe" },
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    // The request's own `_meta` first (SEP-414), else the HTTP header.
    let parent = call
        .meta
        .or(call.header)
        .and_then(|t| TraceParent::parse(t).ok());
    continue_from(&span, parent.as_ref());
    (span, Instant::now())
}

/// How an answer went wrong, as the span and the metric say it.
pub(crate) fn error_type(answer: &Result<CallToolResponse, ErrorData>) -> Option<&'static str> {
    match answer {
        Ok(CallToolResponse::Complete(r)) => tool_error(r),
        Ok(_) => None,
        Err(_) => Some("protocol_error"),
    }
}

/// `tool_error` when `result` is a tool error.
pub(crate) fn tool_error(result: &rmcp::model::CallToolResult) -> Option<&'static str> {
    (result.is_error == Some(true)).then_some("tool_error")
}

/// Record how the call ended, on its span and in the duration metric.
pub(crate) fn ended(
    span: &tracing::Span,
    started: Instant,
    name: &str,
    error: Option<&'static str>,
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
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", "tools/call"),
        KeyValue::new("gen_ai.tool.name", name.to_owned()),
    ];
    if let Some(e) = error {
        attributes.push(KeyValue::new("error.type", e));
    }
    histogram.record(started.elapsed().as_secs_f64(), &attributes);
}
