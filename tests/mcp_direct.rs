//! A `tools/call` the HTTP endpoint answers itself (`mcp/http/direct.rs`)
//! whose client goes away before the answer: the job is cancelled, as one
//! rmcp serves is, and its record says so. In process, with a tool that is
//! not a task (no queue given to the server), so that the direct path is the
//! one taken; and in a 2025-11-25 session, one the client cancels, and a
//! session kept open by such calls, closed once idle; and, through rmcp, a
//! call's event stream resumed after the last event id its client read.

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

/// Serve MCP over HTTP from `rt` with `options` on a free loopback port;
/// its `HOST:PORT`.
async fn serve(rt: &Runtime, options: McpOptions) -> String {
    let server = McpServer::new(rt.clone(), options).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(server.serve_http(listener));
    addr
}

/// A 2025-11-25 session opened at `addr` by a client declaring
/// `capabilities` (JSON), `notifications/initialized` sent: its id.
fn open_session(addr: &str, capabilities: &str) -> String {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    );
    let head = post(addr, None, &init);
    let session = head
        .lines()
        .find_map(|l| {
            l.to_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|s| s.trim().to_owned())
        })
        .expect("a session");
    post(
        addr,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_call_whose_client_leaves_is_cancelled_with_its_record() {
    let rt = runtime();
    let addr = serve(&rt, McpOptions::new().server_info("test", "0")).await;

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

/// The text of a 2025-11-25 POST of `body`, in `session` when given, with
/// the `headers` lines added.
fn request(addr: &str, session: Option<&str>, body: &str, headers: &str) -> String {
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\n{headers}\r\n{body}",
        body.len()
    )
}

/// POST `body` on a new connection, in `session` when given; the answer's
/// head and body, read whole.
fn post(addr: &str, session: Option<&str>, body: &str) -> String {
    use std::io::Read;
    let request = request(addr, session, body, "Connection: close\r\n");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// In a 2025-11-25 session, a call the endpoint answers itself is cancelled
/// by the client's `notifications/cancelled` (its connection still open),
/// as rmcp cancels the calls it serves: the answer comes at once, and the
/// record says cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_call_answered_directly_is_cancelled_by_the_client() {
    let rt = runtime();
    let addr = serve(&rt, McpOptions::new().server_info("test", "0")).await;
    let started = Instant::now();
    let answer = tokio::task::spawn_blocking(move || {
        let session = open_session(&addr, r#"{}"#);
        let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count_slowly","arguments":{"to":100,"step_ms":100}}}"#;
        let (addr2, session2) = (addr.clone(), session.clone());
        let cancel = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            let cancelled = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"enough"}}"#;
            post(&addr2, Some(&session2), cancelled)
        });
        let answer = post(&addr, Some(&session), call);
        assert!(cancel.join().unwrap().starts_with("HTTP/1.1 202"));
        answer
    })
    .await
    .unwrap();
    assert!(
        answer.contains("content-type: application/json")
            && started.elapsed() < Duration::from_secs(5),
        "answered directly, and at once once cancelled: {answer}"
    );
    let record = loop {
        let records = rt.memory_records().unwrap().records();
        if let Some(r) = records.iter().find(|r| r.skill == "count_slowly") {
            break r.clone();
        }
        assert!(started.elapsed() < Duration::from_secs(8), "no record");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(record.status, RunStatus::Cancelled, "{record:?}");
}

/// A session kept busy by calls the endpoint answers itself stays open past
/// the idle time (rmcp's session worker never sees those calls: idleness is
/// judged by the endpoint), and one left idle past it is closed, even when
/// its last call's client went away before the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_used_directly_stays_open_and_an_idle_one_closes() {
    let rt = runtime();
    let limits = skill_runtime::mcp::HttpLimits::default().session_idle(Duration::from_millis(400));
    let options = McpOptions::new().server_info("test", "0").http(limits);
    let addr = serve(&rt, options).await;
    tokio::task::spawn_blocking(move || {
        let session = open_session(&addr, r#"{}"#);
        let echo = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#;
        // Ten calls 150 ms apart: well past the idle time in all.
        for n in 0..10 {
            let answer = post(&addr, Some(&session), echo);
            assert!(
                answer.starts_with("HTTP/1.1 200") && answer.contains("application/json"),
                "call {n}, answered directly: {answer}"
            );
            std::thread::sleep(Duration::from_millis(150));
        }
        // A call whose client leaves mid-way holds the session no longer.
        let slow = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count_slowly","arguments":{"to":100,"step_ms":100}}}"#;
        let request = request(&addr, Some(&session), slow, "");
        let mut left = TcpStream::connect(&addr).unwrap();
        left.write_all(request.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        drop(left);
        std::thread::sleep(Duration::from_millis(900));
        // Any request looks for idle sessions; the idle one is then gone.
        open_session(&addr, "{}");
        std::thread::sleep(Duration::from_millis(100));
        let answer = post(&addr, Some(&session), echo);
        assert!(answer.starts_with("HTTP/1.1 404"), "closed when idle: {answer}");
    })
    .await
    .unwrap();
}

/// Resumability, through rmcp: in a session whose client may be asked
/// questions (so its calls take rmcp's path and answer as event streams), a
/// call's stream broken by the client mid-call is resumed with a GET that
/// names the last event id it read: the events after it arrive, and then the
/// answer; the job ran on, uncancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_event_stream_is_resumed_after_its_last_event_id() {
    use std::io::{BufRead, BufReader};
    let rt = runtime();
    let addr = serve(&rt, McpOptions::new().server_info("test", "0")).await;
    /// The events of an event stream, as (id, data), until `done` says so.
    fn events(
        stream: &mut BufReader<TcpStream>,
        done: impl Fn(&[(String, String)]) -> bool,
    ) -> Vec<(String, String)> {
        let (mut all, mut id, mut data) = (Vec::new(), String::new(), String::new());
        let mut line = String::new();
        loop {
            line.clear();
            if stream.read_line(&mut line).unwrap_or(0) == 0 {
                return all;
            }
            let l = line.trim_end();
            if let Some(v) = l.strip_prefix("id:") {
                id = v.trim().to_owned();
            } else if let Some(v) = l.strip_prefix("data:") {
                data.push_str(v.trim());
            } else if l.is_empty() && !(id.is_empty() && data.is_empty()) {
                all.push((std::mem::take(&mut id), std::mem::take(&mut data)));
                if done(&all) {
                    return all;
                }
            }
        }
    }
    tokio::task::spawn_blocking(move || {
        let session = open_session(&addr, r#"{"elicitation":{}}"#);
        // 20 numbers, 100 ms apart, with progress: two seconds.
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count_slowly","arguments":{"to":20,"step_ms":100},"_meta":{"progressToken":"p"}}}"#;
        let request = request(&addr, Some(&session), call, "");
        let mut conn = TcpStream::connect(&addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        conn.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(conn);
        // Past the HTTP head; then three progress events, and the stream is
        // dropped.
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap() > 2 {
            line.clear();
        }
        let before = events(&mut reader, |all| {
            all.iter().filter(|(_, d)| d.contains("notifications/progress")).count() >= 3
        });
        drop(reader);
        let last = before.last().unwrap().0.clone();
        assert!(!last.is_empty(), "events carry ids: {before:?}");
        std::thread::sleep(Duration::from_millis(300));
        let resume = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {session}\r\n\
             Accept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Last-Event-ID: {last}\r\n\r\n"
        );
        let mut conn = TcpStream::connect(&addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        conn.write_all(resume.as_bytes()).unwrap();
        let mut reader = BufReader::new(conn);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "resumed: {status}");
        line.clear();
        while reader.read_line(&mut line).unwrap() > 2 {
            line.clear();
        }
        let after = events(&mut reader, |all| all.iter().any(|(_, d)| d.contains(r#""id":3"#)));
        let answer = &after.last().expect("events after the last id").1;
        assert!(
            answer.contains(r#""counted":20"#),
            "the answer, after the events it had not read: {after:?}"
        );
        let seen: Vec<&String> = before.iter().map(|(id, _)| id).collect();
        assert!(
            after.iter().all(|(id, _)| id.is_empty() || !seen.contains(&id)),
            "no event it read comes again: {before:?} then {after:?}"
        );
    })
    .await
    .unwrap();
}
