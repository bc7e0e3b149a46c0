//! The MCP endpoint mounted in an axum app (examples/mounted) beside the
//! app's own routes: health and readiness (Redis reachable, then not), the
//! MCP endpoint behind API keys, the metadata its 401 names, a long call run
//! as a task by the fleet's worker.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use skill_tests::fleet::{RedisServer, WorkerProcess, api_key};
use skill_tests::{cargo, root, run_ok, temp_dir};

struct Mounted(Child, String);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn binary() -> std::path::PathBuf {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            run_ok(cargo().args(["build", "-q", "-p", "mounted"]));
            root().join("target/debug/mounted")
        })
        .clone()
}

fn start(args: &[&str]) -> Mounted {
    let child = Command::new(binary())
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .current_dir(root())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the example starts");
    let mut m = Mounted(child, String::new());
    let mut err = BufReader::new(m.0.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    m.1 = line
        .trim()
        .strip_prefix("serving at http://")
        .unwrap_or_else(|| panic!("unexpected: {line}"))
        .to_owned();
    std::thread::spawn(move || for _ in err.lines() {});
    m
}

/// `METHOD PATH` with extra header lines and a body: status line and body.
fn request(addr: &str, method: &str, path: &str, headers: &str, body: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}

/// The JSON of an answer's body, sent whole or in chunks.
fn json_of(body: &str) -> serde_json::Value {
    let json = match serde_json::from_str(body) {
        Ok(v) => return v,
        // Chunked: the first chunk's size line, then the message.
        Err(_) => body.split("\r\n").nth(1).unwrap_or_default(),
    };
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {body:?}"))
}

#[test]
fn the_endpoint_serves_beside_the_apps_routes() {
    let dir = temp_dir("mounted");
    let keys = dir.join("keys.json");
    let key = api_key(&keys, "app-bot", &["--grant", "obsidian:read"]);
    // A second caller, with the same grant, to hold the first one's ids.
    let other_key = api_key(&keys, "other-bot", &["--grant", "obsidian:read"]);
    let mut redis = RedisServer::start("mounted");
    let m = start(&[
        "--api-keys",
        keys.to_str().unwrap(),
        "--redis",
        &redis.url(),
    ]);
    let addr = &m.1;

    let (status, body) = request(addr, "GET", "/healthz", "", "");
    assert!(
        status.contains(" 200 ") && body.contains("ok"),
        "{status} {body}"
    );
    let (status, body) = request(addr, "GET", "/ready", "", "");
    assert!(
        status.contains(" 200 ") && body.contains("reachable"),
        "{status} {body}"
    );

    let mcp = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
               MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n";
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let (status, _) = request(addr, "POST", "/mcp", mcp, list);
    assert!(status.contains(" 401 "), "{status}");
    let (status, body) = request(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        "",
        "",
    );
    assert!(
        status.contains(" 200 ") && body.contains("\"resource\""),
        "{status} {body}"
    );
    let with_key = format!("{mcp}Authorization: Bearer {key}\r\n");
    let (status, body) = request(addr, "POST", "/mcp", &with_key, list);
    assert!(status.contains(" 200 "), "{status} {body}");
    assert!(body.contains("read_note"), "{body}");
    assert!(
        !body.contains("ai_cos_vlevel_calc"),
        "a tool the key is not granted: {body}"
    );

    // A long tool from a 2026-07-28 client that declared the tasks
    // extension: a task on the fleet, run by its worker, polled to its
    // result through the mounted endpoint.
    let worker = WorkerProcess::start(&redis.url(), &[]);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"count_slowly","arguments":{{"to":3,"step_ms":10}},{meta}}}}}"#
    );
    let headers = with_key.replace("Mcp-Method: tools/list", "Mcp-Method: tools/call")
        + "Mcp-Name: count_slowly\r\n";
    let (status, body) = request(addr, "POST", "/mcp", &headers, &call);
    assert!(status.contains(" 200 "), "{status} {body}");
    let created = json_of(&body);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{{"taskId":"{id}",{meta}}}}}"#
    );
    let headers = with_key.replace("Mcp-Method: tools/list", "Mcp-Method: tasks/get")
        + &format!("Mcp-Name: {id}\r\n");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let done = loop {
        let (_, body) = request(addr, "POST", "/mcp", &headers, &get);
        let polled = json_of(&body);
        if polled["result"]["status"] == "completed" || std::time::Instant::now() > deadline {
            break polled;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["structuredContent"]["counted"], 3,
        "{done}"
    );
    // Another caller holding the task's id is told no such task is theirs.
    let (_, body) = request(
        addr,
        "POST",
        "/mcp",
        &headers.replace(&key, &other_key),
        &get,
    );
    let theirs = json_of(&body);
    assert!(
        theirs["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no task")),
        "{theirs}"
    );
    drop(worker);

    // The console, mounted beside it: a browser is sent to sign in, a
    // client with the same key gets the page, its links under /console.
    let (status, _) = request(addr, "GET", "/console/queue", "", "");
    assert!(status.contains(" 303 "), "{status}");
    let (status, body) = request(
        addr,
        "GET",
        "/console/queue",
        &format!("Authorization: Bearer {key}\r\n"),
        "",
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    assert!(body.contains("href=\"/console/runs\""), "{body}");
    let (status, body) = request(addr, "GET", "/console/login", "", "");
    assert!(
        status.contains(" 200 ") && body.contains("action=\"/console/login\""),
        "{status} {body}"
    );

    // Redis gone: not ready, still alive.
    redis.stop();
    let (status, _) = request(addr, "GET", "/ready", "", "");
    assert!(status.contains(" 503 "), "{status}");
    let (status, _) = request(addr, "GET", "/healthz", "", "");
    assert!(status.contains(" 200 "), "{status}");
}

/// The limits docs/deploy.md prescribes, in the mounted app too: a client
/// that trickles its headers is cut off at the header timeout, idle
/// connections past the cap give their place to a new one (an authenticated
/// call is served among 40 idle ones with a cap of 8), and the example runs
/// from any folder, finding its data, or saying which folder it lacks.
#[test]
fn the_mounted_app_keeps_the_connection_limits_and_runs_from_anywhere() {
    let dir = temp_dir("mounted-limits");
    let m = Command::new(binary())
        .args(["--listen", "127.0.0.1:0", "--max-connections", "8"])
        .args(["--header-timeout-ms", "1000"])
        .current_dir(&dir)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the example starts outside the repository");
    let mut m = Mounted(m, String::new());
    let mut err = BufReader::new(m.0.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    m.1 = line
        .trim()
        .strip_prefix("serving at http://")
        .unwrap_or_else(|| panic!("unexpected: {line}"))
        .to_owned();
    std::thread::spawn(move || for _ in err.lines() {});
    let addr = m.1.clone();

    // Headers at one byte a second: closed at the timeout.
    let mut slow = TcpStream::connect(&addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = std::time::Instant::now();
    let mut closed = false;
    for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\n".iter() {
        if slow.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        if started.elapsed() > Duration::from_secs(4) {
            break;
        }
    }
    let mut rest = Vec::new();
    let read = slow.read_to_end(&mut rest);
    assert!(
        closed || read.is_ok_and(|n| n == 0 || String::from_utf8_lossy(&rest).contains("408")),
        "a trickling client was held: {:?}",
        String::from_utf8_lossy(&rest)
    );
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );

    // Forty idle connections, a cap of eight: a request is still served.
    let idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = request(&addr, "GET", "/healthz", "", "");
    assert!(
        status.contains(" 200 ") && body.contains("ok"),
        "{status} {body}"
    );
    drop(idle);

    // A data folder that is not there: the error names it.
    let out = Command::new(binary())
        .args(["--listen", "127.0.0.1:0", "--data", "no/such/data"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no/such/data") && said.contains("not a folder"),
        "{said}"
    );
}
