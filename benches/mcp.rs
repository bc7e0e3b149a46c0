//! tools/call round trips per second over stdio, one client (rmcp's), against:
//! (a) our server (`skill-examples mcp`: the whole runtime pipeline per call),
//! (b) a plain rmcp server with the same `echo` tool and no validation
//!     (`bench/plain-rmcp`), and
//! (c) a FastMCP (Python) server with the same tool (`bench/fastmcp_echo.py`).
//!
//! Run it with `bench/mcp-roundtrips.sh`, which builds the servers in release
//! mode and installs FastMCP. `MCP_BENCH_WARMUP` calls precede each measured
//! round of the Rust servers (the script's default, 10,500, fills our server's
//! in-memory record sink: the steady state of a server that has been up a while). Rounds are interleaved (a, b, c, a, b, c, ...) so
//! that the machine's noise falls on all three alike; the medians and their
//! ratios come from the same run.

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::process::Command;

struct Server {
    label: &'static str,
    program: String,
    args: Vec<String>,
}

async fn round(server: &Server, warmup: usize, calls: usize) -> Result<f64, String> {
    let mut command = Command::new(&server.program);
    command.args(&server.args);
    let transport =
        TokioChildProcess::new(command).map_err(|e| format!("{}: spawn: {e}", server.label))?;
    let client = ()
        .serve(transport)
        .await
        .map_err(|e| format!("{}: handshake: {e}", server.label))?;
    let mut args = serde_json::Map::new();
    args.insert("message".into(), json!("hello, benchmark"));
    let params = CallToolRequestParams::new("echo").with_arguments(args);
    let mut elapsed = Duration::ZERO;
    for i in 0..warmup + calls {
        let start = Instant::now();
        let result = client
            .call_tool(params.clone())
            .await
            .map_err(|e| format!("{}: call: {e}", server.label))?;
        if i >= warmup {
            elapsed += start.elapsed();
        }
        if result.is_error == Some(true)
            || result.structured_content != Some(json!({"message": "hello, benchmark"}))
        {
            return Err(format!("{}: unexpected result {result:?}", server.label));
        }
    }
    client
        .cancel()
        .await
        .map_err(|e| format!("{}: shutdown: {e}", server.label))?;
    Ok(calls as f64 / elapsed.as_secs_f64())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_owned());
    let rounds: usize = env("MCP_BENCH_ROUNDS", "5")
        .parse()
        .expect("MCP_BENCH_ROUNDS");
    let calls: usize = env("MCP_BENCH_CALLS", "2000")
        .parse()
        .expect("MCP_BENCH_CALLS");
    let target = env("MCP_BENCH_TARGET", "target/release");
    let python = env("MCP_BENCH_PYTHON", "target/bench-venv/bin/python");
    let only = std::env::var("MCP_BENCH_ONLY").ok();
    let servers = [
        Server {
            label: "skill-runtime",
            program: format!("{target}/skill-examples"),
            args: vec!["mcp".into()],
        },
        Server {
            label: "plain rmcp",
            program: format!("{target}/plain-rmcp"),
            args: vec![],
        },
        Server {
            label: "FastMCP",
            program: python,
            args: vec!["bench/fastmcp_echo.py".into()],
        },
    ];
    let servers: Vec<Server> = servers
        .into_iter()
        .filter(|s| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|l| l == s.label))
        })
        .collect();
    let mut rps: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    for r in 0..rounds {
        for (i, server) in servers.iter().enumerate() {
            // FastMCP is two orders of magnitude slower: fewer calls, same rate.
            let n = if server.label == "FastMCP" {
                (calls / 10).max(100)
            } else {
                calls
            };
            // FastMCP keeps its own short warm-up: it has no record sink to fill,
            // and 10,000 of its calls take half a minute.
            let warmup = if server.label == "FastMCP" {
                n / 10
            } else {
                env("MCP_BENCH_WARMUP", &(n / 10).to_string())
                    .parse()
                    .expect("MCP_BENCH_WARMUP")
            };
            match round(server, warmup, n).await {
                Ok(v) => {
                    eprintln!("round {r}: {:<14} {v:>10.0} calls/s", server.label);
                    rps[i].push(v);
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let m: Vec<f64> = rps.iter_mut().map(|v| median(v)).collect();
    println!(
        "tools/call round trips per second over stdio, median of {rounds} interleaved rounds ({calls} calls each; FastMCP {}):",
        (calls / 10).max(100)
    );
    for (s, v) in servers.iter().zip(&m) {
        println!(
            "  {:<14} {v:>10.0} calls/s  ({:.1} us/call)",
            s.label,
            1e6 / v
        );
    }
    if m.len() == 3 {
        println!(
            "  plain rmcp / skill-runtime time per call: {:.2}x (goal: at most 1.2x)",
            m[1] / m[0]
        );
        println!(
            "  skill-runtime / FastMCP throughput:       {:.1}x (goal: at least 10x)",
            m[0] / m[2]
        );
    }
}
