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
//! In `sessions`, rmcp's sessions with a cap (the least recently used one is
//! closed to admit a new one; rmcp closes an idle one on its own).

mod service;
mod sessions;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hyper::Request;
use hyper::body::Incoming;
use tower_service::Service;

pub use self::service::McpService;
use super::McpServer;

/// Serve `server` on `listener` until the process ends (see
/// [`McpServer::serve_http`]).
pub(super) async fn serve(server: McpServer, listener: tokio::net::TcpListener) {
    let (limits, lowered) = (*server.http).clone().fitted();
    if let Some(why) = lowered {
        tracing::warn!("{why}");
    }
    let service = McpServer {
        http: Arc::new(limits.clone()),
        ..server
    }
    .into_service();
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
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let slot = admitted.slot();
            let handler = hyper::service::service_fn(move |mut request: Request<Incoming>| {
                // The service marks the connection busy while it runs a call.
                request.extensions_mut().insert(slot.clone());
                let mut service = service.clone();
                async move { Service::call(&mut service, request).await }
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
pub(super) struct Slot {
    conns: Arc<Conns>,
    id: u64,
}

impl Slot {
    /// The connection runs a call until the guard is dropped (with the
    /// response's body, once it is sent).
    pub(super) fn busy(&self) -> Busy {
        if let Some(c) = self.conns.lock().live.get_mut(&self.id) {
            c.busy += 1;
        }
        Busy(self.clone())
    }
}

pub(super) struct Busy(Slot);

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

