//! The Streamable HTTP transport: rmcp's tower service behind hyper's HTTP/1
//! server, with the limits a server reachable from a browser or a hostile
//! client needs. Every limit is one of
//! [`HttpLimits`](crate::mcp::HttpLimits)' fields.
//!
//! Here, what belongs to connections: accepting, the connection cap (an idle
//! connection gives its place to a new one), the header timeout, no Nagle
//! delay. In `service`, what each request goes through ([`McpService`], also
//! mountable in any axum or tower app): strict `Host` and `Origin`, the body
//! read within its size and time, a JSON-RPC error for a body that is not a
//! message (rmcp answers 415, which names the media type, not the mistake).
//! In `direct`, the hot path: a plain stateless `tools/call` answered
//! without rmcp's per-request machinery, as rmcp would answer it.
//! In `sessions`, rmcp's sessions with a cap (the least recently used one is
//! closed to admit a new one; rmcp closes an idle one on its own). In
//! `task_wire`, what a 2025-11-25 session says of tasks that rmcp cannot read.

mod answers;
mod conns;
mod direct;
mod rates;
pub(crate) mod reply;
mod service;
mod sessions;
mod task_wire;

use hyper::Request;
use hyper::body::Incoming;
use tower_service::Service;

use self::conns::Conns;
pub use self::service::McpService;
use crate::mcp::limits::HttpLimits;
use crate::mcp::server::McpServer;

impl McpServer {
    /// Serve the Streamable HTTP transport on `listener` until the process ends
    /// (every path is the MCP endpoint; clients are told `/mcp`). Only loopback
    /// names are accepted in the `Host` header and only loopback or allowed
    /// origins in `Origin` (DNS rebinding protection, 403 otherwise); at most
    /// [`HttpLimits::max_connections`] connections are served at once, and a
    /// connection that does not send its request's headers within
    /// [`HttpLimits::header_timeout`] is closed. Sessions are kept in memory,
    /// at most [`HttpLimits::max_sessions`] (the least recently used one is
    /// closed to admit another), each until idle for
    /// [`HttpLimits::session_idle`]. A body that is not JSON is answered 400
    /// with a JSON-RPC parse error (-32700), JSON that is not a message 400
    /// with -32600, a body over [`HttpLimits::max_body_bytes`] 413.
    /// A failed `accept` (out of descriptors, a connection reset before it was
    /// taken) is logged and serving goes on.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub async fn serve_http(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        serve(self, listener).await;
        Ok(())
    }

    /// The Streamable HTTP endpoint as a tower service, to mount in an axum
    /// or tower app at any path ([`McpService`]); [`McpServer::serve_http`]
    /// serves the same service.
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub fn into_service(self) -> McpService {
        McpService::new(self)
    }
}

/// Serve `server` on `listener` until the process ends (see
/// [`McpServer::serve_http`]).
pub(super) async fn serve(server: McpServer, listener: tokio::net::TcpListener) {
    let limits = (*server.http).clone();
    serve_app(listener, server.into_service(), limits).await;
}

/// Serve `app` (an axum `Router`, or any tower service of HTTP requests) on
/// `listener` until the process ends, with the connection limits of
/// `limits` that an app mounting [`McpService`] needs as much as
/// [`McpServer::serve_http`] does: at most
/// [`HttpLimits::max_connections`] connections (fitted under the process's
/// descriptor limit; past the cap, the connection idle longest is closed to
/// admit a new one, never one running an MCP call), each closed when it
/// does not send a request's headers within [`HttpLimits::header_timeout`]
/// (an idle kept-alive connection too), `TCP_NODELAY` on every connection.
/// A failed `accept` (out of descriptors, a connection reset before it was
/// taken) is logged and serving goes on.
///
/// [`HttpLimits::max_connections`]: crate::mcp::HttpLimits::max_connections
/// [`HttpLimits::header_timeout`]: crate::mcp::HttpLimits::header_timeout
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub async fn serve_app<S, B>(listener: tokio::net::TcpListener, app: S, limits: HttpLimits)
where
    S: Service<Request<Incoming>, Response = hyper::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (limits, lowered) = limits.fitted();
    if let Some(why) = lowered {
        tracing::warn!("{why}");
    }
    let conns = Conns::new(limits.max_connections);
    loop {
        // Accepted first, always: the cap is kept by closing an idle
        // connection, so a client never waits behind silent ones.
        #[cfg_attr(
            not(feature = "otel"),
            expect(unused_variables, reason = "spans name it")
        )]
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!("HTTP accept failed: {e}");
                // Out of descriptors clears only as connections close.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        // A response's head and body go out at once, not 40 ms apart
        // (Nagle's algorithm waiting on the client's delayed ACK).
        let _ = stream.set_nodelay(true);
        let admitted = conns.admit().await;
        let app = app.clone();
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let slot = admitted.slot();
            let handler = hyper::service::service_fn(move |mut request: Request<Incoming>| {
                // The MCP service marks the connection busy while it runs a
                // call.
                request.extensions_mut().insert(slot.clone());
                #[cfg(feature = "otel")]
                request
                    .extensions_mut()
                    .insert(crate::mcp::spans::Peer(peer));
                let mut app = app.clone();
                async move {
                    std::future::poll_fn(|cx| app.poll_ready(cx)).await?;
                    app.call(request).await
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let serving = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(io, handler);
            tokio::select! {
                served = serving => {
                    if let Err(e) = served {
                        tracing::debug!("HTTP connection ended: {e}");
                    }
                }
                () = admitted.evicted() => {
                    tracing::debug!("HTTP connection closed to admit a newer one");
                }
            }
        });
    }
}
