//! A Redis Cluster of the test's own: three primaries with one replica each,
//! `redis-server --cluster-enabled yes` on free loopback ports, joined by
//! `redis-cli --cluster create`. Dropping it stops every node and removes
//! their data.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::fleet::{free_port, redis_server};

use crate::temp_dir;

/// One node of the cluster.
struct Node {
    port: u16,
    dir: std::path::PathBuf,
    child: Option<Child>,
    access: Access,
}

/// How clients and nodes reach the nodes.
#[derive(Clone, Default)]
pub struct Access {
    /// The default user's password, on every node (and between them).
    pub password: Option<String>,
    /// TLS only, for clients, replication and the cluster bus.
    pub tls: Option<Tls>,
}

/// The files of a TLS deployment.
#[derive(Clone)]
pub struct Tls {
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
    /// The authority that signed `cert`.
    pub ca: std::path::PathBuf,
}

impl Access {
    /// `redis-server`'s arguments for a node listening on `port`.
    fn server(&self, port: u16) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        match &self.tls {
            None => args.extend(["--port".into(), port.to_string()]),
            Some(t) => {
                for (k, v) in [
                    ("--port", "0".to_owned()),
                    ("--tls-port", port.to_string()),
                    ("--tls-cluster", "yes".into()),
                    ("--tls-replication", "yes".into()),
                    ("--tls-auth-clients", "no".into()),
                    ("--tls-cert-file", t.cert.display().to_string()),
                    ("--tls-key-file", t.key.display().to_string()),
                    ("--tls-ca-cert-file", t.ca.display().to_string()),
                ] {
                    args.extend([k.to_owned(), v]);
                }
            }
        }
        if let Some(p) = &self.password {
            args.extend([
                "--requirepass".into(),
                p.clone(),
                "--masterauth".into(),
                p.clone(),
            ]);
        }
        args
    }

    /// `redis-cli`'s arguments.
    fn cli(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(t) = &self.tls {
            args.extend([
                "--tls".into(),
                "--cacert".into(),
                t.ca.display().to_string(),
            ]);
        }
        if let Some(p) = &self.password {
            args.extend(["--no-auth-warning".into(), "-a".into(), p.clone()]);
        }
        args
    }
}

impl Node {
    fn spawn(&mut self) {
        let mut args: Vec<String> = self.access.server(self.port);
        args.extend(
            [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                // A primary that stops answering is replaced within a few
                // seconds.
                "--cluster-node-timeout",
                "1500",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
            ]
            .map(str::to_owned),
        );
        self.child = Some(redis_server(&self.dir, &args));
    }

    /// Whether it answers PING within a few seconds (false once it exited).
    fn answers(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.cli(&["PING"]).contains("PONG") {
                return true;
            }
            if let Some(c) = &mut self.child
                && let Ok(Some(_)) = c.try_wait()
            {
                self.child = None;
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(self.access.cli())
            .args(args)
            .output()
            .expect("redis-cli runs (Debian: it comes with redis-server)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Three primaries, each with a replica.
pub struct RedisCluster {
    nodes: Vec<Node>,
    access: Access,
}

impl RedisCluster {
    /// A fresh cluster, every slot served and every replica in sync.
    pub fn start(name: &str) -> RedisCluster {
        RedisCluster::start_with(name, None)
    }

    /// A fresh cluster whose nodes require `password` of the default user
    /// (and give it to each other).
    pub fn start_with(name: &str, password: Option<&str>) -> RedisCluster {
        RedisCluster::start_access(
            name,
            Access {
                password: password.map(str::to_owned),
                tls: None,
            },
        )
    }

    /// A fresh cluster reached as `access` says.
    pub fn start_access(name: &str, access: Access) -> RedisCluster {
        let mut nodes: Vec<Node> = (0..6)
            .map(|i| Node {
                port: 0,
                dir: temp_dir(&format!("cluster-{name}-{i}")),
                child: None,
                access: access.clone(),
            })
            .collect();
        for n in &mut nodes {
            // A port taken in between (or its bus port) makes the node exit:
            // another is tried.
            let started = (0..20).any(|_| {
                n.port = node_port();
                n.spawn();
                n.answers()
            });
            assert!(
                started,
                "a cluster node did not start; see {}",
                n.dir.display()
            );
        }
        let cluster = RedisCluster { nodes, access };
        let addrs: Vec<String> = cluster
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(cluster.access.cli())
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .output()
            .expect("redis-cli --cluster create runs");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster.wait_until_whole(Duration::from_secs(30));
        cluster
    }

    /// Wait until every live node sees every slot served and each primary
    /// has a replica in sync.
    pub fn wait_until_whole(&self, limit: Duration) {
        let whole = || {
            let live: Vec<&Node> = self.nodes.iter().filter(|n| n.child.is_some()).collect();
            live.iter()
                .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
                && self.primaries().iter().all(|p| {
                    let info = self.node(*p).cli(&["INFO", "replication"]);
                    info.contains("connected_slaves:1") && info.contains("state=online")
                })
        };
        wait_for(limit, whole).unwrap_or_else(|| {
            panic!(
                "the cluster is not whole after {} s: {}",
                limit.as_secs(),
                self.nodes
                    .iter()
                    .find(|n| n.child.is_some())
                    .map(|n| n.cli(&["CLUSTER", "NODES"]))
                    .unwrap_or_default()
            )
        });
    }

    fn node(&self, port: u16) -> &Node {
        self.nodes
            .iter()
            .find(|n| n.port == port)
            .expect("a node of this cluster")
    }

    /// The ports of the primaries now, as a live node sees them.
    pub fn primaries(&self) -> Vec<u16> {
        let Some(seen) = self.nodes.iter().find(|n| n.child.is_some()) else {
            return Vec::new();
        };
        seen.cli(&["CLUSTER", "NODES"])
            .lines()
            .filter(|l| l.contains("master") && !l.contains("fail"))
            .filter_map(|l| {
                let addr = l.split_whitespace().nth(1)?;
                let port = addr.split('@').next()?.rsplit(':').next()?;
                port.parse().ok()
            })
            .collect()
    }

    /// The nodes' URLs, comma-separated: what `--redis` takes for a cluster.
    pub fn url(&self) -> String {
        let user = self
            .access
            .password
            .as_ref()
            .map_or(String::new(), |p| format!(":{p}@"));
        let scheme = if self.access.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        self.nodes
            .iter()
            .map(|n| format!("{scheme}://{user}127.0.0.1:{}", n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `redis-cli -c ARGS...` (following redirections) on a live node.
    pub fn cli(&self, args: &[&str]) -> String {
        let node = self
            .nodes
            .iter()
            .find(|n| n.child.is_some())
            .expect("a live node");
        let out = Command::new("redis-cli")
            .args(["-c", "-h", "127.0.0.1", "-p", &node.port.to_string()])
            .args(self.access.cli())
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `redis-cli ARGS...` on each live node, without following
    /// redirections: what each node answers for itself.
    pub fn on_every_node(&self, args: &[&str]) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .map(|n| n.cli(args))
            .collect()
    }

    /// Empty every primary (their replicas follow).
    pub fn flush(&self) {
        for port in self.primaries() {
            self.node(port).cli(&["FLUSHALL"]);
        }
    }

    /// `kill -9` of the primary serving `key`'s slot; its port.
    pub fn kill_primary_of(&mut self, key: &str) -> u16 {
        let slot = self.cli(&["CLUSTER", "KEYSLOT", key]);
        let slot: u16 = slot.trim().parse().expect("a slot");
        let nodes = self.cli(&["CLUSTER", "NODES"]);
        let port = nodes
            .lines()
            .filter(|l| l.contains("master"))
            .find_map(|l| {
                let fields: Vec<&str> = l.split_whitespace().collect();
                let serves = fields.iter().skip(8).any(|range| {
                    let (a, b) = range.split_once('-').unwrap_or((range, range));
                    matches!((a.parse::<u16>(), b.parse::<u16>()), (Ok(a), Ok(b)) if a <= slot && slot <= b)
                });
                serves.then(|| fields[1].split('@').next()?.rsplit(':').next()?.parse().ok())?
            })
            .expect("a primary serves every slot");
        self.nodes
            .iter_mut()
            .find(|n| n.port == port)
            .expect("a node of this cluster")
            .kill();
        port
    }

    /// Start the node on `port` again, with its data: it rejoins the
    /// cluster (a replica of the primary that replaced it).
    pub fn restart_node(&mut self, port: u16) {
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port == port)
            .expect("a node of this cluster");
        node.kill();
        node.spawn();
    }

    /// Whether every live node sees every slot served.
    pub fn serving(&self) -> bool {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
    }

    /// Wait until a replica took over every slot of a dead primary.
    pub fn wait_for_failover(&self, limit: Duration) {
        wait_for(limit, || {
            self.nodes
                .iter()
                .filter(|n| n.child.is_some())
                .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        })
        .expect("a replica took over within the limit");
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            n.kill();
            let _ = std::fs::remove_dir_all(&n.dir);
        }
    }
}

/// A free loopback port whose cluster bus port (10,000 above) is free too.
fn node_port() -> u16 {
    loop {
        let port = free_port();
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

fn wait_for(limit: Duration, mut ok: impl FnMut() -> bool) -> Option<()> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if ok() {
            return Some(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}
