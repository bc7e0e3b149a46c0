//! A `tools/call` the HTTP endpoint answers itself (`mcp/http/direct.rs`)
//! whose client goes away before the answer: the job is cancelled, as one
//! rmcp serves is, and its record says so. In process, with a tool that is
//! not a task (no queue given to the server), so that the direct path is the
//! one taken.

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seed_skills as _;
use skill_runtime::mcp::{McpOptions, McpServer};
use skill_runtime::record::RunStatus;
use skill_runtime::{Registry, Runtime};

fn runtime() -> Runtime {
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    team_skills::runtime_builder(registry, Path::new(seed_skills::DATA_DIR))
        .expect("example data")
        .build()
        .expect("runtime starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_call_whose_client_leaves_is_cancelled_with_its_record() {
    let rt = runtime();
    let server = McpServer::new(rt.clone(), McpOptions::new().server_info("test", "0")).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(server.serve_http(listener));

    // 100 numbers, 100 ms apart: ten seconds, unless cancelled.
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count_slowly","arguments":{"to":100,"step_ms":100},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: count_slowly\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let started = Instant::now();
    let client = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        // The client goes away without reading its answer.
        drop(stream);
    });
    client.await.unwrap();
    let record = loop {
        let records = rt.memory_records().unwrap().records();
        if let Some(r) = records.iter().find(|r| r.skill == "count_slowly") {
            break r.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "no record of the call before it could have ended on its own"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(record.status, RunStatus::Cancelled, "{record:?}");
}
