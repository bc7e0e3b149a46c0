//! The MCP server over HTTP as an OAuth 2.1 resource server, against a real
//! token issuer (keys made per run, the JWKS served over HTTP on loopback):
//! every way a token can be wrong gets 401 and runs nothing, a missing
//! scope 403 naming it, a valid token its caller's tools; API keys from a
//! file, revoked without a restart; a non-loopback address refused without
//! authentication. Real clients too: the Python `mcp` client with a bearer
//! token, the MCP Inspector CLI with a header.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use skill_tests::fleet::{Kind, api_key, app};
use skill_tests::issuer::{self, JwksServer, Key, claims};
use skill_tests::mcp_http::{Server, launch};
use skill_tests::{root, temp_dir};

const AUDIENCE: &str = "http://mcp.test/mcp";

/// `skill-examples mcp --http 127.0.0.1:0 ARGS...`, once it serves.
fn serve(args: &[&str]) -> Server {
    let mut cmd = Command::new(app());
    cmd.args(["mcp", "--http", "127.0.0.1:0"])
        .args(args)
        .current_dir(root());
    launch(cmd).0
}

/// A server checking tokens of [`issuer::ISSUER`] for [`AUDIENCE`] against
/// `jwks`, roles in the `role` claim.
fn jwt_server(jwks: &JwksServer) -> Server {
    serve(&[
        "--auth",
        "jwt",
        "--jwks",
        &jwks.url,
        "--issuer",
        issuer::ISSUER,
        "--audience",
        AUDIENCE,
        "--role-claim",
        "role",
        "--jwks-refetch-secs",
        "1",
    ])
}

/// An answer: status line, headers (lower-case names), the JSON message of
/// its body (a JSON body, or the first event of a stream).
struct Answer {
    status: String,
    headers: String,
    body: Value,
}

fn post(addr: &str, token: Option<&str>, session: Option<&str>, message: &Value) -> Answer {
    let body = message.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if let Some(s) = session {
        head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
    }
    send(addr, &head, &body)
}

/// A stateless 2026-07-28 `tools/call` of `tool` with `token`.
fn call_2026(addr: &str, token: &str, tool: &str, arguments: Value) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    send(addr, &head, &body)
}

/// Send `head` (without its blank line) and `body`; read the answer.
fn send(addr: &str, head: &str, body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    // A stream's first `data:` line, a chunked body's JSON, or the body.
    let json = rest
        .lines()
        .find_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .filter(|d| !d.is_empty())
        })
        .or_else(|| rest.lines().find(|l| l.trim_start().starts_with('{')))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    Answer {
        status: status.to_owned(),
        headers: headers.to_lowercase(),
        body: json,
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
}

/// A session opened with `token`: its id.
fn session(addr: &str, token: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    let body = initialize().to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let id = answer
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {answer}"));
    let _ = post(
        addr,
        Some(token),
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    id
}

fn list(addr: &str, token: &str) -> Vec<String> {
    let s = session(addr, token);
    let a = post(
        addr,
        Some(token),
        Some(&s),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    );
    a.body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{} {:?}", a.status, a.body))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn call(addr: &str, token: &str, tool: &str, arguments: Value) -> Answer {
    let s = session(addr, token);
    post(
        addr,
        Some(token),
        Some(&s),
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}),
    )
}

fn vlevel_input() -> Value {
    json!({"page_data": {"url": "https://shop.example.com/p/1", "gamme": "plaquettes",
        "marque": "renault", "modele": "clio", "type": "1.5 dci", "ktypnr": "12345"}})
}

#[test]
fn bearer_tokens_are_checked_every_way_they_can_be_wrong() {
    let (ed, ec) = (Key::ed25519("ed-1"), Key::p256("ec-1"));
    let jwks = JwksServer::start(&[&ed, &ec]);
    let server = jwt_server(&jwks);
    let addr = &server.addr;
    assert_eq!(jwks.fetched(), 1, "the key set is fetched at start");

    // Valid, with each key: the caller's tools, and a call that runs.
    let ok = claims(AUDIENCE, "ann", "seo:read skills:execute");
    for key in [&ed, &ec] {
        let token = key.sign(&ok);
        let tools = list(addr, &token);
        assert!(
            tools.contains(&"ai_cos_vlevel_calc".to_owned()),
            "{tools:?}"
        );
        assert!(
            !tools.contains(&"ai_cos_routes_sync".to_owned()),
            "a tool needing seo:write is not listed: {tools:?}"
        );
        let a = call(addr, &token, "ai_cos_vlevel_calc", vlevel_input());
        assert!(a.status.contains(" 200 "), "{} {:?}", a.status, a.body);
        assert_eq!(a.body["result"]["isError"], json!(false), "{:?}", a.body);
    }

    // No token: 401 naming the metadata; the metadata names the issuer.
    let a = post(addr, None, None, &initialize());
    assert!(a.status.contains(" 401 "), "{}", a.status);
    let metadata = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(
        a.headers.contains(&format!(
            "www-authenticate: bearer resource_metadata=\"{metadata}\""
        )),
        "{}",
        a.headers
    );
    let doc = get_json(addr, "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(doc["authorization_servers"], json!([issuer::ISSUER]));
    assert!(
        doc["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("seo:read"))
    );

    // Every way a token can be wrong: 401, invalid_token, and it says why.
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut c = ok.clone();
        edit(&mut c);
        c
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "expired",
            ed.sign(&with(&|c| c["exp"] = json!(issuer::at(-600)))),
            "expired",
        ),
        (
            "not yet valid",
            ed.sign(&with(&|c| c["nbf"] = json!(issuer::at(600)))),
            "not valid yet",
        ),
        (
            "another issuer",
            ed.sign(&with(&|c| c["iss"] = json!("https://evil.test"))),
            "issuer",
        ),
        (
            "another audience",
            ed.sign(&with(&|c| c["aud"] = json!("http://other/mcp"))),
            "not for this resource",
        ),
        (
            "no subject",
            ed.sign(&with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            })),
            "`sub`",
        ),
        ("tampered", issuer::tampered(&ed.sign(&ok)), "signature"),
        ("alg none", issuer::unsigned(&ok), "not a JWT"),
        (
            "HMAC with the public key",
            issuer::hmac_with_public_key(&ed, &ok),
            "refused",
        ),
        (
            "unknown role",
            ed.sign(&with(&|c| c["role"] = json!("overlord"))),
            "overlord",
        ),
        (
            "a critical extension (RFC 7515: refused when not understood)",
            ed.sign_critical(&ok, Some(&["exp"])),
            "`crit`",
        ),
        ("not a token", "abc.def".to_owned(), "not a JWT"),
    ];
    for (what, token, says) in &cases {
        let a = post(addr, Some(token), None, &initialize());
        assert!(a.status.contains(" 401 "), "{what}: {}", a.status);
        assert!(
            a.headers.contains("error=\"invalid_token\""),
            "{what}: {}",
            a.headers
        );
        let message = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{what}: {message}");
        assert!(
            !message.contains(token.as_str()),
            "{what}: the token is echoed"
        );
    }

    // An unknown key: the set is fetched once more, then the token refused;
    // a second one at once fetches nothing.
    std::thread::sleep(Duration::from_millis(1100));
    let stranger = Key::ed25519("ed-2");
    let before = jwks.fetched();
    let a = post(addr, Some(&stranger.sign(&ok)), None, &initialize());
    assert!(a.status.contains(" 401 "), "{}", a.status);
    assert_eq!(jwks.fetched(), before + 1, "one refetch for an unknown key");
    let _ = post(addr, Some(&stranger.sign(&ok)), None, &initialize());
    assert_eq!(jwks.fetched(), before + 1, "no refetch storm");
    // Rotation: the issuer publishes the key, the next token with it passes.
    jwks.add(&stranger);
    std::thread::sleep(Duration::from_millis(1100));
    assert!(list(addr, &stranger.sign(&ok)).contains(&"ai_cos_vlevel_calc".to_owned()));

    // A missing scope: 403 insufficient_scope naming it, nothing runs.
    let reader = ed.sign(&claims(AUDIENCE, "bob", "obsidian:read skills:execute"));
    // Also as a stateless 2026-07-28 call, which the endpoint answers
    // itself: the same refusal, with the request's id.
    let answers =
        [call, call_2026].map(|form| form(addr, &reader, "ai_cos_vlevel_calc", vlevel_input()));
    for a in &answers {
        assert!(a.status.contains(" 403 "), "{} {:?}", a.status, a.body);
        assert!(
            a.headers
                .contains("error=\"insufficient_scope\", scope=\"seo:read\""),
            "{}",
            a.headers
        );
    }
    assert_eq!(answers[1].body["id"], 11, "{:?}", answers[1].body);
    // A role the skill does not admit: a tool error from the pipeline.
    let analyzer = ed.sign(&with(&|c| {
        c["role"] = json!("analyzer");
        c["scope"] = json!("seo:read skills:read");
    }));
    let a = call(addr, &analyzer, "ai_cos_vlevel_calc", vlevel_input());
    assert_eq!(a.body["result"]["isError"], json!(true), "{:?}", a.body);
    // The server keeps serving.
    assert!(list(addr, &ed.sign(&ok)).contains(&"ai_cos_vlevel_calc".to_owned()));
}

fn get_json(addr: &str, path: &str) -> Value {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

#[test]
fn api_keys_name_their_callers_and_revoke_without_a_restart() {
    let dir = temp_dir("api-keys");
    let file = dir.join("keys.json");
    let new_key = |name: &str, grants: &[&str]| {
        let options: Vec<&str> = grants.iter().flat_map(|g| ["--grant", g]).collect();
        api_key(&file, name, &options)
    };
    let seo = new_key("seo-bot", &["seo:read"]);
    let notes = new_key("notes-bot", &["obsidian:read"]);
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(
        !stored.contains(&seo) && !stored.contains(&notes),
        "keys are stored hashed"
    );
    // `--auth api-keys FILE`, as docs/deploy.md writes it.
    let server = serve(&["--auth", "api-keys", file.to_str().unwrap()]);
    let addr = &server.addr;
    assert!(list(addr, &seo).contains(&"ai_cos_vlevel_calc".to_owned()));
    assert!(!list(addr, &notes).contains(&"ai_cos_vlevel_calc".to_owned()));
    let a = post(addr, Some("sk_not_a_key"), None, &initialize());
    assert!(a.status.contains(" 401 "), "{}", a.status);
    // Revoked: the entry removed from the file, the server not restarted.
    let mut doc: Value = serde_json::from_str(&stored).unwrap();
    doc["keys"]
        .as_array_mut()
        .unwrap()
        .retain(|k| k["name"] != "seo-bot");
    std::fs::write(&file, doc.to_string()).unwrap();
    let a = post(addr, Some(&seo), None, &initialize());
    assert!(a.status.contains(" 401 "), "a revoked key: {}", a.status);
    assert!(list(addr, &notes).contains(&"read_note".to_owned()));

    // Revoked by a file of the same length with its old modification time:
    // the file is compared by what it holds.
    let before = std::fs::read_to_string(&file).unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let revoked = before.replacen("notes-bot", "notes-xyz", 1);
    let mut hashed: Value = serde_json::from_str(&revoked).unwrap();
    let h = hashed["keys"][0]["hash"].as_str().unwrap().to_owned();
    let flipped = format!(
        "{}{}",
        &h[..h.len() - 1],
        if h.ends_with('0') { '1' } else { '0' }
    );
    hashed["keys"][0]["hash"] = json!(flipped);
    let same_length = hashed.to_string();
    assert_eq!(same_length.len(), before.len(), "{same_length}\n{before}");
    std::fs::write(&file, &same_length).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let a = post(addr, Some(&notes), None, &initialize());
    assert!(
        a.status.contains(" 401 "),
        "a key revoked in place: {}",
        a.status
    );

    // A FIFO in the file's place: every key refused at once (503), nothing
    // hangs, the metadata page answers, and a real file back is read.
    std::fs::remove_file(&file).unwrap();
    let made = Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let a = post(addr, Some(&notes), None, &initialize());
    assert!(a.status.contains(" 503 "), "{}", a.status);
    assert!(started.elapsed() < Duration::from_secs(2));
    let _ = get_json(addr, "/.well-known/oauth-protected-resource/mcp");
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, &before).unwrap();
    assert!(list(addr, &notes).contains(&"read_note".to_owned()));
}

/// The key set is fetched again on a timer: a withdrawn key stops verifying
/// tokens never seen and tokens remembered alike, within the interval. An
/// issuer that fails costs one attempt per refetch interval, however many
/// made-up `kid`s arrive; one that hangs holds no request past the bound.
#[test]
fn withdrawn_keys_stop_within_the_refresh_and_a_failing_issuer_is_not_hammered() {
    let (ed, gone) = (Key::ed25519("ed-1"), Key::ed25519("ed-gone"));
    let jwks = JwksServer::start(&[&ed, &gone]);
    let server = serve(&[
        "--auth",
        "jwt",
        "--jwks",
        &jwks.url,
        "--issuer",
        issuer::ISSUER,
        "--audience",
        AUDIENCE,
        "--jwks-refetch-secs",
        "30",
        "--jwks-refresh-secs",
        "1",
    ]);
    let addr = &server.addr;
    let ok = claims(AUDIENCE, "ann", "seo:read skills:execute");
    let seen = gone.sign(&ok);
    assert!(
        post(addr, Some(&seen), None, &initialize())
            .status
            .contains(" 200 ")
    );
    jwks.remove("ed-gone");
    std::thread::sleep(Duration::from_millis(2500));
    let never_seen = gone.sign(&claims(AUDIENCE, "ann2", "seo:read"));
    for (what, token) in [
        ("a token never seen", &never_seen),
        ("a token remembered", &seen),
    ] {
        let a = post(addr, Some(token), None, &initialize());
        assert!(a.status.contains(" 401 "), "{what}: {}", a.status);
    }
    assert!(
        post(addr, Some(&ed.sign(&ok)), None, &initialize())
            .status
            .contains(" 200 ")
    );

    // Failing: 32 made-up kids at once, one attempt at most (the refresh
    // timer's own fetches aside, one a second).
    jwks.answer(issuer::Answering::Fails);
    std::thread::sleep(Duration::from_millis(1500));
    let before = jwks.fetched();
    let started = std::time::Instant::now();
    let answers: Vec<String> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..32)
            .map(|i| {
                let token = Key::ed25519(&format!("made-up-{i}")).sign(&ok);
                s.spawn(move || post(addr, Some(&token), None, &initialize()).status)
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let took = started.elapsed();
    let fetches = jwks.fetched() - before;
    let timer = took.as_secs() as usize + 2;
    assert!(
        answers
            .iter()
            .all(|a| a.contains(" 401 ") || a.contains(" 503 ")),
        "{answers:?}"
    );
    assert!(
        fetches <= 1 + timer,
        "{fetches} fetches in {took:?} for 32 unknown keys"
    );

    // Hanging: no request waits on the fetch for long.
    jwks.answer(issuer::Answering::Hangs);
    let stranger = Key::ed25519("late");
    let started = std::time::Instant::now();
    let answers: Vec<(String, Duration)> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let token = stranger.sign(&ok);
                s.spawn(move || {
                    let at = std::time::Instant::now();
                    let status = post(addr, Some(&token), None, &initialize()).status;
                    (status, at.elapsed())
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for (status, took) in &answers {
        assert!(
            status.contains(" 401 ") || status.contains(" 503 "),
            "{status}"
        );
        assert!(*took < Duration::from_secs(4), "a request waited {took:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    // The known key still works while the issuer hangs.
    assert!(
        post(addr, Some(&ed.sign(&ok)), None, &initialize())
            .status
            .contains(" 200 ")
    );
}

/// A session is the capability of the caller who opened it: another caller
/// with valid credentials of its own, holding the session's id, can neither
/// send on it (a call, an answer to its questions, a cancellation), nor
/// open its event stream, nor delete it: each is answered as for a session
/// that does not exist, and the owner's session goes on.
#[test]
fn a_session_belongs_to_the_caller_who_opened_it() {
    let dir = temp_dir("session-owner");
    let file = dir.join("keys.json");
    let key = |name: &str| api_key(&file, name, &["--grant", "seo:read"]);
    let (ann, bob) = (key("ann"), key("bob"));
    let server = serve(&["--auth", "api-keys", file.to_str().unwrap()]);
    let addr = &server.addr;
    let hers = session(addr, &ann);
    let listing = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "not yours"}});
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept",
        "content": {"approve": true}}});
    // A plain session's tool call, which the endpoint answers itself.
    let echo = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}}});
    for (what, message) in [
        ("a request", &listing),
        ("a tool call", &echo),
        ("a cancellation", &cancel),
        ("an answer", &answer),
    ] {
        let a = post(addr, Some(&bob), Some(&hers), message);
        assert!(
            a.status.contains(" 404 "),
            "{what} on another's session: {}",
            a.status
        );
    }
    for method in ["GET", "DELETE"] {
        let head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
             Authorization: Bearer {bob}\r\nMcp-Session-Id: {hers}\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n"
        );
        let a = send(addr, &head, "");
        assert!(
            a.status.contains(" 404 "),
            "{method} of another's session: {}",
            a.status
        );
    }
    let a = post(addr, Some(&ann), Some(&hers), &listing);
    assert!(
        a.status.contains(" 200 "),
        "the owner's session goes on: {}",
        a.status
    );
    assert!(a.body["result"]["tools"].is_array(), "{:?}", a.body);
    let a = post(addr, Some(&ann), Some(&hers), &echo);
    assert_eq!(
        a.body["result"]["structuredContent"]["message"], "hi",
        "the owner's tool call is answered: {:?}",
        a.body
    );
}

/// A 2026-07-28 approval answer is bound to the caller it was asked of:
/// another caller sending it, with the same call, is asked again and runs
/// nothing.
#[test]
fn an_approval_state_answers_only_for_its_caller() {
    let dir = temp_dir("approval-owner");
    let file = dir.join("keys.json");
    let key = |name: &str| {
        let options = [
            "--role",
            "orchestrator",
            "--level",
            "admin",
            "--grant",
            "rag:admin",
        ];
        api_key(&file, name, &options)
    };
    let (ann, bob) = (key("ann"), key("bob"));
    let server = serve(&["--auth", "api-keys", file.to_str().unwrap()]);
    let addr = &server.addr;
    let purge = |token: &str, answer: Option<&str>| {
        let mut params = json!({"name": "ai_cos_rag_cache_purge",
            "arguments": {"namespace": "knowledge:faq"}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
        if let Some(state) = answer {
            params["requestState"] = json!(state);
            params["inputResponses"] =
                json!({"approval": {"action": "accept", "content": {"approve": true}}});
        }
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
            .to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: ai_cos_rag_cache_purge\r\n\
             Authorization: Bearer {token}\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        send(addr, &head, &body).body
    };
    let asked = purge(&ann, None);
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("{asked}"))
        .to_owned();
    let stolen = purge(&bob, Some(&state));
    assert_eq!(stolen["result"]["resultType"], "input_required", "{stolen}");
    let ran = purge(&ann, Some(&state));
    assert_eq!(ran["result"]["isError"], false, "{ran}");
}

#[test]
fn other_machines_are_served_only_with_authentication() {
    let out = Command::new(app())
        .args(["mcp", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--auth jwt") && err.contains("--auth api-keys"),
        "{err}"
    );
}

/// The Python `mcp` client, with a bearer token: lists and calls.
#[test]
fn the_python_client_connects_with_a_bearer_token() {
    let key = Key::ed25519("ed-py");
    let jwks = JwksServer::start(&[&key]);
    let server = jwt_server(&jwks);
    let token = key.sign(&claims(AUDIENCE, "py", "seo:read skills:execute"));
    python_client(
        "bearer_client.py",
        &server.addr,
        &[&token],
        "bearer client checks passed",
    );
}

/// Run `tests/mcp/SCRIPT` (the real Python `mcp` client) against the
/// server at `addr` with `args`; it must succeed and print `passed`.
fn python_client(script: &str, addr: &str, args: &[&str], passed: &str) {
    let out = Command::new("python3")
        .arg(root().join("tests/mcp").join(script))
        .arg(format!("http://{addr}/mcp"))
        .args(args)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(passed), "{stdout}");
}

/// The MCP Inspector CLI, with an Authorization header: lists.
#[test]
fn the_inspector_connects_with_a_header() {
    let key = Key::p256("ec-inspector");
    let jwks = JwksServer::start(&[&key]);
    let server = jwt_server(&jwks);
    let token = key.sign(&claims(AUDIENCE, "inspector", "seo:read skills:execute"));
    let cli = root().join("tests/mcp/node_modules/.bin/mcp-inspector");
    assert!(cli.exists(), "run `npm ci --prefix tests/mcp`");
    let url = format!("http://{}/mcp", server.addr);
    let run = |header: &str| {
        Command::new(&cli)
            .args(["--cli", &url, "--transport", "http", "--header", header])
            .args(["--method", "tools/list"])
            .output()
            .expect("node runs the Inspector")
    };
    let out = run(&format!("Authorization: Bearer {token}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ai_cos_vlevel_calc"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let refused = run("Authorization: Bearer nope");
    assert!(!refused.status.success(), "a bad token is refused");
}

#[test]
fn each_caller_gets_its_own_rate_limit() {
    let dir = temp_dir("caller-rate");
    let file = dir.join("keys.json");
    let new_key = |name: &str| api_key(&file, name, &[]);
    let (busy, calm) = (new_key("busy-bot"), new_key("calm-bot"));
    let records = dir.join("runs.jsonl");
    let server = serve(&[
        "--record",
        records.to_str().unwrap(),
        "--auth",
        "api-keys",
        "--api-keys",
        file.to_str().unwrap(),
        "--caller-rate",
        "3",
    ]);
    let addr = &server.addr;
    for _ in 0..3 {
        let a = post(addr, Some(&busy), None, &initialize());
        assert!(a.status.contains(" 200 "), "{}", a.status);
    }
    let a = post(addr, Some(&busy), None, &initialize());
    assert!(a.status.contains(" 429 "), "{}", a.status);
    let retry = a
        .headers
        .lines()
        .find_map(|l| l.strip_prefix("retry-after:"))
        .map(|v| v.trim().parse::<u64>().unwrap());
    assert!(matches!(retry, Some(1..=60)), "{}", a.headers);
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("busy-bot"), "{}", a.body);
    assert!(
        !a.body.to_string().contains(&busy),
        "the key is never echoed"
    );
    // Another caller is not held back by the first: its three requests
    // (initialize, initialized, the call) all pass.
    let a = call(addr, &calm, "echo", json!({"message": "hi"}));
    assert!(a.status.contains(" 200 "), "{}", a.status);
    assert_eq!(a.body["result"]["isError"], false, "{}", a.body);
    // The run record names the caller by its key's name, never by the key.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let line = loop {
        let text = std::fs::read_to_string(&records).unwrap_or_default();
        if let Some(line) = text.lines().next() {
            assert!(!text.contains(&calm) && !text.contains(&busy));
            break serde_json::from_str::<Value>(line).unwrap();
        }
        assert!(std::time::Instant::now() < deadline, "no run record");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(line["caller"]["user_id"], "calm-bot", "{line}");
}

/// A remote client, as a remote client is: it names the server by an
/// address that is not loopback, authenticates, and keeps its connection
/// for several calls. Every call is served; without credentials, 401.
#[test]
fn a_remote_client_is_served_by_any_name_on_a_kept_alive_connection() {
    let dir = temp_dir("remote");
    let file = dir.join("keys.json");
    let key = api_key(&file, "remote-bot", &[]);
    let server = serve(&["--auth", "api-keys", file.to_str().unwrap()]);
    let port = server.addr.rsplit(':').next().unwrap();
    let script = r#"
import http.client, json, sys
port, key = int(sys.argv[1]), sys.argv[2]
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
base = {"Host": f"192.0.2.10:{port}", "Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
c = http.client.HTTPConnection("127.0.0.1", port)
for auth in [True, True, True, False]:
    h = dict(base, **({"Authorization": f"Bearer {key}"} if auth else {}))
    c.request("POST", "/mcp", body, h)
    r = c.getresponse()
    d = r.read().decode()
    print(r.status, '"isError":false' in d)
"#;
    let out = Command::new("python3")
        .args(["-c", script, port, &key])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<&str> = said.lines().collect();
    assert_eq!(
        answers,
        ["200 True", "200 True", "200 True", "401 False"],
        "three calls on one connection by a non-loopback name, then one without credentials"
    );
}

/// A refusal is read by a client still sending its body: the server reads
/// the body (within the same limits as any) before it answers 401, so the
/// client's writes all go through and it reads the challenge, not a broken
/// pipe.
#[test]
fn a_client_still_sending_reads_its_challenge() {
    let key = Key::ed25519("ed-body");
    let jwks = JwksServer::start(&[&key]);
    let server = jwt_server(&jwks);
    let addr = &server.addr;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "x".repeat(2 << 20)
    );
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    for chunk in body.as_bytes().chunks(64 << 10) {
        stream
            .write_all(chunk)
            .expect("the server reads what is sent");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 401 "),
        "{}",
        &answer[..answer.len().min(300)]
    );
    assert!(
        answer.to_lowercase().contains("www-authenticate: bearer"),
        "{answer}"
    );
}

/// A stateless 2026-07-28 request of `method` (about `name`: its `Mcp-Name`)
/// with `token`.
fn request_2026(addr: &str, token: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 12, "method": method, "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nMcp-Name: {name}\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    send(addr, &head, &body).body
}

/// The runs (and their files) `resources/list` shows `token`'s caller.
fn listed_runs(addr: &str, token: &str) -> Vec<String> {
    request_2026(addr, token, "resources/list", "", json!({}))["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str().map(str::to_owned))
        .filter(|u| u.starts_with("skill://runs/"))
        .collect()
}

/// A run is its caller's: another caller can neither read it nor see it
/// listed, exactly as if it did not exist.
#[test]
fn a_run_is_readable_by_its_caller_only() {
    let dir = temp_dir("runs-owner");
    let file = dir.join("keys.json");
    let key = |name: &str| api_key(&file, name, &[]);
    let (ann, bob) = (key("ann"), key("bob"));
    let records = dir.join("runs.jsonl");
    let server = serve(&[
        "--auth",
        "api-keys",
        file.to_str().unwrap(),
        "--record",
        records.to_str().unwrap(),
    ]);
    let addr = &server.addr;
    let called = call_2026(addr, &ann, "echo", json!({"message": "ann's"})).body;
    let job = called["result"]["_meta"]["dev.skill-runtime/manifest"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{called}"))
        .to_owned();
    let uri = format!("skill://runs/{job}");
    let read = |token: &str| request_2026(addr, token, "resources/read", &uri, json!({"uri": uri}));
    let own = read(&ann);
    let text = own["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{own}"));
    let record: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        (
            record["skill"].as_str(),
            record["caller"]["user_id"].as_str()
        ),
        (Some("echo"), Some("ann")),
        "{record}"
    );
    let other = read(&bob);
    assert!(other["error"].is_object(), "{other}");
    let unknown = request_2026(
        addr,
        &bob,
        "resources/read",
        "skill://runs/none",
        json!({"uri": "skill://runs/none"}),
    );
    assert_eq!(
        other["error"]["code"], unknown["error"]["code"],
        "{other} {unknown}"
    );
    let listed = |token: &str| listed_runs(addr, token);
    assert_eq!(listed(&ann), vec![uri.clone()]);
    assert!(listed(&bob).is_empty());
    // Subscribing, on a 2025-11-25 session: the owner may; another caller
    // holding the job id is told the run is unknown.
    let subscribe = json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
        "params": {"uri": uri}});
    let hers = session(addr, &ann);
    let own = post(addr, Some(&ann), Some(&hers), &subscribe).body;
    assert!(own["result"].is_object(), "{own}");
    let his = session(addr, &bob);
    let stolen = post(addr, Some(&bob), Some(&his), &subscribe).body;
    assert_eq!(stolen["error"]["code"], -32002, "{stolen}");
}

/// An agent's run is its caller's too, and so are the R3 files it wrote:
/// the run's resource lists them by their own URIs, its caller reads each
/// (Markdown and JSON, as written), and another caller holding the URIs
/// reads neither the run nor its files, answered as for a run that does not
/// exist. The server's paths are never shown.
/// With the files in a directory (`--artifacts DIR`).
#[test]
fn an_agents_run_and_its_r3_files_are_its_callers() {
    agents_runs_and_files_are_their_callers(None);
}

/// With the files on the fleet's store: Redis.
#[test]
fn an_agents_run_and_its_r3_files_on_redis_are_its_callers() {
    agents_runs_and_files_are_their_callers(Some(Kind::Redis));
}

/// With the files on the fleet's store: PostgreSQL.
#[test]
fn an_agents_run_and_its_r3_files_on_postgres_are_its_callers() {
    agents_runs_and_files_are_their_callers(Some(Kind::Postgres));
}

/// The body of the three above: the files in a directory, or on the store
/// of `fleet`'s kind.
fn agents_runs_and_files_are_their_callers(fleet: Option<Kind>) {
    let tag = fleet.map_or("dir".to_owned(), |k| k.tag("agent-runs"));
    let dir = temp_dir(&format!("agent-runs-owner-{tag}"));
    let file = dir.join("keys.json");
    // The agent's skills' scopes, which a caller of the agent needs.
    let key = |name: &str| {
        let grants = ["database:read", "seo:audit", "seo:read"];
        api_key(&file, name, &grants.map(|g| ["--grant", g]).concat())
    };
    let (ann, bob) = (key("ann"), key("bob"));
    let files = dir.join("r3");
    let store = fleet.map(|k| k.start("agent-runs"));
    let (files_arg, records) = (files.display().to_string(), dir.join("runs.jsonl"));
    let mut args = vec!["--auth", "api-keys", file.to_str().unwrap(), "--agents"];
    let url = store.as_ref().map(|s| s.url());
    match &url {
        Some(url) => args.extend(["--redis", url.as_str()]),
        None => args.extend([
            "--artifacts",
            files_arg.as_str(),
            "--record",
            records.to_str().unwrap(),
        ]),
    }
    let server = serve(&args);
    let addr = &server.addr;
    let called = call_2026(
        addr,
        &ann,
        "agent.seo.vlevel",
        json!({"urls": ["https://shop.example.com/a/b/c/d/e/f"]}),
    )
    .body;
    let job = called["result"]["_meta"]["dev.skill-runtime/manifest"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{called}"))
        .to_owned();
    let uri = format!("skill://runs/{job}");
    let read = |token: &str, uri: &str| {
        request_2026(addr, token, "resources/read", uri, json!({"uri": uri}))
    };
    let own = read(&ann, &uri);
    let text = own["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{own}"));
    let run: Value = serde_json::from_str(text).unwrap();
    assert_eq!(run["agent"], "agent.seo.vlevel@1.0.0", "{run}");
    assert_eq!(run["status"], "succeeded", "{run}");
    let artifacts = run["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 3, "{run}");
    assert!(
        !text.contains(files.to_str().unwrap()) && !text.contains(":artifact:"),
        "no server path or store key: {text}"
    );
    let audit = artifacts
        .iter()
        .find(|a| a["name"].as_str().unwrap().ends_with(".audit.md"))
        .unwrap();
    // Named by its run: another run of the agent, even started in the same
    // millisecond, writes files of its own.
    assert!(audit["name"].as_str().unwrap().contains(&job), "{audit}");
    let audit_uri = audit["uri"].as_str().unwrap();
    assert!(
        audit_uri.starts_with(&format!("{uri}/artifacts/")),
        "{audit_uri}"
    );
    let got = read(&ann, audit_uri);
    let content = &got["result"]["contents"][0];
    assert_eq!(content["mimeType"], "text/markdown", "{got}");
    let audit_text = content["text"].as_str().unwrap_or_default();
    assert!(audit_text.starts_with("# Audit: agent.seo.vlevel"), "{got}");
    if store.is_none() {
        let on_disk = std::fs::read_to_string(files.join(audit["name"].as_str().unwrap())).unwrap();
        assert_eq!(audit_text, on_disk, "as written");
    }
    let graph = artifacts
        .iter()
        .find(|a| a["name"].as_str().unwrap().ends_with(".graph.json"))
        .unwrap();
    let got = read(&ann, graph["uri"].as_str().unwrap());
    let graph: Value =
        serde_json::from_str(got["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert!(graph.is_object(), "{graph}");
    // Listed for her, each file after its run.
    let listed = |token: &str| listed_runs(addr, token);
    // The hand-over it ran (to agent.seo.architect) is hers too, with its
    // own files.
    let handed = run["escalated_job"]
        .as_str()
        .expect("handed over in process");
    let target = read(&ann, &format!("skill://runs/{handed}"));
    let target: Value =
        serde_json::from_str(target["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(target["agent"], "agent.seo.architect@1.0.0", "{target}");
    assert_eq!(target["artifacts"].as_array().unwrap().len(), 3, "{target}");
    let hers = listed(&ann);
    assert_eq!(hers.len(), 8, "two runs, three files each: {hers:?}");
    assert!(
        hers.contains(&uri) && hers.contains(&audit_uri.to_owned()),
        "{hers:?}"
    );
    // Not bob's: the run and its files read as unknown, nothing listed.
    let unknown_code = read(&bob, "skill://runs/none/artifacts/x.md")["error"]["code"].clone();
    assert!(unknown_code.is_i64(), "{unknown_code}");
    for stolen in [read(&bob, &uri), read(&bob, audit_uri)] {
        assert_eq!(stolen["error"]["code"], unknown_code, "{stolen}");
    }
    assert!(listed(&bob).is_empty());
    // A file the run did not write is unknown to her too.
    let other = read(&ann, &format!("{uri}/artifacts/keys.json"));
    assert_eq!(other["error"]["code"], unknown_code, "{other}");
}

/// A run's updates reach its own caller only: bob, holding ann's run's URI,
/// follows it on a 2025-11-25 session and on a 2026-07-28
/// `subscriptions/listen` stream and hears nothing, while ann hears her run
/// progress (the real Python client, `tests/mcp/run_listeners.py`).
#[test]
fn a_runs_updates_reach_its_caller_only() {
    let dir = temp_dir("run-listeners");
    let file = dir.join("keys.json");
    let key = |name: &str| api_key(&file, name, &[]);
    let (ann, bob) = (key("ann"), key("bob"));
    let server = serve(&["--auth", "api-keys", file.to_str().unwrap()]);
    python_client(
        "run_listeners.py",
        &server.addr,
        &[&ann, &bob],
        "run listener checks passed",
    );
}
