//! Property tests of `skill-registry` on mutated registries: the real export,
//! with values replaced by hostile ones (self-referring schemas, huge and
//! negative numbers, control characters, deep nesting, wrong types) and keys
//! removed. `validate`, `diff` both ways and `convert` to every view must
//! answer (exit 0, 1 or 2), never panic, overflow or hang. A short pass runs
//! with the tests; `bench/fuzz.sh` runs a long one (`PROPTEST_CASES`).

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use skill_tests::{exported_registry, registry_cli, temp_dir};
// Linked, so that their skills and pipelines are in the registry.
use seed_skills as _;
use team_skills as _;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

fn exported() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(exported_registry)
}

fn hostile(i: usize) -> Value {
    let deep = (0..200).fold(json!(1), |v, _| json!([v]));
    let values = [
        json!({"$ref": "#"}),
        json!({"allOf": [{"$ref": "#"}, {"$ref": "#"}]}),
        json!({"anyOf": [{"$ref": "#/$defs/X"}], "$defs": {"X": {"$ref": "#/$defs/X"}}}),
        json!({"type": "array", "items": {"$ref": "#"}}),
        json!(18446744073709551615u64),
        json!(-1),
        json!(1e300),
        json!("a\nb\u{0}c"),
        json!(""),
        json!(null),
        json!([]),
        json!({}),
        json!("1.0"),
        deep,
    ];
    values[i % values.len()].clone()
}

/// Apply `edit` at the node reached by following `path` (indices modulo each
/// container's size) from the root.
fn mutate(doc: &mut Value, path: &[usize], edit: (u8, usize)) {
    // The pointer to edit, found by an immutable walk.
    let mut pointer = String::new();
    let mut node = &*doc;
    for &step in path {
        let (token, next) = match node {
            Value::Object(m) if !m.is_empty() && step % 7 != 0 => {
                let (k, v) = m.iter().nth(step % m.len()).unwrap();
                (k.replace('~', "~0").replace('/', "~1"), v)
            }
            Value::Array(a) if !a.is_empty() => {
                let i = step % a.len();
                (i.to_string(), &a[i])
            }
            // Stop here sometimes, to edit containers too.
            _ => break,
        };
        pointer.push('/');
        pointer.push_str(&token);
        node = next;
    }
    let node = doc
        .pointer_mut(&pointer)
        .expect("the pointer was just walked");
    match (edit.0 % 3, &mut *node) {
        (1, Value::Object(m)) if !m.is_empty() => {
            let key = m.keys().nth(edit.1 % m.len()).cloned().unwrap();
            m.remove(&key);
        }
        (2, Value::Object(m)) => {
            m.insert("$ref".to_owned(), hostile(edit.1));
        }
        _ => *node = hostile(edit.1),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn every_command_answers_on_a_mutated_registry(
        edits in proptest::collection::vec(
            (proptest::collection::vec(any::<usize>(), 0..8), any::<u8>(), any::<usize>()),
            1..6,
        )
    ) {
        let mut doc = exported().clone();
        for (path, op, value) in &edits {
            mutate(&mut doc, path, (*op, *value));
        }
        let dir = temp_dir("fuzz-registry");
        let (plain, mutated) = (dir.join("plain.json"), dir.join("mutated.json"));
        std::fs::write(&plain, exported().to_string()).unwrap();
        std::fs::write(&mutated, doc.to_string()).unwrap();
        let (plain, mutated) = (plain.to_str().unwrap(), mutated.to_str().unwrap());
        let mut runs = vec![
            vec!["validate", mutated],
            vec!["diff", plain, mutated],
            vec!["diff", mutated, plain],
        ];
        for to in ["mcp", "openai", "unified"] {
            runs.push(vec!["convert", "--to", to, mutated]);
        }
        for args in runs {
            let (code, _, _) = registry_cli(&args);
            prop_assert!((0..=2).contains(&code), "{args:?} exited {code}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
