//! The MCP HTTP transport's limits, on the real server: a browser origin that
//! is neither loopback nor allowed gets 403; a connection that sends nothing is
//! closed after the header timeout; past the connection cap, a new client
//! waits until a slot frees.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use skill_tests::skill_examples;

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(extra: &[&str]) -> Server {
    let mut cmd = skill_examples(&["mcp", "--http", "127.0.0.1:0"]);
    cmd.args(extra).stdout(Stdio::null()).stderr(Stdio::piped());
    // Owned by `Server` at once, whose drop kills and waits for it.
    let mut server = Server {
        child: cmd.spawn().expect("skill-examples starts"),
        addr: String::new(),
    };
    let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "server exited");
        if let Some(rest) = line
            .trim()
            .strip_prefix("serving MCP (Streamable HTTP) at http://")
        {
            server.addr = rest.trim_end_matches("/mcp").to_owned();
            // Keep draining stderr so the server never blocks on it.
            std::thread::spawn(move || for _ in stderr.lines() {});
            return server;
        }
    }
}

/// POST an `initialize` to `/mcp` with `origin`, and read the status line.
fn post_status(addr: &str, origin: Option<&str>) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{origin}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    line.trim().to_owned()
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
fn silent_connections_are_closed_and_the_cap_makes_new_ones_wait() {
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

    // Two silent connections hold both slots: a real client waits for one of
    // them to be closed (by the header timeout), then is served.
    let _a = TcpStream::connect(addr).unwrap();
    let _b = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let status = post_status(addr, None);
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "served before a slot was free ({:?})",
        started.elapsed()
    );
}
