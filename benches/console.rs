//! The console on real volumes: how long each page takes to render with
//! `CONSOLE_BENCH_RECORDS` run records (default 100,000) in the store, on
//! Redis and on PostgreSQL, each started for the run.
//!
//! The records are real: this process runs that many jobs of the example
//! skills (mostly `echo`, one in a hundred `normalize_handle`, one in twenty
//! refused by `echo`'s input schema, callers `ann`, `bob` and others) through
//! a runtime that shares the fleet's stores, so each record goes to the
//! store as a worker's would. Then the console is served in this process
//! and each page is asked for `CONSOLE_BENCH_ROUNDS` times (default 30)
//! over one kept-alive connection, one request at a time; the median and
//! the slowest are printed, in milliseconds from the request sent to the
//! last byte of the page read.
//!
//! Run it with `bench/console.sh`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use skill_runtime::console::Console;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_runtime::{Caller, JobEnvelope, Registry};
use skill_tests::fleet::{RedisServer, data_copy};
use skill_tests::postgres::PostgresServer;

use seed_skills as _;

#[path = "support/fleet.rs"]
mod support;
use support::{env_n, median};

/// The `i`th job: its skill, input and caller.
fn job(i: usize) -> JobEnvelope {
    let callers = ["ann", "bob", "carol", "dan", "eve"];
    let caller = Caller {
        user_id: Some(callers[i % callers.len()].to_owned()),
        ..Caller::default()
    };
    let job = if i % 100 == 7 {
        JobEnvelope::new(
            "normalize_handle",
            json!({"handle": format!("@Someone{i}")}),
        )
    } else if i % 20 == 3 {
        JobEnvelope::new("echo", json!({"nothing": i}))
    } else {
        JobEnvelope::new("echo", json!({"message": format!("record {i}")}))
    };
    job.with_caller(caller)
}

/// `n` records in the store of `fleet`, from jobs run here; the id of the
/// job a tenth of them down from the newest.
async fn fill(fleet: &Fleet, registry: Arc<Registry>, n: usize) -> String {
    let data = data_copy("console-bench");
    let runtime = fleet
        .share(team_skills::runtime_builder(registry, &data).unwrap())
        .build()
        .unwrap();
    let mut middle = String::new();
    let mut running = tokio::task::JoinSet::new();
    for i in 0..n {
        let job = job(i);
        if i == n - n / 10 {
            middle = job.job_id.to_string();
        }
        let runtime = runtime.clone();
        running.spawn(async move {
            let _ = runtime.invoke(job).await;
        });
        if running.len() >= 64 {
            running.join_next().await;
        }
        // The sink keeps a bounded backlog (past it, records are dropped
        // and counted): let it catch up.
        if i % 5000 == 4999 {
            while running.join_next().await.is_some() {}
            fleet.record_sink().flush().await;
        }
    }
    running.join_all().await;
    fleet.record_sink().flush().await;
    assert_eq!(fleet.record_sink().dropped(), 0, "every record stored");
    middle
}

/// A kept-alive HTTP/1.1 connection to the console.
struct Client {
    stream: TcpStream,
    host: String,
}

impl Client {
    fn connect(addr: std::net::SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            stream,
            host: addr.to_string(),
        }
    }

    /// GET `path`: the status, the page, and how long until it was read
    /// whole.
    fn get(&mut self, path: &str) -> (u16, String, Duration) {
        let started = Instant::now();
        write!(
            self.stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n",
            self.host
        )
        .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            self.stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
        let status = head[9..12].parse().unwrap();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .expect("a page has its length");
        let mut body = vec![0u8; length];
        self.stream.read_exact(&mut body).unwrap();
        let took = started.elapsed();
        (status, String::from_utf8(body).unwrap(), took)
    }
}

fn measure(store: &str, fleet: Fleet, registry: Arc<Registry>, n: usize, rounds: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let middle = rt.block_on(fill(&fleet, registry.clone(), n));
    eprintln!(
        "{store}: {n} records stored in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let console = Console::new(&registry, fleet).operator("bench");
    rt.spawn(console.serve(listener));
    let mut client = Client::connect(addr);
    // Twenty pages down, following the pages' own "older" links.
    let mut deep = "/runs".to_owned();
    let mut linked = String::new();
    for _ in 0..20 {
        let (_, page, _) = client.get(&deep);
        // A run as a person opens it: from its row's link.
        linked = page
            .split("href=\"")
            .filter_map(|h| h.split_once("\"><code>"))
            .map(|(href, _)| href.replace("&amp;", "&"))
            .next()
            .expect("a run's link");
        let link = page
            .split("href=\"")
            .filter_map(|h| h.split_once("\">older<"))
            .map(|(href, _)| href.replace("&amp;", "&"))
            .next()
            .expect("an older page");
        deep = link;
    }
    let pages = [
        "/queue".to_owned(),
        "/runs".to_owned(),
        "/runs?status=failed".to_owned(),
        "/runs?caller=ann".to_owned(),
        "/runs?skill=normalize_handle".to_owned(),
        deep,
        linked,
        format!("/runs/{middle}"),
        "/stats".to_owned(),
        "/skills".to_owned(),
    ];
    for page in &pages {
        let mut times = Vec::new();
        for _ in 0..rounds {
            let (status, _, took) = client.get(page);
            assert_eq!(status, 200, "{page}");
            times.push(took.as_secs_f64() * 1e3);
        }
        let slowest = times.iter().cloned().fold(0.0, f64::max);
        println!(
            "{store:<10} {page:<44} median {:>7.2} ms   slowest {:>7.2} ms",
            median(&mut times),
            slowest
        );
    }
}

fn main() {
    let n = env_n("CONSOLE_BENCH_RECORDS", 100_000);
    let rounds = env_n("CONSOLE_BENCH_ROUNDS", 30);
    let registry = Arc::new(Registry::from_inventory().unwrap());
    let connect = |url: String| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(Fleet::connect(FleetConfig {
            records_max: n + 1000,
            ..FleetConfig::new(url.as_str())
        }))
        .unwrap()
    };
    println!("the console with {n} run records in the store ({rounds} requests a page)");
    let redis = RedisServer::start("console-bench");
    measure("Redis", connect(redis.url()), registry.clone(), n, rounds);
    drop(redis);
    let postgres = PostgresServer::start("console-bench");
    measure("PostgreSQL", connect(postgres.url()), registry, n, rounds);
}
