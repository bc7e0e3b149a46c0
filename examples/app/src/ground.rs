//! `ground`: tool calls checked against the registry the way a job's input
//! stage checks them, one answer per call, for a grounder in front of a
//! model (and for the tests that hold the TypeScript and Python grounders of
//! `clients/` to the runtime's answers).

use std::io::BufRead;
use std::process::ExitCode;

use serde_json::{Value, json};
use skill_runtime::{InvokeError, Registry};

use crate::run::{RuntimeArgs, build_runtime};

/// Read calls as JSON lines from standard input (`{"name": ..., "arguments":
/// ...}`, the arguments as JSON text, as a model's tool call carries them,
/// or as a value) and print one answer per line: `{"ok": true, "skill",
/// "version", "isDestructive", "requiresHitl"}`, or `{"ok": false, "code",
/// "errors": [{"path", "message"}]}` with each error's JSON pointer into the
/// arguments.
pub fn ground(registry: Registry, args: &RuntimeArgs) -> ExitCode {
    let runtime = match build_runtime(registry, args, None, None) {
        Ok(r) => r,
        Err(code) => return code,
    };
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("error: cannot read standard input: {e}");
                return ExitCode::FAILURE;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let call: Value = match serde_json::from_str(&line) {
            Ok(call) => call,
            Err(e) => {
                eprintln!("error: line {}: not a JSON call: {e}", n + 1);
                return ExitCode::from(2);
            }
        };
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = match call.get("arguments") {
            Some(Value::String(text)) => text.clone(),
            Some(value) => value.to_string(),
            None => "{}".to_owned(),
        };
        let answer = match runtime.ground(name, &arguments) {
            Ok(g) => json!({
                "ok": true,
                "skill": g.skill.name(),
                "version": g.skill.version().to_string(),
                "isDestructive": g.is_destructive,
                "requiresHitl": g.requires_hitl,
            }),
            Err(e) => json!({"ok": false, "code": e.code(), "errors": errors(&e)}),
        };
        outln!("{answer}");
    }
    ExitCode::SUCCESS
}

/// Each place that breaks the schema, or the one error, at the root.
fn errors(e: &InvokeError) -> Vec<Value> {
    match e {
        InvokeError::InvalidInput { violations, .. } => violations
            .iter()
            .map(|v| json!({"path": v.instance_path, "message": v.message}))
            .collect(),
        other => vec![json!({"path": "", "message": other.to_string()})],
    }
}
