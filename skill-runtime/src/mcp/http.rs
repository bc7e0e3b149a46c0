//! The Streamable HTTP transport: rmcp's tower service behind hyper's HTTP/1
//! server, with the limits a server reachable from a browser or a hostile
//! client needs. Every limit is one of [`HttpLimits`]' fields.
//!
//! Two things rmcp leaves to its user are done here: sessions are capped (the
//! least recently used one is closed to admit a new one, and an idle one is
//! closed by rmcp after [`HttpLimits::session_idle`]), and a body that is not
//! a JSON-RPC message gets a JSON-RPC error with status 400 (rmcp answers 415,
//! which names the media type, not the mistake).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_core::Stream;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};
use rmcp::transport::streamable_http_server::{
    RestoreOutcome, SessionId, SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use serde_json::{Value, json};

use super::{HttpLimits, LOOPBACK_ORIGINS, McpServer};

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// Serve `server` on `listener` until the process ends (see
/// [`McpServer::serve_http`]).
pub(super) async fn serve(server: McpServer, listener: tokio::net::TcpListener) {
    let (limits, lowered) = (*server.http).clone().fitted();
    if let Some(why) = lowered {
        tracing::warn!("{why}");
    }
    let limits = Arc::new(limits);
    let origins = LOOPBACK_ORIGINS
        .iter()
        .map(|o| (*o).to_owned())
        .chain(limits.allowed_origins.iter().cloned());
    let sessions = CappedSessions::new(&limits);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(sessions),
        StreamableHttpServerConfig::default()
            .with_allowed_origins(origins)
            .with_max_request_body_bytes(limits.max_body_bytes),
    );
    let conns = Conns::new(limits.max_connections);
    loop {
        // Accepted first, always: the cap is kept by closing an idle
        // connection, so a client never waits behind silent ones.
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("MCP HTTP accept failed: {e}");
                // Out of descriptors clears only as connections close.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        // A response's head and body go out at once, not 40 ms apart
        // (Nagle's algorithm waiting on the client's delayed ACK).
        let _ = stream.set_nodelay(true);
        let admitted = conns.admit().await;
        let service = service.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            let slot = admitted.slot();
            let header_timeout = limits.header_timeout;
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let (service, limits, slot) = (service.clone(), limits.clone(), slot.clone());
                async move { Ok::<_, Infallible>(handle(service, request, &limits, &slot).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let serving = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(io, handler);
            tokio::select! {
                served = serving => {
                    if let Err(e) = served {
                        tracing::debug!("MCP HTTP connection ended: {e}");
                    }
                }
                () = admitted.evicted() => {
                    tracing::debug!("MCP HTTP connection closed to admit a newer one");
                }
            }
        });
    }
}

/// The connections being served, at most `cap`, and what each is doing: one
/// waiting for a request or reading one can be closed to admit a new
/// connection; one running a call (until its response is sent) cannot.
struct Conns {
    cap: usize,
    table: Mutex<Table>,
    /// A connection ended or went idle.
    changed: tokio::sync::Notify,
}

#[derive(Default)]
struct Table {
    next: u64,
    live: HashMap<u64, Live>,
}

struct Live {
    /// Calls running on it.
    busy: u32,
    /// Since when it has run none.
    idle_since: std::time::Instant,
    /// Told when it is closed to admit another.
    evict: Arc<tokio::sync::Notify>,
}

impl Conns {
    fn new(cap: usize) -> Arc<Conns> {
        Arc::new(Conns {
            cap: cap.max(1),
            table: Mutex::default(),
            changed: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // The table holds plain counters: a panic elsewhere leaves it consistent.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection: a free one, or the one of the idle
    /// connection idle longest (closed); when every connection is running a
    /// call, the first to end or go idle.
    async fn admit(self: &Arc<Conns>) -> Admitted {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut t = self.lock();
                if t.live.len() >= self.cap {
                    let oldest = t
                        .live
                        .iter()
                        .filter(|(_, c)| c.busy == 0)
                        .min_by_key(|(_, c)| c.idle_since)
                        .map(|(id, _)| *id);
                    if let Some(id) = oldest
                        && let Some(gone) = t.live.remove(&id)
                    {
                        gone.evict.notify_one();
                    }
                }
                if t.live.len() < self.cap {
                    let id = t.next;
                    t.next += 1;
                    let evict = Arc::new(tokio::sync::Notify::new());
                    t.live.insert(
                        id,
                        Live {
                            busy: 0,
                            idle_since: std::time::Instant::now(),
                            evict: evict.clone(),
                        },
                    );
                    return Admitted {
                        conns: self.clone(),
                        id,
                        evict,
                    };
                }
            }
            changed.await;
        }
    }
}

/// A connection's place among those served; given back when dropped.
struct Admitted {
    conns: Arc<Conns>,
    id: u64,
    evict: Arc<tokio::sync::Notify>,
}

impl Admitted {
    /// Completes when the connection is closed to admit another.
    async fn evicted(&self) {
        self.evict.notified().await;
    }

    fn slot(&self) -> Slot {
        Slot {
            conns: self.conns.clone(),
            id: self.id,
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.conns.lock().live.remove(&self.id);
        self.conns.changed.notify_waiters();
    }
}

/// What a request's handler knows of its connection.
#[derive(Clone)]
struct Slot {
    conns: Arc<Conns>,
    id: u64,
}

impl Slot {
    /// The connection runs a call until the guard is dropped (with the
    /// response's body, once it is sent).
    fn busy(&self) -> Busy {
        if let Some(c) = self.conns.lock().live.get_mut(&self.id) {
            c.busy += 1;
        }
        Busy(self.clone())
    }
}

struct Busy(Slot);

impl Drop for Busy {
    fn drop(&mut self) {
        let conns = &self.0.conns;
        let idle = match conns.lock().live.get_mut(&self.0.id) {
            Some(c) => {
                c.busy = c.busy.saturating_sub(1);
                if c.busy == 0 {
                    c.idle_since = std::time::Instant::now();
                }
                c.busy == 0
            }
            None => false,
        };
        if idle {
            conns.changed.notify_waiters();
        }
    }
}

/// One request: its `Host` and `Origin` read strictly, the body read whole
/// (up to `max_body_bytes`, within its time), handed to rmcp, and rmcp's
/// answer to a body it could not read as a message turned into the JSON-RPC
/// error the body deserves.
async fn handle<S>(
    mut service: S,
    request: Request<Incoming>,
    limits: &HttpLimits,
    slot: &Slot,
) -> Response<Body>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Body>, Error = Infallible>,
{
    let (parts, body) = request.into_parts();
    if let Err(why) = strict_headers(&parts.headers) {
        return rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32600, why);
    }
    let max_body = limits.max_body_bytes;
    // The body's time: a base, and its length at the slowest rate allowed.
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
    let read = tokio::time::timeout(allowed, Limited::new(body, max_body).collect()).await;
    let bytes = match read {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                -32600,
                format!("the request body exceeds {max_body} bytes"),
            );
        }
        Ok(Err(e)) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                format!("the request body could not be read: {e}"),
            );
        }
        Err(_) => {
            let mut answer = rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                Value::Null,
                -32600,
                format!(
                    "the request body did not arrive within {} ms",
                    allowed.as_millis()
                ),
            );
            answer.headers_mut().insert(
                hyper::header::CONNECTION,
                hyper::header::HeaderValue::from_static("close"),
            );
            return answer;
        }
    };
    let busy = slot.busy();
    let response = match service
        .call(Request::from_parts(parts, Full::new(bytes.clone())))
        .await
    {
        Ok(response) => response,
        Err(never) => match never {},
    };
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

fn rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(
            Full::new(Bytes::from(body.to_string()))
                .map_err(|e| match e {})
                .boxed(),
        )
        .expect("a status, a header and a body make a response")
}

/// rmcp's in-memory sessions, at most [`HttpLimits::max_sessions`] of them:
/// creating one more closes the session used least recently. rmcp closes a
/// session idle for [`HttpLimits::session_idle`] on its own.
struct CappedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Last use of each session this manager created, as a tick of `clock`.
    used: Mutex<HashMap<SessionId, u64>>,
    clock: AtomicU64,
}

impl CappedSessions {
    fn new(limits: &HttpLimits) -> CappedSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.session_idle);
        CappedSessions {
            inner,
            max: limits.max_sessions.max(1),
            used: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
        }
    }

    fn touch(&self, id: &SessionId) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(at) = self.lock().get_mut(id) {
            *at = now;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, u64>> {
        // The map holds plain ticks: a panic elsewhere leaves it consistent.
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forget sessions rmcp has closed (idle, or deleted by their client),
    /// then close the least recently used one while the cap is reached.
    async fn make_room(&self) {
        if self.lock().len() < self.max {
            return;
        }
        let live: std::collections::HashSet<SessionId> =
            self.inner.sessions.read().await.keys().cloned().collect();
        let evicted = {
            let mut used = self.lock();
            used.retain(|id, _| live.contains(id));
            let mut evicted = Vec::new();
            while used.len() >= self.max {
                let Some(oldest) = used
                    .iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(id, _)| id.clone())
                else {
                    break;
                };
                used.remove(&oldest);
                evicted.push(oldest);
            }
            evicted
        };
        for id in evicted {
            tracing::info!(
                "MCP HTTP session {id} closed: the session cap ({}) was reached",
                self.max
            );
            if let Err(e) = self.inner.close_session(&id).await {
                tracing::debug!("closing MCP HTTP session {id}: {e}");
            }
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id.clone(), now);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
