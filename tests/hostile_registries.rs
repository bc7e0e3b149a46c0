//! `skill-registry` on registries written to hurt it: schemas that refer to
//! themselves through `allOf`/`anyOf`/`items`, and definitions that double at
//! every level. Each command ends, with an answer, in bounded memory: before
//! the walks were bounded, `validate` and `diff` overflowed the stack and
//! `convert` ran out of memory.

use serde_json::{Map, Value, json};
use skill_tests::{exported_registry as exported, registry_cli, temp_dir};
// Linked, so that their skills and pipelines are in the registry.
use seed_skills as _;
use team_skills as _;

/// Every skill's input (and output) schema replaced by `schema`.
fn with_schemas(schema: &Value) -> Value {
    let mut doc = exported();
    for skill in doc["skills"].as_array_mut().unwrap() {
        skill["inputs_schema"] = schema.clone();
        skill["outputs_schema"] = schema.clone();
    }
    doc
}

fn doubling_defs(levels: usize) -> Value {
    let mut defs = Map::new();
    for i in 0..levels {
        let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"a": next.clone(), "b": next},
                   "allOf": [{"$ref": format!("#/$defs/D{}", i + 1)}]}),
        );
    }
    defs.insert(format!("D{levels}"), json!({"type": "object"}));
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs})
}

#[test]
fn validate_diff_and_convert_end_on_self_referring_and_doubling_schemas() {
    let dir = temp_dir("hostile-registries");
    let plain = dir.join("plain.json");
    std::fs::write(&plain, serde_json::to_string_pretty(&exported()).unwrap()).unwrap();
    let hostile = [
        ("all-of-self", json!({"allOf": [{"$ref": "#"}]})),
        (
            "any-of-self",
            json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}),
        ),
        (
            "items-self",
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"$ref": "#"}}}, "allOf": [{"$ref": "#"}]}),
        ),
        ("doubling", doubling_defs(24)),
    ];
    for (name, schema) in hostile {
        let file = dir.join(format!("{name}.json"));
        std::fs::write(
            &file,
            serde_json::to_string(&with_schemas(&schema)).unwrap(),
        )
        .unwrap();
        let file = file.to_str().unwrap();

        // An answer, not a crash: findings are allowed (exit 1), usage errors not.
        let (code, _, err) = registry_cli(&["validate", file]);
        assert!(
            code == 0 || code == 1,
            "{name}: validate exited {code}: {err}"
        );
        for (old, new) in [
            (plain.to_str().unwrap(), file),
            (file, plain.to_str().unwrap()),
            (file, file),
        ] {
            let (code, _, err) = registry_cli(&["diff", old, new]);
            assert!(code == 0 || code == 1, "{name}: diff exited {code}: {err}");
        }
        for to in ["mcp", "openai", "unified"] {
            let (code, out, err) = registry_cli(&["convert", "--to", to, file]);
            assert!(
                code == 0 || code == 1,
                "{name}: convert {to} exited {code}: {err}"
            );
            assert!(
                out.len() < 64 * 1024 * 1024,
                "{name}: convert {to} wrote {} bytes",
                out.len()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validate_refuses_values_the_format_does_not_allow_and_repeated_keys() {
    let dir = temp_dir("invalid-registries");
    let base = exported();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut doc = base.clone();
        edit(&mut doc);
        doc
    };
    let skill_with_mcp = base["skills"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| !s["mcp"]["permissions"].as_array().unwrap().is_empty())
        .expect("a skill with MCP permissions");
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "a registry_version of another major",
            with(&|d| d["registry_version"] = json!("9.9.9")).to_string(),
            "/registry_version",
        ),
        (
            "retries past u32",
            with(&|d| d["skills"][0]["execution"]["retries"] = json!(18446744073709551616.0_f64))
                .to_string(),
            "/skills/0/execution/retries",
        ),
        (
            "a permission with a newline",
            with(&|d| {
                d["skills"][skill_with_mcp]["mcp"]["permissions"][0] = json!("seo:read\nadmin")
            })
            .to_string(),
            "/mcp/permissions/0",
        ),
        (
            "a permission twice",
            with(&|d| {
                let p = d["skills"][skill_with_mcp]["mcp"]["permissions"][0].clone();
                d["skills"][skill_with_mcp]["mcp"]["permissions"] = json!([p.clone(), p]);
            })
            .to_string(),
            "/mcp/permissions",
        ),
        (
            "a key twice",
            base.to_string().replacen(
                "\"registry_version\":",
                "\"registry_version\": \"2.2.0\", \"registry_version\":",
                1,
            ),
            "`/registry_version` appears twice",
        ),
    ];
    for (what, text, expected) in cases {
        let file = dir.join("case.json");
        std::fs::write(&file, text).unwrap();
        let (code, out, err) = registry_cli(&["validate", file.to_str().unwrap()]);
        assert_ne!(code, 0, "{what}: validate accepted it");
        assert!(
            out.contains(expected) || err.contains(expected),
            "{what}: no mention of {expected}:\n{out}{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A folder for a diff test, the export, the export written as `old.json`
/// in it, and the index of skill `name` in the export.
fn diff_setup(tag: &str, name: &str) -> (std::path::PathBuf, Value, std::path::PathBuf, usize) {
    let dir = temp_dir(tag);
    let base = exported();
    let old = dir.join("old.json");
    std::fs::write(&old, base.to_string()).unwrap();
    let index = base["skills"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["name"] == name)
        .unwrap();
    (dir, base, old, index)
}

#[test]
fn diff_reports_a_version_that_is_not_semver_and_a_dangling_reference() {
    let (dir, base, old, index) = diff_setup("diff-unreadable", "vlevel_calculator");
    type Edit<'a> = &'a dyn Fn(&mut Value);
    let cases: [(&str, Edit, &str); 2] = [
        (
            "version 1.0",
            &|d| d["skills"][index]["version"] = json!("1.0"),
            "the new version `1.0` is not semver",
        ),
        (
            "a dangling $ref",
            &|d| {
                d["skills"][index]["inputs_schema"]["properties"]["page_data"] =
                    json!({"$ref": "#/$defs/Missing"})
            },
            "input field `page_data` now refers to `#/$defs/Missing`, which the schema does not define",
        ),
    ];
    for (what, edit, expected) in cases {
        let mut doc = base.clone();
        edit(&mut doc);
        let new = dir.join("new.json");
        std::fs::write(&new, doc.to_string()).unwrap();
        let (code, out, err) =
            registry_cli(&["diff", old.to_str().unwrap(), new.to_str().unwrap()]);
        assert_eq!(code, 1, "{what}: diff must fail:\n{out}{err}");
        assert!(out.contains(expected), "{what}:\n{out}{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A change made through a keyword the diff cannot compare one by one
/// (composition, conditionals, a remote reference, ...) is reported as a
/// breaking change, never as no change: `echo`'s `message` from a string to
/// `allOf: [integer]` among them.
#[test]
fn diff_sees_through_composition() {
    let (dir, base, old, index) = diff_setup("diff-composition", "echo");
    let message = |v: Value| {
        move |d: &mut Value| {
            d["skills"][index]["inputs_schema"]["properties"]["message"] = v.clone()
        }
    };
    let root = |k: &'static str, v: Value| {
        move |d: &mut Value| d["skills"][index]["inputs_schema"][k] = v.clone()
    };
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "allOf",
            Box::new(message(json!({"allOf": [{"type": "integer"}]}))),
        ),
        (
            "anyOf",
            Box::new(message(
                json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}),
            )),
        ),
        (
            "oneOf",
            Box::new(message(
                json!({"type": "string", "oneOf": [{"maxLength": 3}, {"minLength": 10}]}),
            )),
        ),
        (
            "not",
            Box::new(message(json!({"type": "string", "not": {"const": ""}}))),
        ),
        (
            "if",
            Box::new(message(
                json!({"type": "string", "if": {"minLength": 5}, "then": {"pattern": "^a"}}),
            )),
        ),
        (
            "$ref",
            Box::new(message(
                json!({"$ref": "https://example.com/schemas/message.json"}),
            )),
        ),
        (
            "multipleOf",
            Box::new(message(json!({"type": "string", "multipleOf": 2}))),
        ),
        (
            "dependentSchemas",
            Box::new(root(
                "dependentSchemas",
                json!({"message": {"required": ["to"]}}),
            )),
        ),
        (
            "patternProperties",
            Box::new(root(
                "patternProperties",
                json!({"^x-": {"type": "integer"}}),
            )),
        ),
    ];
    for (keyword, edit) in cases {
        let mut doc = base.clone();
        edit(&mut doc);
        let new = dir.join("new.json");
        std::fs::write(&new, doc.to_string()).unwrap();
        let (code, out, err) =
            registry_cli(&["diff", old.to_str().unwrap(), new.to_str().unwrap()]);
        assert_eq!(
            code, 1,
            "{keyword}: a breaking change without a major version:\n{out}{err}"
        );
        assert!(
            out.contains(&format!(
                "`{keyword}` added, which the diff cannot prove compatible"
            )),
            "{keyword}:\n{out}{err}"
        );
    }
    // The same schema with its field moved into a definition: no change.
    let mut doc = base.clone();
    let schema = &mut doc["skills"][index]["inputs_schema"];
    schema["$defs"] = json!({"Message": {"type": "string", "allOf": [{"minLength": 1}]}});
    schema["properties"]["message"] = json!({"$ref": "#/$defs/Message"});
    let mut was = base.clone();
    was["skills"][index]["inputs_schema"]["properties"]["message"] =
        json!({"type": "string", "allOf": [{"minLength": 1}]});
    std::fs::write(&old, was.to_string()).unwrap();
    let new = dir.join("new.json");
    std::fs::write(&new, doc.to_string()).unwrap();
    let (code, out, err) = registry_cli(&["diff", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert_eq!(code, 0, "a definition moved is no change:\n{out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
