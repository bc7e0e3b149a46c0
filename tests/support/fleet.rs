//! Real components for the fleet tests: a `redis-server` on a free loopback
//! port (its data in a directory of its own, removed afterwards), and worker
//! processes of the example app.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::{cargo, root, run_ok, temp_dir};

/// A `redis-server` of the test's own. Dropping it stops it and removes its
/// data.
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    aof: bool,
    /// More `redis-server` arguments (TLS, a password).
    extra: Vec<String>,
    /// The default user's password, when the server requires one.
    password: Option<String>,
    child: Option<Child>,
}

impl RedisServer {
    /// A fresh server that keeps nothing on disk.
    pub fn start(name: &str) -> RedisServer {
        RedisServer::launch(name, false)
    }

    /// A fresh server that writes every change to its append-only file
    /// (synced at each write), so a restart finds the data again.
    pub fn start_durable(name: &str) -> RedisServer {
        RedisServer::launch(name, true)
    }

    fn launch(name: &str, aof: bool) -> RedisServer {
        RedisServer::launch_with(name, aof, |_, _| Vec::new(), None)
    }

    /// A fresh server started with the arguments `extra` gives for its data
    /// directory and port (`--tls-port`, ...), whose default user needs
    /// `password` when there is one.
    pub fn start_with(
        name: &str,
        extra: impl Fn(&Path, u16) -> Vec<String>,
        password: Option<&str>,
    ) -> RedisServer {
        RedisServer::launch_with(name, false, extra, password)
    }

    fn launch_with(
        name: &str,
        aof: bool,
        extra: impl Fn(&Path, u16) -> Vec<String>,
        password: Option<&str>,
    ) -> RedisServer {
        let dir = temp_dir(&format!("redis-{name}"));
        for _ in 0..20 {
            let port = free_port();
            let mut server = RedisServer {
                port,
                dir: dir.clone(),
                aof,
                extra: extra(&dir, port),
                password: password.map(str::to_owned),
                child: None,
            };
            if server.spawn() {
                return server;
            }
        }
        panic!(
            "redis-server did not start on any free port; see {}",
            dir.display()
        );
    }

    /// Start the process; whether it answers PING.
    fn spawn(&mut self) -> bool {
        let mut args = vec!["--port".to_owned(), self.port.to_string()];
        let aof: &[&str] = if self.aof {
            &["--appendonly", "yes", "--appendfsync", "always"]
        } else {
            &["--appendonly", "no"]
        };
        args.extend(aof.iter().map(|a| (*a).to_owned()));
        args.extend(self.extra.iter().cloned());
        if let Some(p) = &self.password {
            args.extend(["--requirepass".to_owned(), p.clone()]);
        }
        self.child = Some(redis_server(&self.dir, &args));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ping(self.port, self.password.as_deref()) {
                return true;
            }
            if let Some(c) = &mut self.child
                && let Ok(Some(_)) = c.try_wait()
            {
                // Exited: most likely the port was taken in between.
                self.child = None;
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// `redis-cli ARGS...` against this server: its standard output.
    pub fn cli(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("redis-cli");
        cmd.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]);
        if let Some(p) = &self.password {
            cmd.args(["--no-auth-warning", "-a", p]);
        }
        let out = cmd
            .args(args)
            .output()
            .expect("redis-cli runs (Debian: it comes with redis-server)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stop the server (a clean shutdown: a durable server writes its data).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
            let _ = c.wait();
        }
    }

    /// Start it again on the same port, with the same data directory.
    pub fn restart(&mut self) {
        self.stop();
        assert!(
            self.spawn(),
            "redis-server did not start again on port {}",
            self.port
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn ping(port: u16, password: Option<&str>) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let (request, expect): (String, &[u8]) = match password {
        None => ("PING\r\n".to_owned(), b"+PONG\r\n"),
        Some(p) => (format!("AUTH {p}\r\nPING\r\n"), b"+OK\r\n+PONG\r\n"),
    };
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut buf = vec![0u8; expect.len()];
    s.read_exact(&mut buf).is_ok() && buf == expect
}

/// A new API key named `name` in `file`, with `options` (`--grant`,
/// `--role`, `--level`, ...), made by the CLI as an operator would: the key,
/// as `api-key new` prints it once.
pub fn api_key(file: &Path, name: &str, options: &[&str]) -> String {
    let out = run_ok(
        Command::new(app())
            .args(["api-key", "new", name, "--file"])
            .arg(file)
            .args(options),
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `skill-examples enqueue ARGS... --redis URL`, as an operator would queue
/// a job: the job's id, as the CLI prints it.
pub fn enqueue_cli(url: &str, args: &[&str]) -> String {
    let out = run_ok(
        Command::new(app())
            .arg("enqueue")
            .args(args)
            .args(["--redis", url]),
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The example app's binary, built once per test binary.
pub fn app() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
            root().join("target/debug/skill-examples")
        })
        .clone()
}

/// A copy of the example data, for jobs that write (the outbox).
pub fn data_copy(name: &str) -> PathBuf {
    let dir = temp_dir(&format!("data-{name}"));
    copy_dir(&root().join("examples/seed-skills/data"), &dir);
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create data copy");
    for e in std::fs::read_dir(from).expect("example data").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy example data");
        }
    }
}

/// A worker process of the example app. Dropping it kills it.
pub struct WorkerProcess {
    child: Option<Child>,
    /// Its name in the fleet, as its first line of standard error says.
    pub name: String,
    /// That line.
    pub first: String,
    /// The lines of standard error after the first.
    said: Arc<Mutex<Vec<String>>>,
}

impl WorkerProcess {
    /// `skill-examples worker --redis URL ARGS...`, started and reporting in.
    pub fn start(url: &str, args: &[&str]) -> WorkerProcess {
        WorkerProcess::start_binary(&app(), url, args)
    }

    /// `BINARY worker --redis URL ARGS...` (a release build, for benchmarks).
    pub fn start_binary(binary: &Path, url: &str, args: &[&str]) -> WorkerProcess {
        WorkerProcess::start_with(binary, url, args, &[])
    }

    /// `skill-examples worker --redis URL ARGS...` with variables `env` set.
    pub fn start_env(url: &str, args: &[&str], env: &[(&str, &str)]) -> WorkerProcess {
        WorkerProcess::start_with(&app(), url, args, env)
    }

    fn start_with(binary: &Path, url: &str, args: &[&str], env: &[(&str, &str)]) -> WorkerProcess {
        let mut child = Command::new(binary)
            .arg("worker")
            .arg("--redis")
            .arg(url)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a worker");
        let mut err = BufReader::new(child.stderr.take().expect("piped stderr"));
        // Warnings may come before the line that says it serves (a key of
        // the wrong type, found while it sets up): kept with the rest.
        let mut before = Vec::new();
        let (name, first) = loop {
            let mut line = String::new();
            let n = err
                .read_line(&mut line)
                .expect("the worker says it started");
            assert!(n > 0, "the worker exited: {before:?}");
            if let Some(name) = line
                .strip_prefix("worker ")
                .and_then(|r| r.split(':').next())
            {
                break (name.to_owned(), line.trim_end().to_owned());
            }
            before.push(line.trim_end().to_owned());
        };
        // The rest of its standard error (warnings), passed on as it comes,
        // so that it never blocks and a failing test shows it.
        let tag = name.clone();
        let said = Arc::new(Mutex::new(before));
        let keep = said.clone();
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                eprintln!("[{tag}] {line}");
                keep.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
        });
        WorkerProcess {
            child: Some(child),
            name,
            first,
            said,
        }
    }

    /// What it said on standard error after its first line, so far.
    pub fn said(&self) -> Vec<String> {
        self.said.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// `kill -9`: no chance to hand anything back.
    pub fn kill_hard(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGSTOP: the process stops answering, holding what it holds.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT: it goes on where it stopped.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, which: &str) {
        let status = Command::new("kill")
            .arg(which)
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {which} {}", self.pid());
    }

    /// Wait up to `limit` for a line of standard error containing `text`.
    pub fn wait_to_say(&self, text: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.said().iter().any(|l| l.contains(text)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// SIGTERM, and wait for a graceful exit; whether it exited with success.
    pub fn stop(&mut self) -> bool {
        let Some(mut c) = self.child.take() else {
            return false;
        };
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(c.id().to_string())
            .status();
        let ok = c.wait().is_ok_and(|s| s.success());
        // Its last words reach the reader thread just after it exits.
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && !self.said().iter().any(|l| l.contains("stopped")) {
            std::thread::sleep(Duration::from_millis(5));
        }
        ok
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        // A paused process is killed all the same.
        self.kill_hard();
    }
}

/// The stores a fleet runs on: the fleet's tests run each body on both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `redis-server` of the test's own.
    Redis,
    /// A PostgreSQL cluster of the test's own.
    Postgres,
    /// A Redis Cluster of the test's own: three primaries, one replica each.
    Cluster,
}

impl Kind {
    /// A fresh store of this kind (a Redis that keeps nothing on disk).
    pub fn start(self, name: &str) -> Store {
        match self {
            Kind::Redis => Store::Redis(RedisServer::start(name)),
            Kind::Postgres => Store::Postgres(crate::postgres::PostgresServer::start(name)),
            Kind::Cluster => Store::Cluster(crate::cluster::RedisCluster::start(name)),
        }
    }

    /// A fresh store that finds its data again after a restart (a Redis
    /// that writes every change to its append-only file; PostgreSQL always
    /// does).
    pub fn start_durable(self, name: &str) -> Store {
        match self {
            Kind::Redis => Store::Redis(RedisServer::start_durable(name)),
            Kind::Postgres | Kind::Cluster => self.start(name),
        }
    }

    /// `name` made unique to this kind, for the test's directories (both
    /// kinds' tests run at once in one process).
    pub fn tag(self, name: &str) -> String {
        match self {
            Kind::Redis => format!("redis-{name}"),
            Kind::Postgres => format!("pg-{name}"),
            Kind::Cluster => format!("cluster-{name}"),
        }
    }

    /// How messages name a store of this kind: `Redis`, `PostgreSQL`.
    pub fn shown(self) -> &'static str {
        match self {
            Kind::Redis | Kind::Cluster => "Redis",
            Kind::Postgres => "PostgreSQL",
        }
    }
}

/// A store of the test's own. Dropping it stops it and removes its data.
pub enum Store {
    Redis(RedisServer),
    Postgres(crate::postgres::PostgresServer),
    Cluster(crate::cluster::RedisCluster),
}

impl Store {
    /// Its URL, which `--redis` and `Fleet::connect` take.
    pub fn url(&self) -> String {
        match self {
            Store::Redis(s) => s.url(),
            Store::Postgres(s) => s.url(),
            Store::Cluster(c) => c.url(),
        }
    }

    /// Stop it and start it again with its data.
    pub fn restart(&mut self) {
        match self {
            Store::Redis(s) => s.restart(),
            Store::Postgres(s) => s.restart(),
            Store::Cluster(_) => panic!("a whole cluster is not restarted: kill one primary"),
        }
    }

    /// Put `raw` on the default queue's normal line as another program
    /// might: a message no one checked.
    pub fn put_raw(&self, raw: &str) {
        match self {
            Store::Redis(s) => {
                s.cli(&["XADD", "skill:q:default:normal", "*", "job", raw]);
            }
            Store::Postgres(s) => {
                let quoted = raw.replace('\'', "''");
                s.psql(&format!(
                    "INSERT INTO skill.jobs (queue, job_id, priority, state, message) \
                     VALUES ('default', '', 2, 0, '{quoted}')"
                ));
            }
            Store::Cluster(c) => {
                c.cli(&["XADD", "skill:{default.0}:normal", "*", "job", raw]);
            }
        }
    }

    /// Put `message` among the default queue's dead letters, given up on
    /// for `reason`, as a worker would (the schema the store's own steps
    /// write).
    pub fn put_dead(&self, message: &str, reason: &str) {
        let fields = [
            "job",
            message,
            "reason",
            reason,
            "deliveries",
            "3",
            "worker",
            "w-1",
        ];
        match self {
            Store::Redis(s) => {
                let mut args = vec!["XADD", "skill:q:default:dead", "*"];
                args.extend(fields);
                s.cli(&args);
            }
            Store::Postgres(s) => {
                let (m, r) = (message.replace('\'', "''"), reason.replace('\'', "''"));
                s.psql(&format!(
                    "INSERT INTO skill.dead (queue, job_id, message, reason, deliveries, worker) \
                     VALUES ('default', NULL, '{m}', '{r}', 3, 'w-1')"
                ));
            }
            Store::Cluster(c) => {
                let mut args = vec!["XADD", "skill:{default.0}:dead", "*"];
                args.extend(fields);
                c.cli(&args);
            }
        }
    }

    /// The default queue's dead letters, as text (messages and reasons).
    pub fn dead_letters(&self) -> String {
        match self {
            Store::Redis(s) => s.cli(&["XRANGE", "skill:q:default:dead", "-", "+"]),
            Store::Postgres(s) => {
                s.psql("SELECT message, reason FROM skill.dead WHERE queue = 'default' ORDER BY id")
            }
            Store::Cluster(c) => {
                let parts: usize = c
                    .cli(&["GET", "skill:q:default:partitions"])
                    .trim()
                    .parse()
                    .unwrap_or(0);
                (0..parts)
                    .map(|i| c.cli(&["XRANGE", &format!("skill:{{default.{i}}}:dead"), "-", "+"]))
                    .collect()
            }
        }
    }
}

/// Each body as a test on each store, one module per store (`redis::NAME`,
/// `postgres::NAME`, `cluster::NAME`): `everywhere` on one Redis, one
/// PostgreSQL and a Redis Cluster (three primaries, one replica each);
/// `one_server` on one Redis and one PostgreSQL only (a whole cluster is
/// not restarted: its primary is killed under load, in `tests/queue_fleet.rs`). Each
/// body takes the [`Kind`] of its store.
#[macro_export]
macro_rules! on_stores {
    (everywhere: $($name:ident),* $(,)?; one_server: $($single:ident),* $(,)?) => {
        $crate::on_stores!(@store redis, Redis: $($name,)* $($single,)*);
        $crate::on_stores!(@store postgres, Postgres: $($name,)* $($single,)*);
        $crate::on_stores!(@store cluster, Cluster: $($name,)*);
    };
    (@store $store:ident, $kind:ident: $($name:ident,)*) => {
        mod $store {
            $(
                #[test]
                fn $name() {
                    super::$name($crate::fleet::Kind::$kind)
                }
            )*
        }
    };
}

/// A `redis-server` on loopback with no snapshots, its files and its log
/// (`redis.log`) in `dir`, with `args` (its port among them).
pub fn redis_server(dir: &Path, args: &[String]) -> Child {
    Command::new("redis-server")
        .args(["--bind", "127.0.0.1", "--save", ""])
        .arg("--dir")
        .arg(dir)
        .args(["--logfile", "redis.log"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start redis-server ({e}); install it (Debian: apt-get install redis-server)"
            )
        })
}
