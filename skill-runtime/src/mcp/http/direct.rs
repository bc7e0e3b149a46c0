//! The endpoint's hot path: a plain `tools/call` answered here, without
//! rmcp's per-request machinery (a second parse of the body into a message,
//! a copy of it as a `Value` for the header check, a service loop and its
//! tasks, or a session worker and its channels, for one request; a channel
//! for one answer).
//!
//! Only a request rmcp would serve the same way is taken, everything else goes
//! to rmcp unchanged: a POST whose `Accept`, `Content-Type` and
//! `MCP-Protocol-Version` headers are each present once, with no `Origin`
//! and no `Mcp-Param-*` header, whose `Host` is one rmcp allows; a body that
//! is exactly a JSON-RPC request of `tools/call` with no progress token, log
//! level or answer to an earlier question; a tool that is a skill's, asks no
//! person, does not run as a task and declares no parameter headers
//! ([`McpServer::answers_directly`]), nor asks to (2025-11-25's
//! `params.task`, in a session that has tasks in that form). Then either
//! - stateless (2026-07-28): no `Mcp-Session-Id`, `Mcp-Method` and `Mcp-Name`
//!   saying what the body says, its `_meta` carrying the version and the
//!   client's capabilities; or
//! - in a session (2025-11-25 and before): one `Mcp-Session-Id` naming a
//!   session of the request's caller, on the version that session
//!   negotiated, whose client declared neither elicitation nor sampling
//!   (a handler's question needs rmcp's peer) and never asked for log lines
//!   (`sessions.rs`); no version, capabilities or log level in `_meta`.
//!
//! The answer is what rmcp gives such a request with `json_response` set:
//! the JSON-RPC response as one `application/json` body (tests/mcp_http_limits.rs
//! compares the two on the same requests). In a session, rmcp answers as an
//! event stream; the protocol lets the server choose, and a JSON body is
//! what a stream would carry, whole. The job runs as a task of its own,
//! cancelled when the request is dropped (its client gone) or, in a
//! session, by the client's `notifications/cancelled`, so that it ends
//! `cancelled` with its record, as through rmcp (tests/mcp_direct.rs).

use std::borrow::Cow;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{HeaderMap, Response, StatusCode};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorCode, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;

use super::reply::Body;
use super::sessions::CappedSessions;
use crate::contract::watch::{Cancel, Watch};
use crate::mcp::server::McpServer;
use crate::model::caller::Caller;

/// The protocol version whose requests stand alone (no session, no handshake).
const VERSION: &str = "2026-07-28";

/// The `Host` names a request may use, as rmcp checks them; `None` when any
/// host is accepted.
#[derive(Clone, Debug)]
pub(super) struct Hosts(Option<Vec<(String, Option<u16>)>>);

impl Hosts {
    /// `allowed` as rmcp reads its list (`host` or `host:port`); `None` when
    /// rmcp checks no host.
    pub(super) fn new<'a>(allowed: Option<impl Iterator<Item = &'a str>>) -> Hosts {
        Hosts(allowed.map(|list| {
            list.filter_map(|a| {
                let a = a.trim();
                if a.is_empty() {
                    return None;
                }
                Some(match hyper::http::uri::Authority::try_from(a) {
                    Ok(auth) => (normal(auth.host()), auth.port_u16()),
                    Err(_) => (normal(a), None),
                })
            })
            .collect()
        }))
    }

    /// Whether the request's `Host` is allowed (a request without one, or
    /// with one that does not parse, is left to rmcp).
    fn allow(&self, headers: &HeaderMap) -> bool {
        let Some(list) = &self.0 else {
            return true;
        };
        let Some(auth) = headers
            .get(hyper::header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| hyper::http::uri::Authority::try_from(h).ok())
        else {
            return false;
        };
        let (host, port) = (normal(auth.host()), auth.port_u16());
        list.iter()
            .any(|(h, p)| *h == host && p.is_none_or(|p| Some(p) == port))
    }
}

fn normal(host: &str) -> String {
    host.trim_matches(['[', ']']).to_ascii_lowercase()
}

/// A request the endpoint answers itself.
pub(super) struct Direct {
    id: RequestId,
    params: CallToolRequestParams,
    /// The session it names, if any, and the version that session
    /// negotiated (else the stateless [`VERSION`]).
    session: Option<String>,
    version: Arc<str>,
}

/// The message, read strictly: any other member sends it to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: CallToolRequestParams,
}

/// `body`, with `parts`' headers, when it is a request the endpoint answers
/// itself (see the module's documentation); a request naming a session
/// only when that session is its caller's and plain (`sessions.rs`).
pub(super) fn direct(
    parts: &Parts,
    body: &[u8],
    server: &McpServer,
    hosts: &Hosts,
    sessions: &CappedSessions,
) -> Option<Direct> {
    let mut call = shape(parts, body, hosts)?;
    if !server.answers_directly(&call.params.name) {
        return None;
    }
    match &call.session {
        None => rmcp::ServerHandler::supported_protocol_versions(server)
            .contains(&ProtocolVersion::V_2026_07_28)
            .then_some(call),
        Some(id) => {
            let plain = sessions.plain(id, parts.extensions.get::<Caller>())?;
            if *plain.version != *call.version {
                return None;
            }
            // A call that asks to run as a task (2025-11-25's `params.task`,
            // which rmcp's parameters do not keep) is the tasks' to answer.
            if crate::mcp::tasks_2025::said(body).is_some() && sessions.tasks_2025(id) {
                return None;
            }
            call.version = plain.version;
            Some(call)
        }
    }
}

/// The request, when its headers and body are of the shape answered
/// directly, whatever the tool: stateless (2026-07-28), or in a session
/// (its version checked against the session's by [`direct`]).
fn shape(parts: &Parts, body: &[u8], hosts: &Hosts) -> Option<Direct> {
    let h = &parts.headers;
    if parts.method != hyper::Method::POST
        || h.contains_key(hyper::header::ORIGIN)
        || !hosts.allow(h)
        || !accepts_both(h)
        || essence(one(h, hyper::header::CONTENT_TYPE.as_str())?) != "application/json"
        || h.keys().any(|k| k.as_str().starts_with("mcp-param-"))
    {
        return None;
    }
    let session = match h.get_all("mcp-session-id").iter().count() {
        0 => None,
        1 => Some(one(h, "mcp-session-id")?.to_owned()),
        _ => return None,
    };
    let version = one(h, "mcp-protocol-version")?;
    let message: Message<'_> = serde_json::from_slice(body).ok()?;
    let params = message.params;
    let plain_name = !params.name.is_empty()
        && params
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./".contains(&b));
    if message.jsonrpc != "2.0"
        || message.method != "tools/call"
        || !plain_name
        || params.input_responses.is_some()
        || params.request_state.is_some()
    {
        return None;
    }
    let meta = params.meta.as_ref();
    let stateless = session.is_none();
    let fits = if stateless {
        // Everything a session would say, said by the request.
        let meta = meta?;
        version == VERSION
            && one(h, "mcp-method")? == "tools/call"
            && one(h, "mcp-name")? == params.name
            && meta.protocol_version()?.as_str() == VERSION
            && meta.client_capabilities().is_some()
            && meta.get_progress_token().is_none()
            && meta.log_level().is_none()
    } else {
        // A session's request says nothing of what its session said.
        version != VERSION
            && !h.contains_key("mcp-method")
            && !h.contains_key("mcp-name")
            && meta.is_none_or(|m| {
                m.get_progress_token().is_none()
                    && m.protocol_version().is_none()
                    && m.client_capabilities().is_none()
                    && m.log_level().is_none()
            })
    };
    fits.then(|| Direct {
        id: message.id,
        params,
        session,
        version: version.into(),
    })
}

/// The one value of header `name` as text; `None` when it is absent, given
/// more than once or not text.
fn one<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut all = h.get_all(name).iter();
    let first = all.next()?;
    if all.next().is_some() {
        return None;
    }
    first.to_str().ok()
}

/// A media type without its parameters, trimmed and in lower case.
fn essence(media: &str) -> String {
    media
        .split_once(';')
        .map_or(media, |(e, _)| e)
        .trim()
        .to_ascii_lowercase()
}

/// Whether `Accept` names both JSON and event streams, as rmcp requires.
fn accepts_both(h: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in h.get_all(hyper::header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for media in value.split(',') {
            match essence(media).as_str() {
                "application/json" => json = true,
                "text/event-stream" => sse = true,
                _ => {}
            }
        }
    }
    json && sse
}

impl Direct {
    /// The tool called.
    pub(super) fn name(&self) -> &str {
        &self.params.name
    }

    /// The request's id, as JSON.
    pub(super) fn id(&self) -> serde_json::Value {
        serde_json::to_value(&self.id).unwrap_or_default()
    }

    /// Run the call as `caller` (the request's, else the server's own) and
    /// answer it as rmcp would with `json_response` set.
    pub(super) async fn answer(
        self,
        server: &McpServer,
        sessions: &CappedSessions,
        parts: &Parts,
    ) -> Response<Body> {
        let caller = parts
            .extensions
            .get::<Caller>()
            .unwrap_or_else(|| server.own_caller());
        let request = Request {
            id: &self.id,
            version: &self.version,
            session: self.session.as_deref().map(|s| (s, sessions)),
        };
        let answer = call(server, caller, self.params, &request, parts).await;
        let message = match answer {
            Ok(result) => {
                let mut result = ServerResult::CallToolResult(result);
                // The shape each revision gives a result, as rmcp's handler
                // gives it.
                if *self.version >= *VERSION {
                    result.fill_missing_cache_hints();
                } else {
                    result.strip_result_type_for_legacy_peer();
                    result.strip_non_object_output_for_legacy_peer();
                }
                ServerJsonRpcMessage::response(result, self.id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(self.id)),
        };
        let status = match &message {
            ServerJsonRpcMessage::Error(e) => match e.error.code {
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
                ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
                _ => StatusCode::OK,
            },
            _ => StatusCode::OK,
        };
        let body = match serde_json::to_vec(&message) {
            Ok(body) => body,
            Err(e) => {
                return super::reply::rpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    serde_json::Value::Null,
                    -32603,
                    format!("the answer does not serialize: {e}"),
                );
            }
        };
        Response::builder()
            .status(status)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)).map_err(|e| match e {}).boxed())
            .expect("a status, a header and a body make a response")
    }
}

/// The call, as [`rmcp::ServerHandler::call_tool`] makes it: in its span
/// (feature `otel`, made of what `parts` say). The job runs as a
/// task of its own, cancelled if the request is dropped first (its client
/// gone): it then ends `cancelled` at the handler's next await, with its
/// record, as a call rmcp serves does.
async fn call(
    server: &McpServer,
    caller: &Caller,
    request: CallToolRequestParams,
    of: &Request<'_>,
    parts: &Parts,
) -> Result<CallToolResult, ErrorData> {
    let cancel = Cancel::new();
    let watch = Watch::new().cancel_with(cancel.clone());
    // In a session, the client's `notifications/cancelled` reaches it too.
    // Taken out of the session's calls when this ends, answered or dropped.
    let _running = of.session.map(|(session, sessions)| {
        let id = serde_json::to_string(of.id).unwrap_or_default();
        sessions.running(session, id.clone(), cancel.clone());
        Running {
            session,
            sessions,
            id,
        }
    });
    let mut gone = CancelOnDrop(Some(cancel));
    #[cfg(feature = "otel")]
    let (span, started) = crate::mcp::spans::span_of(&crate::mcp::spans::Call {
        method: "tools/call",
        name: Some(&request.name),
        id: of.id,
        version: of.version,
        via: crate::mcp::spans::via(parts),
        meta: request.meta.as_ref().and_then(|m| m.get_traceparent()),
    });
    #[cfg(not(feature = "otel"))]
    let _ = parts;
    let (server, caller) = (server.clone(), caller.clone());
    let job = async move {
        let answer = server.call_watched(&caller, &request.name, request.arguments, watch);
        #[cfg(feature = "otel")]
        let answer = {
            use tracing::Instrument;
            let answer = answer.instrument(span.clone()).await;
            let error = match &answer {
                Ok(r) => crate::mcp::spans::tool_error(r).map(str::to_owned),
                Err(e) => Some(crate::mcp::spans::protocol_error(e)),
            };
            let tool = Some(&*request.name);
            crate::mcp::spans::ended(&span, started, "tools/call", tool, error.as_deref());
            answer
        };
        #[cfg(not(feature = "otel"))]
        let answer = answer.await;
        answer
    };
    let answer = match tokio::spawn(job).await {
        Ok(answer) => answer,
        Err(e) => Err(ErrorData::internal_error(
            format!("the call's task ended without an answer: {e}"),
            None,
        )),
    };
    gone.0 = None;
    answer
}

/// A session's call in flight: taken out of its session's calls when
/// dropped, whether it was answered or its client went away.
struct Running<'a> {
    session: &'a str,
    sessions: &'a CappedSessions,
    id: String,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.sessions.ended(self.session, &self.id);
    }
}

/// Which request a call answers: its id, its protocol version, and its
/// session, if any.
struct Request<'a> {
    id: &'a RequestId,
    #[cfg_attr(not(feature = "otel"), expect(dead_code, reason = "read by the span"))]
    version: &'a str,
    session: Option<(&'a str, &'a CappedSessions)>,
}

/// Cancels its job when dropped still armed.
struct CancelOnDrop(Option<Cancel>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.take() {
            cancel.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request `bench/mcp-http.lua` sends, as a client of 2026-07-28 sends it.
    const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    const HEADERS: &[(&str, &str)] = &[
        ("host", "127.0.0.1:8080"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];

    type Headers = Vec<(&'static str, &'static str)>;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut request = hyper::Request::post("/mcp");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn loopback() -> Hosts {
        Hosts::new(Some(["localhost", "127.0.0.1", "::1"].into_iter()))
    }

    fn taken(headers: &[(&str, &str)], body: &str) -> bool {
        shape(&parts(headers), body.as_bytes(), &loopback()).is_some()
    }

    fn with(header: (&'static str, &'static str)) -> Vec<(&'static str, &'static str)> {
        let mut h: Vec<_> = HEADERS
            .iter()
            .filter(|(k, _)| *k != header.0)
            .copied()
            .collect();
        h.push(header);
        h
    }

    #[test]
    fn a_plain_stateless_call_is_answered_directly() {
        assert!(taken(HEADERS, BODY));
        let id = BODY.replace(r#""id":1"#, r#""id":"abc""#);
        assert!(taken(HEADERS, &id));
        // Parameters in the media types, other types beside them.
        let accept = with(("accept", "text/event-stream;q=0.9, application/json, */*"));
        assert!(taken(&accept, BODY));
        let charset = with(("content-type", "application/json; charset=utf-8"));
        assert!(taken(&charset, BODY));
        // Any host when rmcp checks none.
        let far = with(("host", "mcp.example.com"));
        assert!(
            shape(
                &parts(&far),
                BODY.as_bytes(),
                &Hosts::new(None::<std::iter::Empty<&str>>)
            )
            .is_some()
        );
    }

    #[test]
    fn anything_else_goes_to_rmcp() {
        let headers = [
            ("another version", ("mcp-protocol-version", "2025-11-25")),
            ("a mismatched method header", ("mcp-method", "tools/list")),
            ("a mismatched name header", ("mcp-name", "other")),
            ("an origin", ("origin", "http://127.0.0.1:8080")),
            ("a session", ("mcp-session-id", "s")),
            ("a parameter header", ("mcp-param-message", "hi")),
            ("a host rmcp refuses", ("host", "evil.example.com")),
            ("no event streams accepted", ("accept", "application/json")),
            ("another body type", ("content-type", "text/plain")),
        ];
        for (why, header) in headers {
            assert!(!taken(&with(header), BODY), "{why}");
        }
        let bodies = [
            (
                "a progress token",
                (r#""_meta":{"#, r#""_meta":{"progressToken":7,"#),
            ),
            (
                "a log level",
                (
                    r#""_meta":{"#,
                    r#""_meta":{"io.modelcontextprotocol/logLevel":"info","#,
                ),
            ),
            (
                "no capabilities",
                (r#","io.modelcontextprotocol/clientCapabilities":{}"#, ""),
            ),
            (
                "no meta version",
                (
                    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                    "",
                ),
            ),
            (
                "a member JSON-RPC does not have",
                (r#""id":1,"#, r#""id":1,"extra":true,"#),
            ),
            ("a fractional id", (r#""id":1"#, r#""id":1.5"#)),
            ("another JSON-RPC version", ("2.0", "1.0")),
        ];
        for (why, (from, to)) in bodies {
            assert!(!taken(HEADERS, &BODY.replace(from, to)), "{why}");
        }
        assert!(!taken(HEADERS, "{"), "not JSON");
        let unnamed: Headers = HEADERS
            .iter()
            .filter(|(k, _)| *k != "mcp-name")
            .copied()
            .collect();
        assert!(!taken(&unnamed, BODY), "no name header");
        let listing = with(("mcp-method", "tools/list"));
        assert!(
            !taken(&listing, &BODY.replace("tools/call", "tools/list")),
            "another method"
        );
        let mut get = parts(HEADERS);
        get.method = hyper::Method::GET;
        assert!(shape(&get, BODY.as_bytes(), &loopback()).is_none(), "a GET");
    }
}
