//! The MCP endpoint as one tower service ([`McpService`]): what each request
//! goes through, whatever serves the connection (this crate's HTTP server,
//! or an axum or tower app the endpoint is mounted in).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;

use super::answers as auth_answers;
use super::conns::{Busy, Slot};
use super::direct::{Hosts, direct};
use super::rates::CallerRates;
use super::reply::{Body, rpc_error};
use super::sessions::CappedSessions;
use super::task_wire;
use crate::mcp::limits::{HttpLimits, LOOPBACK_HOSTS, LOOPBACK_ORIGINS};
use crate::mcp::server::McpServer;
use crate::model::caller::Caller;

/// The MCP endpoint of an [`McpServer`] as a tower service
/// ([`McpServer::into_service`]): mount it at any path of an axum or tower
/// app (`Router::new().route_service("/mcp", server.into_service())`), or
/// let [`McpServer::serve_http`] serve it. Each request gets the transport's
/// checks here: one `Host` and one `Origin` at most, loopback or allowed
/// ones only (403 otherwise); the body read whole within
/// [`HttpLimits::body_timeout`] (408) and [`HttpLimits::max_body_bytes`]
/// (413); a body that is not a JSON-RPC message answered with the JSON-RPC
/// error it deserves (400); sessions capped at [`HttpLimits::max_sessions`].
/// What belongs to a connection (the header timeout, the connection cap) is
/// the server's: an app that mounts the service sets its own.
#[derive(Clone)]
pub struct McpService {
    /// One reference count per request, whatever the parts.
    shared: Arc<Shared>,
}

struct Shared {
    rmcp: StreamableHttpService<McpServer, CappedSessions>,
    /// The same sessions rmcp keeps: whose each is.
    sessions: Arc<CappedSessions>,
    server: McpServer,
    limits: Arc<HttpLimits>,
    rates: Option<CallerRates>,
    /// The `Host` names rmcp accepts, for the requests answered directly.
    hosts: Hosts,
}

impl McpService {
    pub(crate) fn new(server: McpServer) -> McpService {
        let limits = server.http.clone();
        let origins = LOOPBACK_ORIGINS
            .iter()
            .map(|o| (*o).to_owned())
            .chain(limits.allowed_origins.iter().cloned());
        let hosts = LOOPBACK_HOSTS
            .iter()
            .map(|h| (*h).to_owned())
            .chain(limits.allowed_hosts.iter().cloned());
        let sessions = Arc::new(CappedSessions::new(&limits, &server));
        let served = server.clone();
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins(origins)
            .with_allowed_hosts(hosts)
            .with_max_request_body_bytes(limits.max_body_bytes);
        // A call that says nothing before its answer (no progress, no
        // question) is answered as one JSON body, not an event stream of
        // one event: no stream, no keep-alive timer per request. rmcp opens
        // a stream when the handler speaks first, so progress still arrives.
        config.json_response = true;
        // The `Host` check stops a page whose name was rebound to this
        // server's address from calling it as the server's own caller. With
        // an authenticator every request needs credentials a browser does
        // not add on its own, so clients may reach the server by any name
        // or address, unless the operator listed the names it serves.
        let any_host = server.front.authenticator.is_some() && limits.allowed_hosts.is_empty();
        if any_host {
            config = config.disable_allowed_hosts();
        }
        let hosts =
            Hosts::new((!any_host).then(|| config.allowed_hosts.iter().map(String::as_str)));
        let rmcp =
            StreamableHttpService::new(move || Ok(served.for_session()), sessions.clone(), config);
        McpService {
            shared: Arc::new(Shared {
                rmcp,
                sessions,
                rates: limits.caller_rate.map(CallerRates::new),
                server,
                limits,
                hosts,
            }),
        }
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(shared.handle(request).await) })
    }
}

impl Shared {
    /// One request (see [`McpService`]); with an authenticator, its caller
    /// first: 401 without credentials that hold, the metadata document at
    /// `/.well-known/oauth-protected-resource`, and 403 `insufficient_scope`
    /// for a `tools/call` of a tool the caller lacks permissions for.
    async fn handle<B>(&self, request: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (mut parts, body) = request.into_parts();
        if let Err(why) = strict_headers(&parts.headers) {
            return rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32600, why);
        }
        let front = &self.server.front;
        let Some(authenticator) = &front.authenticator else {
            if let Some(rates) = &self.rates
                && parts.method == hyper::Method::POST
                && let Some(refused) = rates.refusal(None)
            {
                return after_body(&parts, body, &self.limits, refused).await;
            }
            return handle(self, Request::from_parts(parts, body), None).await;
        };
        let metadata_url = || auth_answers::metadata_url(front.resource_url.as_deref(), &parts);
        if parts.method == hyper::Method::GET
            && parts
                .uri
                .path()
                .starts_with("/.well-known/oauth-protected-resource")
        {
            return auth_answers::metadata(&self.server, authenticator.as_ref(), &parts);
        }
        let caller = match authenticator.authenticate(&parts).await {
            Ok(caller) => caller,
            Err(e) => {
                let refused = auth_answers::refused(&e, &metadata_url());
                return after_body(&parts, body, &self.limits, refused).await;
            }
        };
        if let Some(rates) = &self.rates
            && parts.method == hyper::Method::POST
            && let Some(refused) = rates.refusal(Some(&caller))
        {
            return after_body(&parts, body, &self.limits, refused).await;
        }
        parts.extensions.insert(caller);
        let check = ScopeCheck {
            server: &self.server,
            resource_url: front.resource_url.as_deref(),
        };
        handle(self, Request::from_parts(parts, body), Some(&check)).await
    }
}

/// What is checked of an authenticated request's body before rmcp reads it:
/// a `tools/call` of a tool whose MCP permissions the caller lacks is
/// answered 403 `insufficient_scope`, naming the scope.
struct ScopeCheck<'a> {
    server: &'a McpServer,
    /// Where the metadata document is, computed only for a refusal.
    resource_url: Option<&'a str>,
}

/// What the scope check reads of a message: its method, the tool's name,
/// its id; the rest (the arguments) is skipped, not built.
#[derive(serde::Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<PeekParams<'a>>,
    #[serde(default)]
    id: Value,
}

#[derive(serde::Deserialize)]
struct PeekParams<'a> {
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
}

impl ScopeCheck<'_> {
    /// The refusal of a message read from `body`.
    fn check(&self, parts: &hyper::http::request::Parts, body: &[u8]) -> Option<Response<Body>> {
        let message: Peek<'_> = serde_json::from_slice(body).ok()?;
        if message.method.as_deref() != Some("tools/call") {
            return None;
        }
        let name = message.params?.name?;
        self.refusal(parts, &name, || message.id)
    }

    /// The refusal of a `tools/call` of `name` (request `id`), when the
    /// caller lacks the tool's MCP permissions.
    fn refusal(
        &self,
        parts: &hyper::http::request::Parts,
        name: &str,
        id: impl FnOnce() -> Value,
    ) -> Option<Response<Body>> {
        let caller = parts.extensions.get::<crate::model::caller::Caller>()?;
        let needs = self.server.permissions_of(name)?;
        let missing = match &caller.permissions {
            Some(granted) => crate::exec::policy::authorize::missing_permissions(granted, needs),
            None => Vec::new(),
        };
        if missing.is_empty() {
            return None;
        }
        Some(auth_answers::insufficient_scope(
            &missing,
            &auth_answers::metadata_url(self.resource_url, parts),
            id(),
        ))
    }
}

/// One request: its `Host` and `Origin` read strictly, the body read whole
/// (up to `max_body_bytes`, within its time), answered directly when it is a
/// plain stateless `tools/call` (`direct.rs`), else handed to rmcp, and rmcp's
/// answer to a body it could not read as a message turned into the JSON-RPC
/// error the body deserves.
async fn handle<B>(
    shared: &Shared,
    request: Request<B>,
    scope: Option<&ScopeCheck<'_>>,
) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (rmcp, limits) = (&shared.rmcp, &*shared.limits);
    let (mut parts, body) = request.into_parts();
    let bytes = match read_body(&parts, body, limits).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    // A call answered directly was read already: its scope is checked on
    // what was read, not on a second parse of the body.
    shared.sessions.close_idle();
    let call = direct(
        &parts,
        &bytes,
        &shared.server,
        &shared.hosts,
        &shared.sessions,
    );
    let refused = match (scope, &call) {
        (None, _) => None,
        (Some(s), Some(call)) => s.refusal(&parts, call.name(), || call.id()),
        (Some(s), None) => s.check(&parts, &bytes),
    };
    if let Some(refused) = refused {
        return refused;
    }
    // Busy, on a connection this crate serves, until the answer is sent.
    let busy = parts.extensions.get::<Slot>().map(Slot::busy);
    if let Some(call) = call {
        // One body of known length, sent at once: busy while the call runs.
        // Boxed where it is made, as rmcp's below: the call's future (the
        // job's) would make this one as large.
        let answer = Box::pin(call.answer(&shared.server, &shared.sessions, &parts)).await;
        drop(busy);
        return answer;
    }
    // A session is its creator's: any request naming it (a message, its
    // event stream, its deletion) from another caller is answered as for
    // a session that does not exist.
    let caller = parts.extensions.get::<Caller>().cloned();
    let session = parts.headers.get(SESSION_HEADER).cloned();
    if let Some(id) = &session
        && !id
            .to_str()
            .is_ok_and(|id| shared.sessions.belongs(id, caller.as_ref()))
    {
        return no_session();
    }
    if let Some(id) = &session
        && let Ok(id) = id.to_str()
        && shared.sessions.tasks_2025(id)
        && let Some(answer) = task_wire::read(&shared.server, &mut parts, &bytes).await
    {
        drop(busy);
        return answer;
    }
    let answer = through_rmcp(rmcp, parts, bytes, busy).await;
    if session.is_none()
        && let Some(id) = answer.headers().get(SESSION_HEADER)
        && let Ok(id) = id.to_str()
    {
        shared.sessions.claim(id, caller.as_ref());
    }
    answer
}

/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The answer to a request naming a session this caller does not have
/// (rmcp's own answer to an unknown one).
fn no_session() -> Response<Body> {
    Response::builder()
        .status(StatusCode::NOT_FOUND)
        .body(
            Full::new(Bytes::from_static(b"Not Found: Session not found"))
                .map_err(|e| match e {})
                .boxed(),
        )
        .expect("a status and a body make a response")
}

/// `body` read whole, within [`HttpLimits::max_body_bytes`] and its time
/// (a base, and its length at the slowest rate allowed); the answer to a
/// body that is too large, broken or late otherwise.
async fn read_body<B>(
    parts: &hyper::http::request::Parts,
    body: B,
    limits: &HttpLimits,
) -> Result<Bytes, Response<Body>>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let max_body = limits.max_body_bytes;
    let length = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .unwrap_or(max_body as u64)
        .min(max_body as u64);
    let allowed = limits
        .body_timeout
        .saturating_add(std::time::Duration::from_secs_f64(
            length as f64 / limits.min_body_rate.max(1) as f64,
        ));
    // A body that came with its headers is read at the first poll: no timer
    // is set for it (setting one reaches for the runtime's timer wheel).
    let mut collect = std::pin::pin!(Limited::new(body, max_body).collect());
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let read = match first {
        Poll::Ready(done) => Ok(done),
        Poll::Pending => tokio::time::timeout(allowed, collect).await,
    };
    match read {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(closing(rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            -32600,
            format!("the request body exceeds {max_body} bytes"),
        ))),
        Ok(Err(e)) => Err(rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32700,
            format!("the request body could not be read: {e}"),
        )),
        Err(_) => Err(closing(rpc_error(
            StatusCode::REQUEST_TIMEOUT,
            Value::Null,
            -32600,
            format!(
                "the request body did not arrive within {} ms",
                allowed.as_millis()
            ),
        ))),
    }
}

/// `refusal`, sent once the request's body is read (within the same limits
/// as any body), so that a client still sending it reads the refusal rather
/// than a broken pipe; when the body cannot be read whole, the refusal
/// closes the connection.
async fn after_body<B>(
    parts: &hyper::http::request::Parts,
    body: B,
    limits: &HttpLimits,
    refusal: Response<Body>,
) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match read_body(parts, body, limits).await {
        Ok(_) => refusal,
        Err(_) => closing(refusal),
    }
}

/// `answer` with `Connection: close`.
fn closing(mut answer: Response<Body>) -> Response<Body> {
    answer.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    answer
}

/// A request rmcp answers, with the JSON-RPC error a body it could not read
/// as a message deserves in place of its 415.
async fn through_rmcp(
    rmcp: &StreamableHttpService<McpServer, CappedSessions>,
    parts: hyper::http::request::Parts,
    bytes: Bytes,
    busy: Option<Busy>,
) -> Response<Body> {
    // Boxed where it is made: rmcp's request future is kilobytes, and held
    // inline it would make every future around it as large, each copied
    // whole when it is made and moved (three copies a request).
    let response =
        Box::pin(rmcp.handle(Request::from_parts(parts, Full::new(bytes.clone())))).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE && !bytes.is_empty() {
        let why = response.into_body().collect().await.map(|b| b.to_bytes());
        let why = why
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        if let Some(reason) = why.strip_prefix("fail to deserialize request body") {
            return unreadable_message(&bytes, reason.trim());
        }
        return Response::builder()
            .status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
            .body(
                Full::new(Bytes::from(why.into_owned()))
                    .map_err(|e| match e {})
                    .boxed(),
            )
            .expect("a status and a body make a response");
    }
    if response.status() == StatusCode::BAD_REQUEST
        && !bytes.is_empty()
        && response
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .is_none()
    {
        let why = response.into_body().collect().await.map(|b| b.to_bytes());
        let why = why
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        return refused_message(&bytes, &why);
    }
    // Busy until the body (a stream of events, for some answers) is sent.
    response.map(|body| {
        body.map_frame(move |frame| {
            let _running = &busy;
            frame
        })
        .boxed()
    })
}

/// Headers a request must have once at most, and a `Host` that is a host
/// and port only: a proxy or a browser that sends two, or a `Host` with
/// user information (`evil.com@localhost`), makes the origin and host
/// checks read something other than what the request says.
fn strict_headers(headers: &hyper::HeaderMap) -> Result<(), String> {
    for name in [hyper::header::HOST, hyper::header::ORIGIN] {
        if headers.get_all(&name).iter().count() > 1 {
            return Err(format!("the request has more than one `{name}` header"));
        }
    }
    if let Some(host) = headers.get(hyper::header::HOST)
        && host.as_bytes().contains(&b'@')
    {
        return Err("the `Host` header is a host and a port, without user information".to_owned());
    }
    Ok(())
}

/// rmcp's plain-text 400 to a message (`Bad Request: Session ID is
/// required`, for a request of no session on a revision that has them) as a
/// JSON-RPC error with the message's id, and what to do about it.
fn refused_message(bytes: &[u8], why: &str) -> Response<Body> {
    let id = match serde_json::from_slice::<Value>(bytes)
        .ok()
        .as_ref()
        .and_then(|v| v.get("id"))
    {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let why = why.trim();
    let message = if why.contains("Session ID is required") {
        format!(
            "{why}: this request names no `Mcp-Session-Id`; send `initialize` first and \
             name the session its answer gives (2025-11-25 and earlier), or send a \
             2026-07-28 request (`MCP-Protocol-Version: 2026-07-28`, its `_meta` with \
             the protocol version and the client's capabilities), which needs no session"
        )
    } else {
        why.to_owned()
    };
    rpc_error(StatusCode::BAD_REQUEST, id, -32600, message)
}

/// The answer to a body that is not a JSON-RPC message: -32700 (id null) when
/// it is not JSON at all, -32600 with its id when it is JSON of another shape.
fn unreadable_message(bytes: &[u8], reason: &str) -> Response<Body> {
    match serde_json::from_slice::<Value>(bytes) {
        Err(e) => rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32700,
            format!("Parse error: {e}"),
        ),
        Ok(value) => {
            let id = match value.get("id") {
                Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
                _ => Value::Null,
            };
            rpc_error(
                StatusCode::BAD_REQUEST,
                id,
                -32600,
                format!("Invalid Request: not a JSON-RPC message ({reason})"),
            )
        }
    }
}
