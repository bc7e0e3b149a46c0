//! `skill-registry audit` on real builds: the fixture crate whose skills
//! hide effects where `#[skill]`'s scan cannot see them (each reported, with
//! its path), its clean skills (none reported), and the example app (clean).
//! One audit builds both packages, so the test costs one nested build.

use std::collections::BTreeMap;

use serde_json::Value;
use skill_tests::{exported_registry, format_violations, registry_cli, root, temp_dir};

use seed_skills as _;
use team_skills as _;

/// What the fixture's handlers must be reported for: kind, path, possible.
fn expected() -> BTreeMap<&'static str, (&'static str, Vec<&'static str>, bool)> {
    let fs_write = "std::fs::write";
    BTreeMap::from([
        (
            "hidden_helper",
            (
                "file_write",
                vec!["hidden_helper", "audit_fixture::save_report", fs_write],
                false,
            ),
        ),
        (
            "hidden_module",
            (
                "file_write",
                vec!["hidden_module", "audit_fixture::store::keep", fs_write],
                false,
            ),
        ),
        (
            "hidden_macro",
            ("file_write", vec!["hidden_macro", fs_write], false),
        ),
        (
            "hidden_glob",
            (
                "process",
                vec!["hidden_glob", "std::process::Command::new"],
                false,
            ),
        ),
        (
            "hidden_generic",
            (
                "file_write",
                vec!["hidden_generic", "audit_fixture::store::put", fs_write],
                false,
            ),
        ),
        (
            "hidden_dependency",
            (
                "network",
                vec![
                    "hidden_dependency",
                    "audit_dep::ping",
                    "std::net::tcp::TcpStream::connect",
                ],
                false,
            ),
        ),
        (
            "hidden_dyn",
            (
                "file_write",
                vec![
                    "hidden_dyn",
                    "<vtable or function table>",
                    "<audit_fixture::store::FileSink as audit_fixture::store::Sink>::put",
                    fs_write,
                ],
                true,
            ),
        ),
        (
            "hidden_pointer",
            (
                "file_write",
                vec![
                    "hidden_pointer",
                    "audit_fixture::store::forget",
                    "std::fs::remove_file",
                ],
                false,
            ),
        ),
        (
            "agent.audit.hidden",
            (
                "file_write",
                vec!["hidden_agent", "audit_fixture::store::keep", fs_write],
                false,
            ),
        ),
        (
            "hidden_condition",
            (
                "file_write",
                vec!["hidden_condition", "audit_fixture::store::keep", fs_write],
                false,
            ),
        ),
        (
            "hidden_op",
            (
                "process",
                vec![
                    "hidden_op",
                    "audit_fixture::store::run",
                    "std::process::Command::new",
                ],
                false,
            ),
        ),
        (
            "hidden_lookup",
            (
                "network",
                vec![
                    "hidden_lookup",
                    "audit_fixture::store::resolves",
                    "<(&str, u16) as std::net::socket_addr::ToSocketAddrs>::to_socket_addrs",
                ],
                false,
            ),
        ),
        // A field's `deserialize_with`, run by the runtime's decoding of the
        // input: the runtime's generic code made for the skill's type is read
        // as the skill's.
        (
            "hidden_decode",
            (
                "file_read",
                vec![
                    "hidden_decode",
                    "skill_runtime::contract::de::<impl serde_core::de::Deserializer for skill_runtime::contract::ordered::Params>::deserialize_struct",
                    "<audit_fixture::_::<impl serde_core::de::Deserialize for audit_fixture::LoadedIn>::deserialize::__Visitor as serde_core::de::Visitor>::visit_seq",
                    "serde_core::de::SeqAccess::next_element",
                    "<skill_runtime::contract::ordered::Ordered as serde_core::de::SeqAccess>::next_element_seed",
                    "<core::marker::PhantomData<T> as serde_core::de::DeserializeSeed>::deserialize",
                    "<<audit_fixture::_::<impl serde_core::de::Deserialize for audit_fixture::LoadedIn>::deserialize::__Visitor as serde_core::de::Visitor>::visit_seq::__DeserializeWith as serde_core::de::Deserialize>::deserialize",
                    "audit_fixture::load",
                    "std::fs::read_to_string",
                ],
                false,
            ),
        ),
        // The runtime's own I/O, called with no context: its effect is named.
        (
            "hidden_runtime_io",
            (
                "file_write",
                vec![
                    "hidden_runtime_io",
                    "audit_fixture::append_log",
                    "skill_runtime::exec::sink::JsonLinesSink::append",
                ],
                false,
            ),
        ),
        // A runtime kept in a static, running skills the manifest does not
        // list: no manifest can declare that.
        (
            "hidden_runner",
            (
                "runner",
                vec![
                    "hidden_runner",
                    "audit_fixture::run_elsewhere",
                    "skill_runtime::exec::job::<impl skill_runtime::exec::runtime::Runtime>::invoke_json",
                ],
                false,
            ),
        ),
        // A skill implemented by hand (`unsafe impl Skill`) is audited too.
        (
            "hand_made",
            (
                "file_write",
                vec![
                    "<audit_fixture::HandMade as skill_runtime::contract::skill::Skill>::run",
                    fs_write,
                ],
                false,
            ),
        ),
        // A capability whose resource's code does what its effect does not say.
        (
            "notes.read",
            (
                "file_write",
                vec!["audit_fixture::Notes::get", fs_write],
                false,
            ),
        ),
    ])
}

#[test]
fn hidden_effects_are_found_with_their_path_and_nothing_else_is() {
    let dir = temp_dir("audit");
    let stamped = dir.join("skill-registry.json");
    let original = dir.join("original.json");
    std::fs::write(&stamped, exported_registry().to_string()).unwrap();
    std::fs::write(&original, exported_registry().to_string()).unwrap();
    let manifest = root().join("Cargo.toml");
    let args = [
        "audit",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "-p",
        "skill-examples",
        "-p",
        "audit-fixture",
        "--quiet",
        "--json",
        "--stamp",
        stamped.to_str().unwrap(),
    ];
    let (code, out, err) = registry_cli(&args);
    assert_eq!(
        code, 1,
        "the fixture's hidden effects fail the audit\n{out}\n{err}"
    );
    let report: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(report["passed"], false);
    // A skill defined in a binary's own crate cannot be linked by the probe:
    // said, never passed over.
    assert_eq!(
        report["unaudited"],
        serde_json::json!([{"binary": "skills_in_main", "handlers": ["in_main"]}])
    );
    let targets = report["targets"].as_array().unwrap();
    let expected = expected();
    let mut seen = 0;
    for t in targets {
        let name = t["name"].as_str().unwrap();
        let undeclared = t["undeclared"].as_array().unwrap();
        assert_eq!(t["missing"], false, "{name}'s code is found");
        match expected.get(name) {
            Some((kind, path, possible)) => {
                seen += 1;
                assert_eq!(undeclared.len(), 1, "{name}: {undeclared:?}");
                assert_eq!(undeclared[0]["kind"], *kind, "{name}");
                assert_eq!(undeclared[0]["path"], serde_json::json!(path), "{name}");
                assert_eq!(undeclared[0]["possible"], *possible, "{name}");
            }
            // The fixture's clean skills and every example.
            None => assert!(undeclared.is_empty(), "{name} is reported: {undeclared:?}"),
        }
    }
    assert_eq!(
        seen,
        expected.len(),
        "every hidden effect's handler was audited"
    );
    let observed =
        |name: &str| targets.iter().find(|t| t["name"] == name).unwrap()["observed"].clone();
    // Declared or allowed effects are seen, and covered.
    assert_eq!(
        observed("clean_declared"),
        serde_json::json!(["file_write"])
    );
    assert_eq!(observed("clean_allowed"), serde_json::json!(["network"]));
    // An effect compiled only for tests, and types of effectful modules: none.
    assert_eq!(observed("clean_test_only"), serde_json::json!([]));
    assert_eq!(observed("clean_types"), serde_json::json!([]));
    // The examples reach files only where they declare it, and their
    // resources only what their capabilities cover or allow.
    assert_eq!(observed("read_note"), serde_json::json!(["file_read"]));
    assert_eq!(
        observed("outbox.write"),
        serde_json::json!(["file_read", "file_write"])
    );
    // Through a declared capability's resource, the skill reaches nothing
    // of its own: the resource's code is the capability's.
    assert_eq!(observed("clean_through_resource"), serde_json::json!([]));

    // The stamped registry: each example skill with a body carries its
    // verdict, stays in the published format, and stamping is deterministic.
    let text = std::fs::read_to_string(&stamped).unwrap();
    let registry: Value = serde_json::from_str(&text).unwrap();
    assert!(
        format_violations(&registry).is_empty(),
        "{:?}",
        format_violations(&registry)
    );
    let read_note = registry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "read_note")
        .unwrap();
    assert_eq!(
        read_note["audit"]["observed"],
        serde_json::json!(["file_read"])
    );
    assert_eq!(read_note["audit"]["verdict"], "consistent");
    assert!(
        read_note["audit"]["analyser"]
            .as_str()
            .unwrap()
            .starts_with("skill-audit/")
    );
    // A verdict describes a build, not the contract: no version bump.
    let (code, diff, _) = registry_cli(&[
        "diff",
        original.to_str().unwrap(),
        stamped.to_str().unwrap(),
    ]);
    assert_eq!((code, diff.trim()), (0, "no changes"));
    let (_, again, _) = registry_cli(&args);
    let again: Value = serde_json::from_str(&again).expect("--json prints JSON");
    // (How much was read is a diagnostic: it follows the build's files.)
    assert!(
        again["targets"] == report["targets"] && again["unaudited"] == report["unaudited"],
        "a second audit says the same"
    );
    assert_eq!(
        std::fs::read_to_string(&stamped).unwrap(),
        text,
        "and stamps the same bytes"
    );
}

#[test]
fn a_person_reads_the_skill_the_kind_and_the_path() {
    let manifest = root().join("Cargo.toml");
    let (code, out, _) = registry_cli(&[
        "audit",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "-p",
        "skill-examples",
        "-p",
        "audit-fixture",
        "-q",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "skill hidden_helper 1.0.0: reaches file_write and declares nothing covering it\n    hidden_helper -> audit_fixture::save_report -> std::fs::write\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("reaches file_write (possibly, through a vtable or function table)"),
        "{out}"
    );
    assert!(out.contains("binary `skills_in_main` defines a handler in its own crate (in_main), which the audit cannot read"), "{out}");
    assert!(out.ends_with("17 reach beyond their manifest; declare the capability (or an `ambient(...)` allowance with its reason); 1 binary holds handlers the audit cannot read\n"), "{out}");
    assert!(!out.contains("clean_"), "{out}");
}
