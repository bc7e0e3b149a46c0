//! The example app's MCP server over stdio, spoken to in raw JSON-RPC on
//! the 2026-07-28 revision (what the Python client cannot yet say: tasks,
//! and exact `_meta`).

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::fleet::app;

/// An MCP server over stdio, spoken to in raw JSON-RPC on the 2026-07-28
/// revision, as a client that declared the tasks extension.
pub struct McpStdio {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
}

impl McpStdio {
    /// `skill-examples mcp ARGS...`.
    pub fn start(args: &[&str]) -> McpStdio {
        McpStdio::start_env(args, &[])
    }

    /// `skill-examples mcp ARGS...` with variables `env` set.
    pub fn start_env(args: &[&str], env: &[(&str, &str)]) -> McpStdio {
        // The server's caller acts as an executor unless told otherwise: most
        // seed skills are reusable by that role only.
        let role: &[&str] = match args.contains(&"--role") {
            true => &[],
            false => &["--role", "executor"],
        };
        let mut child = Command::new(app())
            .arg("mcp")
            .args(role)
            .args(args)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        McpStdio {
            child,
            out,
            next: 1,
        }
    }

    /// Send request `method` with `params` (their `_meta` set to the
    /// 2026-07-28 client's, merged over what `params` has); its answer.
    pub fn request(&mut self, method: &str, mut params: Value) -> Value {
        use std::io::{BufRead, Write};
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-client", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            }
        });
        if let Some(given) = params["_meta"].as_object() {
            for (k, v) in given {
                meta[k] = v.clone();
            }
        }
        params["_meta"] = meta;
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut answer = String::new();
            assert!(
                self.out.read_line(&mut answer).unwrap() > 0,
                "the server closed"
            );
            let v: Value = serde_json::from_str(&answer).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Poll task `id` until it ends; its last state.
    pub fn until_done(&mut self, id: &str) -> Value {
        for _ in 0..200 {
            let got = self.request("tasks/get", json!({ "taskId": id }));
            let status = got["result"]["status"].as_str().unwrap_or("").to_owned();
            if status != "working" {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("task {id} never ended");
    }
}

impl McpStdio {
    /// Close its input and wait for it to exit (it flushes what it holds).
    pub fn close(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
