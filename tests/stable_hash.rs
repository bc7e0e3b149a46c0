//! The stable key (the seed's `stableHash`) is SHA-256 of RFC 8785 canonical
//! JSON, so another implementation computes the same key: here Node, whose
//! `JSON.stringify` writes numbers and strings as RFC 8785 does and whose
//! default sort orders keys by UTF-16 code units, as the RFC asks.

use std::process::Command;

use serde_json::{Value, json};
use skill_runtime::envelope::stable_hash;

/// RFC 8785 in a dozen lines of JavaScript, then SHA-256.
const NODE_JCS: &str = r#"
const crypto = require("crypto");
const jcs = v => Array.isArray(v) ? "[" + v.map(jcs).join(",") + "]"
  : v !== null && typeof v === "object"
    ? "{" + Object.keys(v).sort().map(k => JSON.stringify(k) + ":" + jcs(v[k])).join(",") + "}"
    : JSON.stringify(v);
const values = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(values.map(v =>
  "idem_" + crypto.createHash("sha256").update(jcs(v), "utf8").digest("hex"))));
"#;

fn node_keys(values: &[Value]) -> Vec<String> {
    let mut child = Command::new("node")
        .args(["-e", NODE_JCS])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(values).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn keys_match_an_independent_rfc_8785_implementation() {
    // Numbers whose canonical text differs from serde_json's (`1.0`, `1e21`,
    // `1e-6`, and 1424953923781206.25, whose shortest digits tie and break to
    // even), keys whose UTF-16 order differs from their byte order, escapes,
    // nesting.
    let values = vec![
        json!({}),
        json!({"n": [1.0, 1e21, 1e-6, 1e-7, 0.1, -0.0, f64::from_bits(0x4314_3ff3_c1cb_0959), 123_456_789_012_345_680_000.0]}),
        json!({"\u{e000}": 1, "\u{1f600}": 2, "a": 3, "A": 4, "é": 5}),
        json!({"s": "tab\there \"quoted\" \u{1} / \u{2028} \u{7f}", "nested": {"z": [true, null], "y": {}}}),
        json!({"int": 9007199254740992_u64, "neg": -17, "big": 1e300}),
    ];
    let ours: Vec<String> = values.iter().map(stable_hash).collect();
    assert_eq!(ours, node_keys(&values));
}
