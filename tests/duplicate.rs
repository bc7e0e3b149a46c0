//! Two crates defining the same name@version (and the same agent id): the
//! registry names both places.

use dup_a as _;
use dup_b as _;

use skill_runtime::Registry;

#[test]
fn duplicate_name_across_crates_names_both_locations() {
    let err = Registry::from_inventory().expect_err("a duplicate must fail the registry");
    let text = err.to_string();
    assert_eq!(err.problems.len(), 1, "{text}");
    assert!(text.contains("skill `lookup@1.0.0`"), "{text}");
    assert!(text.contains("defined twice"), "{text}");
    assert!(
        text.contains("crate `dup_a` at tests/fixtures/dup-a/src/lib.rs:"),
        "{text}"
    );
    assert!(
        text.contains("crate `dup_b` at tests/fixtures/dup-b/src/lib.rs:"),
        "{text}"
    );
}

#[test]
fn duplicate_agent_id_across_crates_names_both_locations_and_a_missing_target_fails() {
    let err = skill_runtime::agents::AgentRegistry::from_inventory()
        .err()
        .expect("a duplicate agent id must fail");
    let text = err.to_string();
    assert_eq!(err.problems.len(), 2, "{text}");
    assert!(
        text.contains("agent id `agent.dup.same` is declared twice"),
        "{text}"
    );
    assert!(
        text.contains("tests/fixtures/dup-a/src/lib.rs:")
            && text.contains("tests/fixtures/dup-b/src/lib.rs:"),
        "{text}"
    );
    assert!(
        text.contains("escalates to `agent.dup.nowhere`, which is not an agent"),
        "{text}"
    );
}
