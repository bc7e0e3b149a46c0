//! rmcp's in-memory sessions, capped (creating one more than the cap closes
//! the session used least recently), closed when idle, each the capability
//! of the caller that created it: a request naming a session is served only
//! for that caller. What the endpoint needs to answer a session's plain
//! `tools/call` itself (`direct.rs`) is kept here too: the protocol version
//! the session negotiated, whether its client can be asked nothing and
//! asked for no log lines, and its calls in flight, for the client's
//! `notifications/cancelled`. A session on 2025-11-25, on a server that runs
//! tasks, has rmcp's answers put in that revision's form of tasks
//! (`tasks_2025.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, CustomResult, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use crate::contract::watch::Cancel;
use crate::mcp::limits::HttpLimits;
use crate::mcp::server::McpServer;
use crate::mcp::tasks_2025;
use crate::model::caller::Caller;

/// rmcp's in-memory sessions, at most [`HttpLimits::max_sessions`] of them:
/// creating one more closes the session used least recently. A session
/// unused for [`HttpLimits::session_idle`] is closed here, not by rmcp
/// (whose clock sees only the requests it serves): the next request to the
/// endpoint after that time closes it.
pub(super) struct CappedSessions {
    inner: LocalSessionManager,
    max: usize,
    idle: Duration,
    /// Each session this manager created: its last use, as a tick of
    /// `clock`, and who created it.
    used: Mutex<HashMap<SessionId, Session>>,
    clock: AtomicU64,
    /// When sessions were last looked at for idleness, in milliseconds
    /// since `started`.
    swept: AtomicU64,
    started: Instant,
    /// The server, when it offers tasks to sessions on 2025-11-25: it puts
    /// their answers in that revision's form.
    tasks_2025: Option<McpServer>,
}

struct Session {
    at: u64,
    /// When it was last used.
    last: Instant,
    /// The caller that created it (`Some(None)`: a server without
    /// authentication, whose callers are all the server's own); `None`
    /// until the answer that names the session is sent.
    owner: Option<Option<Caller>>,
    /// The protocol version its `initialize` was answered with.
    version: Option<Arc<str>>,
    /// Whether its client declared neither elicitation nor sampling and
    /// never asked for log lines: nothing of a call needs rmcp's peer.
    plain: bool,
    /// Its calls answered by the endpoint and still running, by request id
    /// as JSON text.
    calls: Vec<(String, Cancel)>,
    /// Whether it has tasks in 2025-11-25's form.
    tasks_2025: bool,
}

/// What a session's plain `tools/call` is answered with, when the endpoint
/// answers it itself.
pub(super) struct Plain {
    /// The protocol version the session negotiated.
    pub(super) version: Arc<str>,
}

impl CappedSessions {
    pub(super) fn new(limits: &HttpLimits, server: &McpServer) -> CappedSessions {
        let mut inner = LocalSessionManager::default();
        // Idleness is ours to judge: a call answered by the endpoint never
        // reaches rmcp's session worker.
        inner.session_config.keep_alive = None;
        CappedSessions {
            inner,
            max: limits.max_sessions.max(1),
            idle: limits.session_idle,
            used: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
            swept: AtomicU64::new(0),
            started: Instant::now(),
            tasks_2025: server.offers_tasks_2025().then(|| server.clone()),
        }
    }

    /// Whether session `id` has tasks in 2025-11-25's form.
    pub(super) fn tasks_2025(&self, id: &str) -> bool {
        self.tasks_2025.is_some() && self.lock().get(id).is_some_and(|s| s.tasks_2025)
    }

    /// Session `id`'s answers `events`, put in 2025-11-25's form of tasks
    /// when the session has them.
    fn answers<S>(&self, id: &SessionId, events: S) -> Reshaped<S> {
        Reshaped {
            events,
            server: self.tasks_2025.clone().filter(|_| self.tasks_2025(id)),
        }
    }

    fn touch(&self, id: &SessionId) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(s) = self.lock().get_mut(id) {
            s.at = now;
            s.last = Instant::now();
        }
    }

    /// Session `id`, when `caller` may use it and a `tools/call` in it needs
    /// nothing of rmcp's: what to answer it with. Counts as a use.
    pub(super) fn plain(&self, id: &str, caller: Option<&Caller>) -> Option<Plain> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut used = self.lock();
        let s = used.get_mut(id)?;
        if !s.plain || !owned_by(s, caller) {
            return None;
        }
        s.at = now;
        s.last = Instant::now();
        Some(Plain {
            version: s.version.clone()?,
        })
    }

    /// A call of session `id`, request `request` (its id as JSON text),
    /// answered by the endpoint, is running: `cancel` stops it when the
    /// client cancels the request.
    pub(super) fn running(&self, id: &str, request: String, cancel: Cancel) {
        if let Some(s) = self.lock().get_mut(id) {
            s.calls.push((request, cancel));
        }
    }

    /// The call `request` of session `id` ended.
    pub(super) fn ended(&self, id: &str, request: &str) {
        if let Some(s) = self.lock().get_mut(id) {
            s.calls.retain(|(r, _)| r != request);
        }
    }

    /// The sessions unused for longer than the idle time (none running a
    /// call), forgotten here: to close. Looked for at most every eighth of
    /// that time; the next request after it closes them
    /// ([`CappedSessions::close_idle`]).
    fn idle(&self) -> Vec<SessionId> {
        let now = self.started.elapsed();
        let every = (self.idle / 8).max(Duration::from_millis(10));
        let last = Duration::from_millis(self.swept.load(Ordering::Relaxed));
        if now.saturating_sub(last) < every {
            return Vec::new();
        }
        self.swept.store(
            u64::try_from(now.as_millis()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        let mut used = self.lock();
        let idle: Vec<SessionId> = used
            .iter()
            .filter(|(_, s)| s.last.elapsed() > self.idle && s.calls.is_empty())
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            used.remove(id);
        }
        idle
    }

    /// Close the sessions idle for longer than [`HttpLimits::session_idle`]
    /// (see [`CappedSessions::idle`]), in a task of their own.
    pub(super) fn close_idle(self: &Arc<Self>) {
        let idle = self.idle();
        if idle.is_empty() {
            return;
        }
        let sessions = self.clone();
        tokio::spawn(async move { sessions.close(idle).await });
    }

    async fn close(&self, ids: Vec<SessionId>) {
        for id in ids {
            tracing::info!("MCP HTTP session {id} closed: idle for {:?}", self.idle);
            if let Err(e) = self.inner.close_session(&id).await {
                tracing::debug!("closing MCP HTTP session {id}: {e}");
            }
        }
    }

    /// Session `id`, just created by a request of `caller`, is theirs.
    pub(super) fn claim(&self, id: &str, caller: Option<&Caller>) {
        if let Some(s) = self.lock().get_mut(id)
            && s.owner.is_none()
        {
            s.owner = Some(caller.cloned());
        }
    }

    /// Whether session `id` was created by `caller` (the same principal:
    /// [`Caller::same_principal`]). A session this server did not create,
    /// or whose creating answer is not sent yet, is no one's.
    pub(super) fn belongs(&self, id: &str, caller: Option<&Caller>) -> bool {
        self.lock().get(id).is_some_and(|s| owned_by(s, caller))
    }

    /// What a message of session `id` tells of it: a `logging/setLevel`
    /// makes its calls go through rmcp (which sends the log lines); a
    /// `notifications/cancelled` stops a call the endpoint answers.
    fn heard(&self, id: &SessionId, message: &ClientJsonRpcMessage) {
        match message {
            ClientJsonRpcMessage::Request(r) => {
                if matches!(r.request, ClientRequest::SetLevelRequest(_))
                    && let Some(s) = self.lock().get_mut(id)
                {
                    s.plain = false;
                }
            }
            ClientJsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    let request = serde_json::to_string(&c.params.request_id).unwrap_or_default();
                    if let Some(s) = self.lock().get_mut(id) {
                        for (_, cancel) in s.calls.iter().filter(|(r, _)| *r == request) {
                            cancel.cancel();
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Session>> {
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
                    .min_by_key(|(_, s)| s.at)
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

/// Whether `s` was created by `caller` (the same principal).
fn owned_by(s: &Session, caller: Option<&Caller>) -> bool {
    match &s.owner {
        Some(None) => caller.is_none(),
        Some(Some(owner)) => caller.is_some_and(|c| owner.same_principal(c)),
        None => false,
    }
}

/// Whether the client of `initialize` can be asked nothing (elicitation,
/// sampling) during a call.
fn asks_nothing(message: &ClientJsonRpcMessage) -> bool {
    match message {
        ClientJsonRpcMessage::Request(r) => match &r.request {
            ClientRequest::InitializeRequest(i) => {
                let c = &i.params.capabilities;
                c.elicitation.is_none() && c.sampling.is_none()
            }
            _ => false,
        },
        _ => false,
    }
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let idle = self.idle();
        self.close(idle).await;
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(
            id.clone(),
            Session {
                at: now,
                last: Instant::now(),
                owner: None,
                version: None,
                plain: false,
                calls: Vec::new(),
                tasks_2025: false,
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        let plain = asks_nothing(&message);
        let mut answer = self.inner.initialize_session(id, message).await?;
        if let ServerJsonRpcMessage::Response(r) = &mut answer
            && let ServerResult::InitializeResult(i) = &r.result
        {
            let version = i.protocol_version.as_str();
            let tasks_2025 = version == tasks_2025::VERSION;
            if let Some(s) = self.lock().get_mut(id) {
                s.version = Some(version.into());
                s.plain = plain;
                s.tasks_2025 = tasks_2025;
            }
            if tasks_2025
                && let Some(server) = &self.tasks_2025
                && let Some(reshaped) = server.initialized_2025(i)
            {
                r.result = ServerResult::CustomResult(CustomResult(reshaped));
            }
        }
        Ok(answer)
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
        self.heard(id, &message);
        let events = self.inner.create_stream(id, message).await?;
        Ok(self.answers(id, events))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.heard(id, &message);
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
        let replay = self.inner.resume(id, last_event_id.clone()).await?;
        let replay = After {
            events: Box::pin(replay),
            last: Some(last_event_id),
        };
        Ok(self.answers(id, replay))
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

/// A resumed stream without the event its client named as the last it read:
/// rmcp 3.11 replays from that event, not after it (`sync` skips up to its
/// index, not past it), and the client would get it twice.
struct After {
    events: std::pin::Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>,
    /// The id of the event the client read last, until it is passed over.
    last: Option<String>,
}

impl Stream for After {
    type Item = ServerSseMessage;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<ServerSseMessage>> {
        loop {
            let next = self.events.as_mut().poll_next(cx);
            if let std::task::Poll::Ready(Some(m)) = &next
                && self.last.is_some()
                && m.event_id == self.last
            {
                self.last = None;
                continue;
            }
            return next;
        }
    }
}

/// A session's answers: those rmcp gives in 2026-07-28's form of tasks put
/// in 2025-11-25's, when `server` is there to do it.
struct Reshaped<S> {
    events: S,
    server: Option<McpServer>,
}

impl<S: Stream<Item = ServerSseMessage> + Unpin> Stream for Reshaped<S> {
    type Item = ServerSseMessage;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<ServerSseMessage>> {
        let this = &mut *self;
        let next = std::pin::Pin::new(&mut this.events).poll_next(cx);
        match (next, &this.server) {
            (std::task::Poll::Ready(Some(m)), Some(server)) => {
                std::task::Poll::Ready(Some(reshaped(m, server)))
            }
            (next, _) => next,
        }
    }
}

/// `event` in 2025-11-25's form of tasks (`McpServer::reshaped_2025`).
fn reshaped(mut event: ServerSseMessage, server: &McpServer) -> ServerSseMessage {
    if let Some(message) = &event.message
        && let Some(reshaped) = server.reshaped_2025(message)
    {
        event.message = Some(Arc::new(reshaped));
    }
    event
}
