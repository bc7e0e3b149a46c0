//! The clients subscribed to resources, and telling them when one changes
//! ([`McpServer::resource_updated`](crate::mcp::McpServer::resource_updated),
//! a run's progress and end): each subscriber carries its caller's
//! principal, so a resource that is one caller's (a run) is told to that
//! caller's subscribers only.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{Notification, ResourceUpdatedNotificationParam, ServerNotification};
use rmcp::service::{Peer, RoleServer, SubscriptionSink};

use crate::sync::lock;

/// The clients subscribed to resources, across the server's sessions: a
/// 2025-11-25 session by `resources/subscribe` (its set of URIs grows and
/// shrinks), a 2026-07-28 client by a `subscriptions/listen` stream (its
/// URIs fixed when the stream opens, until it closes).
#[derive(Default)]
pub(crate) struct Subscribers {
    held: Mutex<Vec<Subscriber>>,
    streams: AtomicU64,
}

/// Who is told, and of what; each with the principal of the caller that
/// subscribed, so a run's updates reach its own caller only.
enum Subscriber {
    Session {
        uris: Arc<Mutex<BTreeSet<String>>>,
        peer: Peer<RoleServer>,
        principal: String,
    },
    Stream {
        id: u64,
        uris: Vec<String>,
        sink: SubscriptionSink,
        principal: String,
    },
}

impl Subscriber {
    fn wants(&self, uri: &str) -> bool {
        match self {
            Subscriber::Session { uris, .. } => lock(uris).contains(uri),
            Subscriber::Stream { uris, .. } => uris.iter().any(|u| u == uri),
        }
    }

    fn gone(&self) -> bool {
        match self {
            Subscriber::Session { peer, .. } => peer.is_transport_closed(),
            // Taken out when its stream closes (`Subscribers::unlisten`).
            Subscriber::Stream { .. } => false,
        }
    }

    /// Whether it may hear of a resource of `owner` (`None`: anyone's).
    fn may_hear(&self, owner: Option<&str>) -> bool {
        let (Subscriber::Session { principal, .. } | Subscriber::Stream { principal, .. }) = self;
        owner.is_none_or(|o| o == principal)
    }
}

impl Subscribers {
    /// The session of `uris` and `peer`, its caller `principal`,
    /// subscribes to `uri`.
    pub(crate) fn subscribe(
        &self,
        uris: &Arc<Mutex<BTreeSet<String>>>,
        peer: &Peer<RoleServer>,
        principal: String,
        uri: &str,
    ) {
        lock(uris).insert(uri.to_owned());
        let mut held = lock(&self.held);
        held.retain(|s| !s.gone());
        let known = held
            .iter()
            .any(|s| matches!(s, Subscriber::Session { uris: u, .. } if Arc::ptr_eq(u, uris)));
        if !known {
            held.push(Subscriber::Session {
                uris: uris.clone(),
                peer: peer.clone(),
                principal,
            });
        }
    }

    /// A `subscriptions/listen` stream of caller `principal` opened for
    /// `uris`: told until [`Subscribers::unlisten`] of the id returned.
    pub(crate) fn listen(
        &self,
        uris: Vec<String>,
        sink: SubscriptionSink,
        principal: String,
    ) -> u64 {
        let id = self.streams.fetch_add(1, Ordering::Relaxed);
        let mut held = lock(&self.held);
        held.retain(|s| !s.gone());
        held.push(Subscriber::Stream {
            id,
            uris,
            sink,
            principal,
        });
        id
    }

    /// The stream `id` closed.
    pub(crate) fn unlisten(&self, id: u64) {
        lock(&self.held).retain(|s| !matches!(s, Subscriber::Stream { id: i, .. } if *i == id));
    }

    /// Whether any client is subscribed to anything.
    pub(crate) fn any(&self) -> bool {
        !lock(&self.held).is_empty()
    }

    /// Whether any client is subscribed to `uri`.
    pub(crate) fn wanted(&self, uri: &str) -> bool {
        lock(&self.held).iter().any(|s| s.wants(uri) && !s.gone())
    }

    /// Tell every client subscribed to `uri` that it changed; the number
    /// told. `owner`: the principal whose resource it is (a run), told to
    /// that principal's subscribers only; `None` for a resource anyone may
    /// read.
    pub(crate) async fn updated(&self, uri: &str, owner: Option<&str>) -> usize {
        enum To {
            Peer(Peer<RoleServer>),
            Sink(SubscriptionSink),
        }
        let told: Vec<To> = {
            let mut held = lock(&self.held);
            held.retain(|s| !s.gone());
            held.iter()
                .filter(|s| s.wants(uri) && s.may_hear(owner))
                .map(|s| match s {
                    Subscriber::Session { peer, .. } => To::Peer(peer.clone()),
                    Subscriber::Stream { sink, .. } => To::Sink(sink.clone()),
                })
                .collect()
        };
        let mut reached = 0;
        for to in told {
            let param = ResourceUpdatedNotificationParam::new(uri);
            let sent = match to {
                To::Peer(peer) => peer.notify_resource_updated(param).await.is_ok(),
                To::Sink(sink) => sink
                    .send(ServerNotification::ResourceUpdatedNotification(
                        Notification::new(param),
                    ))
                    .await
                    .is_ok(),
            };
            reached += usize::from(sent);
        }
        reached
    }
}
