//! A person's answer to an approval question, as clients send it: on
//! 2026-07-28 (an `input_required` round trip) an answer counts for the call
//! it was asked for, before its deadline, once; on 2025-11-25 (a request to
//! the client) a question nobody answers ends the call, denied, at its
//! deadline.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_tests::fleet::{app, data_copy};
use skill_tests::mcp_stdio::McpStdio;

/// The server as an orchestrator (the cache purge is reusable by that role
/// only), granted what the purge needs, on a copy of the example data.
fn server(extra: &[&str], data: &std::path::Path) -> McpStdio {
    let mut args = vec![
        "--role",
        "orchestrator",
        "--grant",
        "rag:admin",
        "--data",
        data.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    McpStdio::start(&args)
}

fn purge(mcp: &mut McpStdio, namespace: &str, answer: Option<(&str, Value)>) -> Value {
    let mut params = json!({
        "name": "ai_cos_rag_cache_purge",
        "arguments": {"namespace": namespace},
        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    });
    if let Some((state, answer)) = answer {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({ "approval": answer });
    }
    mcp.request("tools/call", params)
}

fn yes() -> Value {
    json!({"action": "accept", "content": {"approve": true}})
}

#[test]
fn an_answer_approves_one_call_once_before_its_deadline() {
    let data = data_copy("approvals-2026");
    let mut mcp = server(&["--approval-timeout", "3s"], &data);
    let asked = purge(&mut mcp, "knowledge:faq", None);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();

    // The state of one call approves no other: another namespace is asked
    // again, nothing runs.
    let other = purge(&mut mcp, "knowledge:reference", Some((&state, yes())));
    assert_eq!(other["result"]["resultType"], "input_required", "{other}");

    let ran = purge(&mut mcp, "knowledge:faq", Some((&state, yes())));
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert_eq!(ran["result"]["structuredContent"]["applied"], true, "{ran}");
    // The same answer sent again (three times): denied each time.
    for _ in 0..3 {
        let again = purge(&mut mcp, "knowledge:faq", Some((&state, yes())));
        assert_eq!(again["result"]["isError"], true, "{again}");
        let text = again["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("used already"), "{text}");
    }

    // Past its deadline, an answer is denied.
    let asked = purge(&mut mcp, "knowledge:faq", None);
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(3200));
    let late = purge(&mut mcp, "knowledge:faq", Some((&state, yes())));
    assert_eq!(late["result"]["isError"], true, "{late}");
    let text = late["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("after its deadline"), "{text}");
}

#[test]
fn a_question_nobody_answers_ends_the_call_at_its_deadline() {
    let data = data_copy("approvals-2025");
    let mut child = Command::new(app())
        .args(["mcp", "--role", "orchestrator", "--grant", "rag:admin"])
        .args(["--approval-timeout", "1s", "--data", data.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    for frame in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "silent", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ai_cos_rag_cache_purge", "arguments": {"namespace": "knowledge:faq"}}}),
    ] {
        writeln!(stdin, "{frame}").unwrap();
    }
    stdin.flush().unwrap();
    let started = Instant::now();
    let mut asked = false;
    let answer = loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the server closed");
        let v: Value = serde_json::from_str(&line).unwrap();
        asked |= v["method"] == "elicitation/create";
        if v["id"] == 2 {
            break v;
        }
    };
    assert!(asked, "the client was asked");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("no answer within 1 s"), "{text}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}
