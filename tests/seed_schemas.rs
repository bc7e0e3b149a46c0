//! For each seed skill, the exported input schema accepts and rejects the same
//! example inputs as the seed's own schema (tests/seeds/input-schemas.json).

use seed_skills as _;

use serde_json::{Value, json};
use skill_runtime::Registry;
use skill_tests::root;

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("schema compiles")
}

fn expand(sample: &Value) -> Value {
    match sample.as_str() {
        Some("__URLS_1001__") => json!({"urls": vec!["https://a.example/x"; 1001]}),
        _ => sample.clone(),
    }
}

#[test]
fn exported_input_schemas_agree_with_the_seeds() {
    let text = std::fs::read_to_string(root().join("tests/seeds/input-schemas.json")).unwrap();
    let seeds: Value = serde_json::from_str(&text).unwrap();
    let registry = Registry::from_inventory().unwrap();
    let mut checked = 0;
    for (name, seed) in seeds["skills"].as_object().unwrap() {
        let ours = validator(
            &registry
                .get(name)
                .unwrap_or_else(|| panic!("no skill {name}"))
                .input_schema,
        );
        let theirs = validator(&seed["schema"]);
        for (verdict, key) in [(true, "accept"), (false, "reject")] {
            for sample in seed[key].as_array().unwrap() {
                let sample = expand(sample);
                assert_eq!(
                    theirs.is_valid(&sample),
                    verdict,
                    "{name}: the seed schema's verdict on {sample} is not {key}"
                );
                assert_eq!(
                    ours.is_valid(&sample),
                    verdict,
                    "{name}: exported schema disagrees with the seed on {sample}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 45, "only {checked} samples");
}
