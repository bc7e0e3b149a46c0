//! The MCP HTTP transport's limits, on the real server: a browser origin that
//! is neither loopback nor allowed gets 403; a connection that sends nothing is
//! closed after the header timeout; past the connection cap, a new client
//! waits until a slot frees; past the session cap, the least recently used
//! session is closed; a body that is not a JSON-RPC message, or a message
//! of no session, gets a JSON-RPC error.

use std::io::{Read, Write};
use std::net::TcpStream;

use std::time::{Duration, Instant};

use skill_tests::mcp_http::{Server, launch};
use skill_tests::skill_examples;

fn start(extra: &[&str]) -> Server {
    start_at("127.0.0.1:0", extra)
}

fn start_at(addr: &str, extra: &[&str]) -> Server {
    let mut cmd = skill_examples(&["mcp", "--http", addr]);
    cmd.args(extra);
    launch(cmd).0
}

/// POST `body` to `/mcp` with extra header lines, and read the whole answer:
/// its status line, its headers (lower-case names) and its body.
fn post(addr: &str, headers: &str, body: &str) -> (String, String, String) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = exchange(addr, &request);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_owned(), headers.to_lowercase(), body.to_owned())
}

/// Send `request` on a new connection and read the whole answer.
fn exchange(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// A new session's id.
fn open_session(addr: &str) -> String {
    let (status, headers, _) = post(addr, "", INITIALIZE);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    headers
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("a session id")
        .trim()
        .to_owned()
}

/// The status of a notification sent in `session`.
fn notify(addr: &str, session: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(addr, &format!("Mcp-Session-Id: {session}\r\n"), body).0
}

/// POST an `initialize` to `/mcp` with `origin`, and read the status line.
fn post_status(addr: &str, origin: Option<&str>) -> String {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    post(addr, &origin, INITIALIZE).0.trim().to_owned()
}

#[test]
fn origins_other_than_loopback_and_allowed_ones_are_refused() {
    let server = start(&["--allow-origin", "https://app.example.com:443"]);
    let addr = &server.addr;
    let status = post_status(addr, Some("https://evil.example.com"));
    assert!(status.contains(" 403 "), "{status}");
    for origin in [
        None,
        Some("http://localhost:5173"),
        Some("https://app.example.com"),
    ] {
        let status = post_status(addr, origin);
        assert!(status.starts_with("HTTP/1.1 200"), "{origin:?}: {status}");
    }
}

#[test]
fn silent_connections_are_closed_and_never_hold_the_cap_against_a_client() {
    let server = start(&["--max-connections", "2", "--header-timeout-ms", "1500"]);
    let addr = &server.addr;

    // A connection that sends nothing is closed after the header timeout.
    let started = Instant::now();
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = [0u8; 64];
    let _ = idle.read(&mut buf);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1000) && waited < Duration::from_secs(15),
        "the silent connection was closed after {waited:?}"
    );

    // Two silent connections hold both places: a real client is admitted at
    // once, in the place of the one silent longest, which is closed.
    let mut a = TcpStream::connect(addr).unwrap();
    let _b = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let status = post_status(addr, None);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    a.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    assert_eq!(
        a.read(&mut buf).ok(),
        Some(0),
        "the oldest silent one was closed"
    );
}

/// Connections that send complete headers and then never the body they
/// announce, more of them than the cap: a normal call is still answered,
/// long before any body timeout could free a place.
#[test]
fn silent_bodies_cannot_starve_the_server() {
    let server = start(&["--max-connections", "100", "--body-timeout-ms", "120000"]);
    let addr = &server.addr;
    let silent: Vec<TcpStream> = (0..150)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
            );
            s.write_all(head.as_bytes()).unwrap();
            s
        })
        .collect();
    answered_despite(addr, "a body timeout");
    drop(silent);
}

/// A normal call is answered while the connections just opened hold the
/// server, long before `timeout` (set to minutes) could free a place: the
/// cap made room, not the timeout.
fn answered_despite(addr: &str, timeout: &str) {
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let status = post_status(addr, None);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "answered only after {:?}: {timeout} freed the place, not the cap",
        started.elapsed()
    );
}

/// A body that trickles in slower than the minimum rate is answered 408
/// once its time is up, and the connection is closed.
#[test]
fn a_body_slower_than_the_minimum_rate_is_answered_408() {
    let server = start(&["--body-timeout-ms", "1000"]);
    let addr = &server.addr;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within"), "{answer}");
}

/// A process allowed fewer descriptors than the connection cap lowers the
/// cap to fit, says so, and still answers while more idle connections than
/// its limit allows are open.
#[cfg(unix)]
#[test]
fn the_cap_fits_the_descriptor_limit() {
    let app = skill_tests::fleet::app();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" mcp --http 127.0.0.1:0 --max-connections 512 --header-timeout-ms 120000"#)
        .arg(&app)
        .current_dir(skill_tests::root());
    let (server, said) = launch(cmd);
    assert!(
        said.contains("serving at most 192 HTTP connections at once instead of 512"),
        "{said}"
    );
    let addr = &server.addr;
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    answered_despite(addr, "a header timeout");
    drop(idle);
}

/// A request with two `Host` or two `Origin` headers, or a `Host` with user
/// information, is refused: the checks would read another host than the one
/// the request goes to.
#[test]
fn ambiguous_hosts_and_origins_are_refused() {
    let server = start(&[]);
    let addr = &server.addr;
    for headers in [
        format!("Host: {addr}\r\n"),
        "Origin: http://localhost:1\r\nOrigin: https://evil.example.com\r\n".to_owned(),
    ] {
        let (status, _, body) = post(addr, &headers, INITIALIZE);
        assert!(status.contains(" 400 "), "{headers}: {status}");
        assert!(body.contains("more than one"), "{body}");
    }
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example.com@{addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    let answer = exchange(addr, &request);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("without user information"), "{answer}");
}

#[test]
fn past_the_session_cap_the_least_recently_used_session_is_closed() {
    let server = start(&["--max-sessions", "2"]);
    let addr = &server.addr;
    let first = open_session(addr);
    let second = open_session(addr);
    // The first is used again: the second is now the least recently used.
    assert!(notify(addr, &first).contains(" 202 "));
    let third = open_session(addr);
    let gone = notify(addr, &second);
    assert!(
        gone.contains(" 404 "),
        "the evicted session answered {gone}"
    );
    for kept in [&first, &third] {
        let status = notify(addr, kept);
        assert!(status.contains(" 202 "), "{kept}: {status}");
    }
    // A client whose session was closed starts again.
    let again = open_session(addr);
    assert!(notify(addr, &again).contains(" 202 "));
}

#[test]
fn a_body_that_is_not_a_message_gets_a_json_rpc_error() {
    let server = start(&[]);
    let addr = &server.addr;
    for (body, code, id) in [
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"#,
            -32700,
            serde_json::Value::Null,
        ),
        ("\u{0}not json", -32700, serde_json::Value::Null),
        (r#"{"jsonrpc":"2.0","id":7}"#, -32600, serde_json::json!(7)),
        (r#"[1,2,3]"#, -32600, serde_json::Value::Null),
        // A message of no session, on a revision that has them.
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#,
            -32600,
            serde_json::json!(8),
        ),
    ] {
        let (status, headers, answer) = post(addr, "", body);
        assert!(status.contains(" 400 "), "{body}: {status}");
        assert!(
            headers.contains("content-type: application/json"),
            "{headers}"
        );
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        assert_eq!(answer["id"], id, "{body}: {answer}");
        if id == 8 {
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("Mcp-Session-Id") && message.contains("initialize"),
                "says what to do: {message}"
            );
        }
    }
    // A body over the 4 MiB default is refused (just over it: the server
    // reads what the client sends before answering).
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(4 << 20)
    );
    let (status, _, answer) = post(addr, "", &big);
    assert!(status.contains(" 413 "), "{status}");
    assert!(answer.contains("-32600"), "{answer}");
    // The server goes on serving.
    open_session(addr);
}

#[test]
fn a_kept_alive_connection_left_idle_is_closed() {
    let server = start(&["--header-timeout-ms", "1000"]);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        server.addr,
        INITIALIZE.len()
    );
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    // The answer comes, then the connection stays open for a next request
    // only until the header timeout; read_to_end returns when it is closed.
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""result""#), "{answer}");
}

#[test]
fn localhost_names_loopback_and_other_hosts_are_refused() {
    let server = start_at("localhost:0", &[]);
    assert!(server.addr.starts_with("127.0.0.1:"), "{}", server.addr);
    assert!(open_session(&server.addr).len() > 8);
    let out = skill_examples(&["mcp", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    // Refused, and the message names both ways out: authenticate, or loopback.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--auth jwt"), "{stderr}");
    assert!(stderr.contains("listen on loopback"), "{stderr}");
}

/// POST a stateless 2026-07-28 `tools/call` with `body`, plus header lines
/// `extra`; its status code, content type and JSON answer.
fn call_2026(
    addr: &str,
    name: &str,
    extra: &str,
    body: &str,
) -> (String, String, serde_json::Value, bool) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{extra}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {name}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, content_type, body, chunked) = parsed(&exchange(addr, &request));
    let json =
        serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("a JSON answer ({e}): {body}"));
    (status, content_type, json, chunked)
}

/// An HTTP answer's status code, content type, body (its chunks joined)
/// and whether it came in chunks.
fn parsed(answer: &str) -> (String, String, String, bool) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_default();
    let chunked = head.to_lowercase().contains("transfer-encoding: chunked");
    let body = if chunked {
        let mut joined = String::new();
        let mut rest = body;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if size == 0 {
                break;
            }
            joined.push_str(&tail[..size]);
            rest = &tail[size + 2..];
        }
        joined
    } else {
        body.to_owned()
    };
    (status, content_type, body, chunked)
}

/// The server answers a plain stateless `tools/call` itself, without rmcp's
/// per-request machinery (`mcp/http/direct.rs`); an `Origin` header (a
/// loopback one, which rmcp accepts) sends the same request through rmcp.
/// Both answers must be the same, whatever the call's outcome: the job's
/// ids in the result's `_meta` aside. The framing tells the paths apart: a
/// direct answer has its length, rmcp's is chunked.
#[test]
fn calls_answered_directly_are_answered_as_rmcp_answers_them() {
    let server = start(&[]);
    let addr = &server.addr;
    let origin = format!("Origin: http://{addr}\r\n");
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let calls = [
        (
            "echo",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}},{meta}}}}}"#
            ),
        ),
        (
            "echo",
            format!(
                r#"{{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}},{meta}}}}}"#
            ),
        ),
        // A schema violation: a tool error with its path.
        (
            "echo",
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":5}},{meta}}}}}"#
            ),
        ),
        // No arguments at all.
        (
            "echo",
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo",{meta}}}}}"#
            ),
        ),
        (
            "ai_cos_vlevel_calc",
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"ai_cos_vlevel_calc","arguments":{{"signals":{{"impact":3,"reversibility":2,"autonomy":1}}}},{meta}}}}}"#
            ),
        ),
        // A tool no skill serves: rmcp's error either way.
        (
            "nope",
            format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"nope",{meta}}}}}"#
            ),
        ),
    ];
    fn masked(mut v: serde_json::Value) -> serde_json::Value {
        if let Some(meta) = v
            .pointer_mut("/result/_meta")
            .and_then(|m| m.as_object_mut())
        {
            for ids in meta.values_mut().filter_map(|m| m.as_object_mut()) {
                for key in ["jobId", "traceId"] {
                    if ids.contains_key(key) {
                        ids.insert(key.into(), "masked".into());
                    }
                }
            }
        }
        v
    }
    for (name, body) in &calls {
        let direct = call_2026(addr, name, "", body);
        let through_rmcp = call_2026(addr, name, &origin, body);
        assert_eq!(direct.0, through_rmcp.0, "status of {body}");
        assert_eq!(direct.1, through_rmcp.1, "content type of {body}");
        assert_eq!(
            masked(direct.2.clone()),
            masked(through_rmcp.2),
            "answer to {body}"
        );
        assert_eq!(direct.1, "application/json", "{body}");
        assert!(through_rmcp.3, "rmcp answers in chunks: {body}");
        assert_eq!(direct.3, *name == "nope", "answered directly: {body}");
        if *name == "echo" && body.contains(r#""message":"hi""#) {
            assert_eq!(direct.2["result"]["isError"], false, "{}", direct.2);
            assert_eq!(direct.2["result"]["structuredContent"]["message"], "hi");
        }
    }
}

/// In a session whose client can be asked nothing and asked for no log
/// lines, a plain `tools/call` is answered directly too, as one JSON body;
/// rmcp answers the same call (sent with an `Origin`, or once the session
/// asked for log lines) as an event stream carrying the same message.
#[test]
fn session_calls_answered_directly_are_answered_as_rmcp_answers_them() {
    let server = start(&[]);
    let addr = &server.addr;
    let session = open_session(addr);
    assert!(notify(addr, &session).starts_with("HTTP/1.1 202"));
    let call = |extra: &str, body: &str| {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {session}\r\n{extra}\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let (status, content_type, body, _) = parsed(&exchange(addr, &request));
        // An event stream's message is its one `data:` line that is not empty.
        let text = if content_type == "text/event-stream" {
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .find(|d| !d.is_empty())
                .unwrap_or_default()
                .to_owned()
        } else {
            body
        };
        let json: serde_json::Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("a JSON-RPC answer ({e}): {text}"));
        (status, content_type, json)
    };
    let origin = format!("Origin: http://{addr}\r\n");
    for body in [
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"message":5}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"note":1}}}"#,
    ] {
        let direct = call("", body);
        let through_rmcp = call(&origin, body);
        assert_eq!(direct.1, "application/json", "answered directly: {body}");
        assert_eq!(through_rmcp.1, "text/event-stream", "through rmcp: {body}");
        assert_eq!(
            (&direct.0, &direct.2),
            (&through_rmcp.0, &through_rmcp.2),
            "{body}"
        );
        assert!(
            direct.2["result"].get("resultType").is_none(),
            "2025-11-25's shape"
        );
    }
    // Another session's id, or none of this server's: not answered.
    let echo = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: not-a-session\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{echo}",
        echo.len()
    );
    assert_eq!(parsed(&exchange(addr, &request)).0, "404");
    // Once the session asked for log lines, its calls go through rmcp,
    // which sends them.
    let level =
        r#"{"jsonrpc":"2.0","id":10,"method":"logging/setLevel","params":{"level":"info"}}"#;
    assert_eq!(call("", level).0, "200");
    assert_eq!(call("", echo).1, "text/event-stream");
}
