//! Skills written against the runtime under another dependency name.

use renamed as _;

use skill_runtime::Registry;

#[test]
fn renamed_runtime_dependency_works_with_crate_override() {
    let r = Registry::from_inventory().unwrap();
    let s = r
        .get("shout")
        .expect("the renamed crate's skill is registered");
    assert_eq!(s.entry.manifest.version, "0.3.0");
    assert_eq!(s.entry.manifest.capabilities[0].id, "renamed.read");
}
