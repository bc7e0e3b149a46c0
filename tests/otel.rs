//! OpenTelemetry export against a real OTLP/HTTP receiver: a loopback
//! server that speaks the protocol (JSON encoding, decoded with the
//! published OTLP definitions, `opentelemetry-proto`). One trace from an MCP
//! client's `_meta.traceparent` through the server's span to the job's and
//! its run record; one from an enqueued envelope's traceparent through the
//! `publish` span of the enqueueing process to the worker's `process` and
//! job spans, through Redis; and a collector that is down or silent loses
//! spans, never a job.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use serde_json::{Value, json};
use skill_tests::fleet::{RedisServer, WorkerProcess, app, data_copy};
use skill_tests::mcp_stdio::McpStdio;

/// What a receiver got: each request's path and body, in order.
type Got = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver on loopback: keeps every request's body by path,
/// answers 200 (or never, when silent).
struct Receiver {
    port: u16,
    got: Got,
}

impl Receiver {
    fn start(silent: bool) -> Receiver {
        Receiver::start_on(0, silent)
    }

    /// A receiver on `port` (0: any free port).
    fn start_on(port: u16, silent: bool) -> Receiver {
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let got: Got = Arc::default();
        let keep = got.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().map_while(Result::ok) {
                let keep = keep.clone();
                std::thread::spawn(move || serve(conn, &keep, silent));
            }
        });
        Receiver { port, got }
    }

    /// The variables that send a process's telemetry here, as `service`.
    fn env(&self, service: &str) -> Vec<(String, String)> {
        vec![
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
                format!("http://127.0.0.1:{}", self.port),
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL".into(), "http/json".into()),
            ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
            ("OTEL_METRIC_EXPORT_INTERVAL".into(), "300".into()),
            ("OTEL_SERVICE_NAME".into(), service.into()),
            // Every stage gets its span, however quick.
            ("SKILL_OTEL_STAGE_MIN_US".into(), "0".into()),
        ]
    }

    /// Every span received so far, with its service's name.
    fn spans(&self) -> Vec<Span> {
        let got = self.got.lock().unwrap().clone();
        let mut out = Vec::new();
        for (path, body) in got.iter().filter(|(p, _)| p == "/v1/traces") {
            let request: ExportTraceServiceRequest = serde_json::from_slice(body)
                .unwrap_or_else(|e| panic!("{path}: not OTLP/JSON: {e}"));
            for rs in request.resource_spans {
                let service = rs
                    .resource
                    .as_ref()
                    .and_then(|r| attribute(&r.attributes, "service.name"))
                    .unwrap_or_default();
                for ss in rs.scope_spans {
                    for s in ss.spans {
                        out.push(Span {
                            service: service.clone(),
                            trace_id: hex(&s.trace_id),
                            span_id: hex(&s.span_id),
                            parent: hex(&s.parent_span_id),
                            kind: s.kind,
                            attributes: s
                                .attributes
                                .iter()
                                .filter_map(|kv| Some((kv.key.clone(), text(kv.value.as_ref()?)?)))
                                .collect(),
                            name: s.name,
                        });
                    }
                }
            }
        }
        out
    }

    /// Wait up to 20 s for a span that `found` picks.
    fn until(&self, what: &str, found: impl Fn(&Span) -> bool) -> Span {
        let start = Instant::now();
        loop {
            if let Some(s) = self.spans().into_iter().find(|s| found(s)) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no span {what} among {:#?}",
                self.spans()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn metrics_text(&self) -> String {
        let got = self.got.lock().unwrap();
        got.iter()
            .filter(|(p, _)| p == "/v1/metrics")
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .collect()
    }
}

#[derive(Clone, Debug)]
struct Span {
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
    kind: i32,
    attributes: HashMap<String, String>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(v: &opentelemetry_proto::tonic::common::v1::AnyValue) -> Option<String> {
    match v.value.as_ref()? {
        Any::StringValue(s) => Some(s.clone()),
        Any::IntValue(i) => Some(i.to_string()),
        Any::BoolValue(b) => Some(b.to_string()),
        Any::DoubleValue(d) => Some(d.to_string()),
        _ => None,
    }
}

fn attribute(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| text(kv.value.as_ref()?))
}

/// One connection: HTTP/1.1 requests, kept alive.
fn serve(conn: TcpStream, keep: &Mutex<Vec<(String, Vec<u8>)>>, silent: bool) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if silent {
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        keep.lock().unwrap().push((path, body));
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        if conn.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn env_refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

const VLEVEL: &str = r#"{"page_data": {"url": "https://shop.example.com/p/1", "gamme": "plaquettes", "marque": "renault", "modele": "clio", "type": "1.5 dci", "ktypnr": "12345"}}"#;

#[test]
fn one_trace_from_the_client_to_the_skill_and_through_the_fleet() {
    let rx = Receiver::start(false);

    // MCP: the client's traceparent is the parent of the server's span,
    // whose child is the job's; the record names the same trace.
    let work = tempdir("otel-mcp");
    let records = work.join("runs.jsonl");
    let mut env = rx.env("mcp-under-test");
    env.push(("SKILL_OTEL_RECORD_ARGUMENTS".into(), "true".into()));
    let mut mcp = McpStdio::start_env(
        &[
            "--grant",
            "seo:read",
            "--grant",
            "obsidian:read",
            // search_notes is tagged `requires_review`: the operator approves.
            "--approve",
            "--record",
            records.to_str().unwrap(),
        ],
        &env_refs(&env),
    );
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let answer = mcp.request(
        "tools/call",
        json!({
            "name": "ai_cos_vlevel_calc",
            "arguments": serde_json::from_str::<Value>(VLEVEL).unwrap(),
            "_meta": {"traceparent": format!("00-{trace}-b7ad6b7169203331-01")}
        }),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // Asked for, a job's span carries its arguments, redacted as its record.
    let searched = mcp.request(
        "tools/call",
        json!({"name": "search_notes", "arguments": {"query": "hunter2 ownership"}}),
    );
    assert_eq!(searched["result"]["isError"], false, "{searched}");
    mcp.close();
    let search = rx.until("skill search_notes", |s| s.name == "skill search_notes");
    let arguments = &search.attributes["skill.arguments"];
    assert!(
        arguments.contains("[REDACTED]") && !arguments.contains("hunter2"),
        "{arguments}"
    );
    assert!(search.attributes.contains_key("skill.result"), "{search:?}");
    let server = rx.until("tools/call ai_cos_vlevel_calc", |s| {
        s.name == "tools/call ai_cos_vlevel_calc"
    });
    assert_eq!(server.kind, SpanKind::Server as i32, "{server:?}");
    assert_eq!(server.trace_id, trace);
    assert_eq!(server.parent, "b7ad6b7169203331");
    assert_eq!(server.service, "mcp-under-test");
    assert_eq!(server.attributes["mcp.method.name"], "tools/call");
    assert_eq!(server.attributes["gen_ai.tool.name"], "ai_cos_vlevel_calc");
    assert!(server.attributes.contains_key("jsonrpc.request.id"));
    assert_eq!(server.attributes["mcp.protocol.version"], "2026-07-28");
    let job = rx.until("skill vlevel_calculator", |s| {
        s.name == "skill vlevel_calculator"
    });
    assert_eq!(job.trace_id, trace);
    assert_eq!(
        job.parent, server.span_id,
        "the job's span is the request's child"
    );
    assert!(!job.attributes.contains_key("error.type"), "{job:?}");
    assert_eq!(job.attributes["skill.version"], "1.0.0", "{job:?}");
    // The stages that took time are the job's children, and the handler's
    // attempt is the child of `execute`; all in the client's trace.
    for stage in [
        "validate_input",
        "preconditions",
        "execute",
        "postconditions",
    ] {
        let s = rx.until(stage, |s| s.name == stage && s.parent == job.span_id);
        assert_eq!(s.trace_id, trace, "{s:?}");
    }
    let execute = rx.until("execute", |s| {
        s.name == "execute" && s.parent == job.span_id
    });
    rx.until("attempt 1", |s| {
        s.name == "attempt 1" && s.parent == execute.span_id
    });
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(&records)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        record["trace_id"].as_str().unwrap().replace('-', ""),
        trace,
        "the record names the trace"
    );
    let start = Instant::now();
    // The runtime's lost records are observed too (none here), and each
    // job's duration by skill and outcome (a success's on the histogram
    // bound to the skill's attributes).
    let wanted = [
        "mcp.server.operation.duration",
        "skill.records.lost",
        "skill.job.duration",
        "skill.outcome",
        "succeeded",
        "vlevel_calculator@1.0.0",
        "search_notes@",
    ];
    while !wanted.iter().all(|m| rx.metrics_text().contains(m)) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not all of {wanted:?} in the metrics"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // Over HTTP, the request's `traceparent` header, when `_meta` has none.
    let mut cmd = Command::new(app());
    cmd.args(["mcp", "--http", "127.0.0.1:0"])
        .envs(rx.env("mcp-http-under-test"));
    let (server, _) = skill_tests::mcp_http::launch(cmd);
    let http_trace = "5bf92f3577b34da6a3ce929d0e0e4737";
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"message": "over http"},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
    .to_string();
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\n\
         traceparent: 00-{http_trace}-1111111111111111-01\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.addr,
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.contains("over http"), "{answer}");
    let over_http = rx.until("tools/call echo over HTTP", |s| {
        s.name == "tools/call echo" && s.trace_id == http_trace
    });
    assert_eq!(over_http.parent, "1111111111111111");
    assert_eq!(over_http.attributes["network.transport"], "tcp");
    assert_eq!(over_http.attributes["network.protocol.name"], "http");
    assert_eq!(over_http.attributes["network.protocol.version"], "1.1");
    assert_eq!(over_http.attributes["client.address"], "127.0.0.1");
    assert!(over_http.attributes.contains_key("client.port"));
    // A 2025-11-25 session: every request it makes has its span, naming the
    // session; its end, the session's duration.
    let session = session_requests(&server.addr);
    let initialize = rx.until("initialize", |s| {
        s.name == "initialize" && s.service == "mcp-http-under-test"
    });
    assert_eq!(initialize.kind, SpanKind::Server as i32);
    assert_eq!(initialize.attributes["mcp.method.name"], "initialize");
    assert_eq!(initialize.attributes["client.address"], "127.0.0.1");
    let listed = rx.until("tools/list", |s| {
        s.name == "tools/list" && s.service == "mcp-http-under-test"
    });
    assert_eq!(listed.attributes["mcp.session.id"], session);
    assert_eq!(listed.attributes["mcp.protocol.version"], "2025-11-25");
    let start = Instant::now();
    while !rx.metrics_text().contains("mcp.server.session.duration") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no session duration metric"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Only the conventions' attributes: no `target` of tracing's.
    for span in rx.spans() {
        assert!(!span.attributes.contains_key("target"), "{span:?}");
    }
    drop(server);

    // The fleet: enqueue (one process) and worker (another) in one trace.
    let redis = RedisServer::start("otel");
    let url = redis.url();
    let data = data_copy("otel");
    let worker_env = rx.env("worker-under-test");
    let _w = WorkerProcess::start_env(
        &url,
        &["--data", data.to_str().unwrap()],
        &env_refs(&worker_env),
    );
    let fleet_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let envelope = work.join("job.json");
    std::fs::write(
        &envelope,
        json!({
            "skill": "echo",
            "payload": {"message": "traced"},
            "context": {"source": "manual"},
            "traceparent": format!("00-{fleet_trace}-00f067aa0ba902b7-01"),
        })
        .to_string(),
    )
    .unwrap();
    let out = Command::new(app())
        .args([
            "enqueue",
            "--envelope",
            envelope.to_str().unwrap(),
            "--wait",
            "--redis",
            &url,
        ])
        .envs(rx.env("enqueue-under-test"))
        .output()
        .unwrap();
    succeeded(&out);
    let publish = rx.until("publish", |s| s.kind == SpanKind::Producer as i32);
    assert_eq!(publish.trace_id, fleet_trace);
    assert_eq!(publish.parent, "00f067aa0ba902b7");
    assert_eq!(publish.service, "enqueue-under-test");
    assert_eq!(publish.attributes["messaging.system"], "redis");
    let process = rx.until("process", |s| s.kind == SpanKind::Consumer as i32);
    assert_eq!(process.trace_id, fleet_trace);
    assert_eq!(
        process.parent, publish.span_id,
        "the worker continues the publisher's span"
    );
    assert_eq!(process.service, "worker-under-test");
    let echo = rx.until("skill echo", |s| {
        s.name == "skill echo" && s.trace_id == fleet_trace
    });
    assert_eq!(echo.trace_id, fleet_trace);
    assert_eq!(echo.parent, process.span_id);
    // An MCP call handed to the fleet as a task: the client's trace runs
    // through the MCP server's request and publish spans, Redis, and the
    // worker's process and job spans.
    let task_trace = "6cf92f3577b34da6a3ce929d0e0e4738";
    let mut mcp = McpStdio::start_env(
        &["--redis", &url, "--data", data.to_str().unwrap()],
        &env_refs(&rx.env("mcp-tasks-under-test")),
    );
    let created = mcp.request(
        "tools/call",
        json!({
            "name": "count_slowly",
            "arguments": {"to": 2, "step_ms": 10},
            "_meta": {"traceparent": format!("00-{task_trace}-2222222222222222-01")}
        }),
    );
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = mcp.until_done(&task);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    mcp.close();
    let call = rx.until("tools/call count_slowly", |s| {
        s.name == "tools/call count_slowly" && s.trace_id == task_trace
    });
    assert_eq!(call.parent, "2222222222222222");
    let sent = rx.until("send of the task", |s| {
        s.kind == SpanKind::Producer as i32 && s.trace_id == task_trace
    });
    assert_eq!(sent.parent, call.span_id, "queued inside the request");
    let taken = rx.until("process of the task", |s| {
        s.kind == SpanKind::Consumer as i32 && s.trace_id == task_trace
    });
    assert_eq!(taken.parent, sent.span_id);
    assert_eq!(taken.service, "worker-under-test");
    let counted = rx.until("skill count_slowly", |s| {
        s.name == "skill count_slowly" && s.trace_id == task_trace
    });
    assert_eq!(counted.parent, taken.span_id);

    // The worker's gauges of the queue's state.
    let start = Instant::now();
    while !rx.metrics_text().contains("skill.queue.waiting") {
        assert!(start.elapsed() < Duration::from_secs(20), "no queue gauges");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(rx.metrics_text().contains("skill.queue.awaiting_approval"));
}

/// `METHOD /mcp` at `addr` with extra header lines and `body`: the answer's
/// head and body.
fn http(addr: &str, method: &str, headers: &str, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{headers}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.to_lowercase(), body.to_owned())
}

/// A 2025-11-25 session at `addr`: initialized, its tools listed, deleted;
/// its id.
fn session_requests(addr: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (head, body) = http(addr, "POST", "", &initialize.to_string());
    assert!(head.starts_with("http/1.1 200"), "{head}\n{body}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("a session id")
        .trim()
        .to_owned();
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    http(addr, "POST", &headers, &initialized.to_string());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, body) = http(addr, "POST", &headers, &list.to_string());
    assert!(body.contains("echo"), "{body}");
    let (head, _) = http(addr, "DELETE", &headers, "");
    assert!(head.starts_with("http/1.1 2"), "{head}");
    session
}

/// A collector that refuses connections, or accepts and never answers:
/// spans are lost, the job is not.
#[test]
fn a_collector_down_or_silent_loses_spans_not_jobs() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let silent = Receiver::start(true);
    for endpoint in [
        format!("http://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{}", silent.port),
    ] {
        let binary = app();
        let started = std::time::Instant::now();
        let out = Command::new(binary)
            .args(["invoke", "echo", r#"{"message": "still here"}"#])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .env("OTEL_BSP_SCHEDULE_DELAY", "50")
            .output()
            .unwrap();
        succeeded(&out);
        assert!(String::from_utf8_lossy(&out.stdout).contains("still here"));
        // What is left is flushed within a short bound at exit, not the
        // SDK's five seconds for traces and five more for metrics.
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(6),
            "{endpoint}: the command took {took:?}"
        );
    }
}

/// An agent's run is a span, and each skill call it makes a job whose span
/// is its child, in the run's trace.
#[test]
fn an_agent_run_is_the_parent_of_its_skill_calls() {
    let rx = Receiver::start(false);
    let env = rx.env("agent-under-test");
    let out = Command::new(app())
        .args([
            "agent",
            "agent.seo.vlevel",
            r#"{"urls": ["https://shop.example.com/plaquettes/renault/clio"]}"#,
        ])
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    succeeded(&out);
    let run = rx.until("agent agent.seo.vlevel", |s| {
        s.name == "agent agent.seo.vlevel"
    });
    let call = rx.until("a skill call", |s| {
        s.name.starts_with("skill ") && s.parent == run.span_id
    });
    assert_eq!(call.trace_id, run.trace_id);
}

/// While the collector's address refuses connections, a server makes no
/// spans (they could only be dropped); once a collector is there, the next
/// jobs' spans reach it without a restart.
#[test]
fn spans_resume_when_the_collector_comes_up() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_owned()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ("OTEL_SERVICE_NAME", "late-collector".to_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut mcp = McpStdio::start_env(&["--grant", "seo:read"], &env);
    let call = |mcp: &mut McpStdio, message: &str| {
        let answer = mcp.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": message}}),
        );
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    };
    call(&mut mcp, "nobody listens");
    // The collector comes up; the server asks again within two seconds
    // (1 s, then 2, doubling), and its next jobs are traced.
    let rx = Receiver::start_on(port, false);
    let start = Instant::now();
    loop {
        call(&mut mcp, "listened to");
        if rx.spans().iter().any(|s| s.name == "skill echo") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no span once the collector is up"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    mcp.close();
    assert!(
        rx.spans().iter().all(|s| s.service == "late-collector"),
        "{:#?}",
        rx.spans()
    );
}

/// `out` is a command's that exited 0; its standard error otherwise.
fn succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("skill-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
