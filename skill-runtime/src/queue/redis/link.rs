//! One Redis server or a Redis Cluster, behind one type: the client, the
//! shared connection every request that does not block goes through, the
//! connections a blocking request holds, and the subscription idle workers
//! of a cluster listen on (shard channels: `keys.rs`).
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
use redis::{
    AsyncConnectionConfig, Cmd, Pipeline, ProtocolVersion, PushInfo, RedisFuture, RedisResult,
    Value,
};
use tokio::sync::mpsc::UnboundedReceiver;

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
    /// The nodes given and the CA to check them with, for the clients that
    /// listen (each hands its messages to a sender of its own).
    nodes: Vec<String>,
    ca: Option<Vec<u8>>,
}

/// A cluster's client reaching `nodes`, waiting `response` for an answer.
fn cluster_client(nodes: &[String], ca: Option<&[u8]>, response: Duration) -> ClusterClientBuilder {
    let mut b = ClusterClientBuilder::new(nodes.iter().map(String::as_str))
        .connection_timeout(Duration::from_secs(2))
        .response_timeout(response)
        .retries(6)
        .min_retry_wait(50)
        .max_retry_wait(2_000);
    if let Some(ca) = ca {
        b = b.certs(certs(ca.to_vec()));
    }
    b
}

fn certs(ca: Vec<u8>) -> redis::TlsCertificates {
    redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(ca),
    }
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
        let Some(nodes) = nodes(url) else {
            return Ok(Client::Server(Box::new(match ca {
                None => redis::Client::open(url)?,
                Some(ca) => redis::Client::build_with_tls(url, certs(ca))?,
            })));
        };
        let build = |response| cluster_client(&nodes, ca.as_deref(), response).build();
        Ok(Client::Cluster(Box::new(Cluster {
            client: build(Duration::from_secs(10))?,
            waiting: build(Duration::from_secs(3600))?,
            nodes,
            ca,
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

    /// On a cluster, a subscription to the shard channels `channels`, each
    /// on the node that serves its slot: every message, and every
    /// confirmation of a subscription made again after a failover or a
    /// change of slots (the client makes them), comes on the receiver, as
    /// long as the connection is kept. One server has no shard channels.
    pub(super) async fn subscribe_shards(
        &self,
        channels: &[String],
    ) -> RedisResult<(ClusterConnection, UnboundedReceiver<PushInfo>)> {
        let Client::Cluster(c) = self else {
            return Err(redis::RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "shard channels are a cluster's",
            )));
        };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut conn = cluster_client(&c.nodes, c.ca.as_deref(), Duration::from_secs(10))
            .use_protocol(ProtocolVersion::RESP3)
            .push_sender(tx)
            .build()?
            .get_async_connection()
            .await?;
        // One at a time: channels of different slots in one `SSUBSCRIBE`
        // are refused.
        for channel in channels {
            conn.ssubscribe(channel).await?;
        }
        Ok((conn, rx))
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
