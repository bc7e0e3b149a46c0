//! Load for the session path of Streamable HTTP, as the Python and TypeScript
//! SDKs and the MCP Inspector take it: each of CONNS kept-alive connections
//! opens its own 2025-11-25 session (`initialize`, `notifications/initialized`)
//! and then calls `echo` in it, one call at a time, for SECONDS. Prints
//! `calls/s p50_ms p99_ms` (bench/mcp-http.sh runs it beside wrk's stateless
//! case). Answers may be JSON bodies or event streams, sent whole or chunked;
//! every call must succeed, or the run fails.
//!
//!   mcp-session-load HOST:PORT CONNS SECONDS [TOKEN]

use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#;

type Error = Box<dyn std::error::Error + Send + Sync>;

struct Conn {
    stream: BufReader<TcpStream>,
    host: String,
    token: Option<String>,
    session: Option<String>,
}

impl Conn {
    /// POST `body`: the status, the session header, and the body.
    async fn post(&mut self, body: &str) -> Result<(u16, Option<String>, String), Error> {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(s) = &self.session {
            head.push_str(&format!(
                "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            ));
        }
        if let Some(t) = &self.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(body);
        self.stream.get_mut().write_all(head.as_bytes()).await?;
        self.read().await
    }

    async fn read(&mut self) -> Result<(u16, Option<String>, String), Error> {
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .ok_or("no status line")?
            .parse()?;
        let (mut length, mut chunked, mut session) = (None, false, None);
        loop {
            line.clear();
            self.stream.read_line(&mut line).await?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (name, value) = l.split_once(':').ok_or("bad header")?;
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = Some(value.parse::<usize>()?),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).await?;
                let size = usize::from_str_radix(line.trim(), 16)?;
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            self.stream.read_exact(&mut body).await?;
        }
        Ok((status, session, String::from_utf8(body)?))
    }
}

/// One connection's session and calls until `until`: each call's latency.
async fn load(addr: String, token: Option<String>, until: Instant) -> Result<Vec<Duration>, Error> {
    let stream = TcpStream::connect(&addr).await?;
    stream.set_nodelay(true)?;
    let mut conn = Conn {
        stream: BufReader::new(stream),
        host: addr,
        token,
        session: None,
    };
    let (status, session, body) = conn.post(INITIALIZE).await?;
    if status != 200 {
        return Err(format!("initialize: {status} {body}").into());
    }
    conn.session = Some(session.ok_or("no session id")?);
    let (status, _, _) = conn.post(INITIALIZED).await?;
    if status != 202 {
        return Err(format!("initialized: {status}").into());
    }
    let mut latencies = Vec::new();
    while Instant::now() < until {
        let started = Instant::now();
        let (status, _, body) = conn.post(CALL).await?;
        if status != 200 || !body.contains(r#""isError":false"#) {
            return Err(format!("call: {status} {body}").into());
        }
        latencies.push(started.elapsed());
    }
    Ok(latencies)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, conns, seconds, rest @ ..] = args.as_slice() else {
        return Err("usage: mcp-session-load HOST:PORT CONNS SECONDS [TOKEN]".into());
    };
    let token = rest.first().filter(|t| !t.is_empty()).cloned();
    let seconds: f64 = seconds.parse()?;
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..conns.parse::<usize>()? {
        tasks.push(tokio::spawn(load(addr.clone(), token.clone(), until)));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let at = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    println!(
        "{:.2} {:.3} {:.3}",
        all.len() as f64 / elapsed,
        at(0.50).as_secs_f64() * 1000.0,
        at(0.99).as_secs_f64() * 1000.0
    );
    Ok(())
}
