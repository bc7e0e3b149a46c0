//! rmcp's in-memory sessions, capped (creating one more than the cap closes
//! the session used least recently), each the capability of the caller that
//! created it: a request naming a session is served only for that caller.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use crate::mcp::limits::HttpLimits;
use crate::model::caller::Caller;

/// rmcp's in-memory sessions, at most [`HttpLimits::max_sessions`] of them:
/// creating one more closes the session used least recently. rmcp closes a
/// session idle for [`HttpLimits::session_idle`] on its own.
pub(super) struct CappedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Each session this manager created: its last use, as a tick of
    /// `clock`, and who created it.
    used: Mutex<HashMap<SessionId, Session>>,
    clock: AtomicU64,
}

struct Session {
    at: u64,
    /// The caller that created it (`Some(None)`: a server without
    /// authentication, whose callers are all the server's own); `None`
    /// until the answer that names the session is sent.
    owner: Option<Option<Caller>>,
}

impl CappedSessions {
    pub(super) fn new(limits: &HttpLimits) -> CappedSessions {
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
        if let Some(s) = self.lock().get_mut(id) {
            s.at = now;
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
        match self.lock().get(id).and_then(|s| s.owner.as_ref()) {
            Some(None) => caller.is_none(),
            Some(Some(owner)) => caller.is_some_and(|c| owner.same_principal(c)),
            None => false,
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

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(
            id.clone(),
            Session {
                at: now,
                owner: None,
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
