//! Every frame a client sends over stdio gets an answer: lines that are not
//! JSON-RPC (truncated, invalid UTF-8, NUL, out-of-range numbers, nesting too
//! deep, a lone surrogate, two frames on one line, a line over the frame
//! limit) a parse error with a null id; a known method with params that do
//! not fit, -32602 with its id. The server keeps serving after each.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use skill_tests::skill_examples;

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn send(&mut self, frame: &[u8]) {
        self.stdin.write_all(frame).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn reply(&self, what: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no reply to {what}"));
        serde_json::from_str(&line).unwrap()
    }
}

fn start() -> Server {
    let mut child = skill_examples(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("skill-examples starts");
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Server {
        child,
        stdin,
        lines,
    }
}

#[test]
fn every_frame_gets_an_answer_and_serving_goes_on() {
    let mut server = start();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    server.send(init.to_string().as_bytes());
    assert_eq!(server.reply("initialize")["id"], 0);
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(17 * 1024 * 1024)
    );
    let malformed: Vec<(&str, Vec<u8>)> = vec![
        (
            "truncated",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#.to_vec(),
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"\xff\"}".to_vec(),
        ),
        ("NUL", b"\x00".to_vec()),
        (
            "1e400",
            br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":1e400}}"#.to_vec(),
        ),
        ("deep nesting", deep.into_bytes()),
        (
            "lone surrogate",
            br#"{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"\ud800"}}"#.to_vec(),
        ),
        (
            "two frames on a line",
            br#"{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}"#
                .to_vec(),
        ),
        ("a line over the frame limit", huge.into_bytes()),
    ];
    for (what, frame) in &malformed {
        server.send(frame);
        let reply = server.reply(what);
        assert_eq!(reply["error"]["code"], -32700, "{what}: {reply}");
        assert_eq!(reply["id"], Value::Null, "{what}: {reply}");
    }

    for (id, params) in [
        (10, json!({"name": "echo", "arguments": "not an object"})),
        (11, json!({"name": 5})),
    ] {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        server.send(frame.to_string().as_bytes());
        let reply = server.reply("bad tools/call params");
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }

    // An unknown method is still that; a notification that does not parse is
    // ignored (no reply), and the next request is answered.
    server.send(br#"{"jsonrpc":"2.0","id":12,"method":"no/such"}"#);
    assert_eq!(server.reply("unknown method")["error"]["code"], -32601);
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#);
    server.send(br#"{"jsonrpc":"2.0","id":13,"method":"ping"}"#);
    let pong = server.reply("ping");
    assert_eq!(pong["id"], 13, "{pong}");
    assert!(pong.get("result").is_some(), "{pong}");
}
