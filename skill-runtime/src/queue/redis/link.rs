//! One Redis server or a Redis Cluster, behind one type: the client, the
//! shared connection every request that does not block goes through, the
//! connections a blocking request holds, and the subscription idle workers
//! of a cluster listen on.
//!
//! A URL of one node is a server (`redis://h:6379/0`); several,
//! comma-separated, are a cluster's nodes (`redis://h1:7000,redis://h2:7001`),
//! any of which is enough to find the others. On a cluster every request goes
//! to the primary of its keys' slot, follows `MOVED`/`ASK`, and is sent again
//! after a failover once the slots are read anew.

use std::time::Duration;

use redis::aio::{
    ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection,
};
use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Cmd, Pipeline, RedisFuture, RedisResult, Value};

/// How to reach the store.
pub(super) enum Client {
    Server(Box<redis::Client>),
    Cluster(Box<Cluster>),
}

/// A cluster's clients.
pub(super) struct Cluster {
    client: ClusterClient,
    /// The same nodes, for connections that block (no response timeout of
    /// the client's own: the caller bounds the wait).
    waiting: ClusterClient,
    /// One client per node given, for the subscription.
    nodes: Vec<redis::Client>,
}

/// The URLs of a cluster's nodes, when `url` lists several; a node written
/// without a scheme takes the first one's scheme and credentials.
pub(super) fn nodes(url: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = url.split(',').map(str::trim).collect();
    if parts.len() < 2 {
        return None;
    }
    let first = parts[0];
    let head = first
        .find("://")
        .map(|s| match first[s + 3..].rfind('@') {
            Some(at) => &first[..s + 3 + at + 1],
            None => &first[..s + 3],
        })
        .unwrap_or("redis://");
    Some(
        parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| {
                if p.contains("://") {
                    (*p).to_owned()
                } else {
                    format!("{head}{p}")
                }
            })
            .collect(),
    )
}

impl Client {
    /// A client of `url`, checking server certificates against `ca` (PEM)
    /// when given.
    pub(super) fn open(url: &str, ca: Option<Vec<u8>>) -> RedisResult<Client> {
        let certs = |ca: Vec<u8>| redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(ca),
        };
        let Some(nodes) = nodes(url) else {
            return Ok(Client::Server(Box::new(match ca {
                None => redis::Client::open(url)?,
                Some(ca) => redis::Client::build_with_tls(url, certs(ca))?,
            })));
        };
        let build = |response: Duration| {
            let mut b = ClusterClientBuilder::new(nodes.iter().map(String::as_str))
                .connection_timeout(Duration::from_secs(2))
                .response_timeout(response)
                .retries(6)
                .min_retry_wait(50)
                .max_retry_wait(2_000);
            if let Some(ca) = &ca {
                b = b.certs(certs(ca.clone()));
            }
            b.build()
        };
        let clients = nodes
            .iter()
            .map(|n| match &ca {
                None => redis::Client::open(n.as_str()),
                Some(ca) => redis::Client::build_with_tls(n.as_str(), certs(ca.clone())),
            })
            .collect::<RedisResult<Vec<_>>>()?;
        Ok(Client::Cluster(Box::new(Cluster {
            client: build(Duration::from_secs(10))?,
            waiting: build(Duration::from_secs(3600))?,
            nodes: clients,
        })))
    }

    pub(super) fn is_cluster(&self) -> bool {
        matches!(self, Client::Cluster(_))
    }

    /// The shared connection: reconnects on its own.
    pub(super) async fn link(&self) -> RedisResult<Link> {
        match self {
            Client::Server(client) => {
                // Requests fail rather than wait for a server that is down;
                // the manager reconnects with backoff on the next request.
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_secs(2)))
                    .set_response_timeout(Some(Duration::from_secs(10)))
                    .set_number_of_retries(3)
                    .set_max_delay(Duration::from_secs(2));
                Ok(Link::Server(
                    client.get_connection_manager_with_config(config).await?,
                ))
            }
            Client::Cluster(c) => Ok(Link::Cluster(c.client.get_async_connection().await?)),
        }
    }

    /// A connection of its own, for a request that blocks.
    pub(super) async fn waiter(&self) -> RedisResult<Link> {
        match self {
            Client::Server(client) => {
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(Duration::from_secs(2)))
                    .set_response_timeout(None);
                Ok(Link::Waiter(
                    client
                        .get_multiplexed_async_connection_with_config(&config)
                        .await?,
                ))
            }
            Client::Cluster(c) => Ok(Link::Cluster(c.waiting.get_async_connection().await?)),
        }
    }

    /// A subscription to `channel` on the first node that answers (every
    /// node of a cluster hears what is published on any).
    pub(super) async fn subscribe(&self, channel: &str) -> RedisResult<redis::aio::PubSub> {
        let clients: Vec<&redis::Client> = match self {
            Client::Server(client) => vec![client],
            Client::Cluster(c) => c.nodes.iter().collect(),
        };
        let mut last = None;
        for client in clients {
            match client.get_async_pubsub().await {
                Ok(mut pubsub) => match pubsub.subscribe(channel).await {
                    Ok(()) => return Ok(pubsub),
                    Err(e) => last = Some(e),
                },
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| redis::RedisError::from((redis::ErrorKind::Io, "no node"))))
    }
}

/// A connection to the store, whichever it is.
#[derive(Clone)]
pub(super) enum Link {
    Server(ConnectionManager),
    Waiter(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Server(c) => c.req_packed_command(cmd),
            Link::Waiter(c) => c.req_packed_command(cmd),
            Link::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Server(c) => c.req_packed_commands(pipeline, offset, count),
            Link::Waiter(c) => c.req_packed_commands(pipeline, offset, count),
            Link::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Server(c) => c.get_db(),
            Link::Waiter(c) => c.get_db(),
            Link::Cluster(c) => c.get_db(),
        }
    }
}
