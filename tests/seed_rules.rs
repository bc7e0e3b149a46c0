//! The seed skills' rules as the AI-COS skill model writes them, run on the
//! example data.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skill_runtime::{InvokeError, JobEnvelope, Registry, Runtime};

fn runtime() -> Runtime {
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    seed_skills::runtime_builder(registry, Path::new(seed_skills::DATA_DIR))
        .expect("example data")
        .build()
        .expect("runtime starts")
}

/// `no_r1_expert_content`: `!violations.some(v => v.current_role === 'R1' &&
/// v.has_expert_content)`, severity error: a router page (R1 now) with expert
/// content fails the audit; one without passes.
#[tokio::test]
async fn a_router_page_with_expert_content_fails_the_audit() {
    let rt = runtime();
    let audit = |url: &str| {
        JobEnvelope::new(
            "seo_role_audit",
            json!({"urls": [url], "check_content": true}),
        )
    };
    let e = rt
        .invoke(audit("https://shop.example.com/freinage/plaquettes"))
        .await
        .expect_err("an R1 page with expert content breaks the rule");
    let InvokeError::ValidationRule { rule_id, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(rule_id, "no_r1_expert_content");
    // What the audit found is not lost with the failure: in the error, and
    // in the run record.
    let found = e.rejected_output().expect("the rejected output is kept");
    assert_eq!(found["violations"][0]["current_role"], "R1");
    assert_eq!(found["violations"][0]["has_expert_content"], true);
    let records = rt.memory_records().unwrap().records();
    let record = records.last().unwrap();
    assert_eq!(
        record.error.as_ref().unwrap().code,
        "validation_rule_failed"
    );
    assert_eq!(record.output.as_deref(), Some(found));
    let ok = rt
        .invoke(audit("https://shop.example.com/filtration"))
        .await
        .expect("an R4 page with products is a violation, not a rule failure");
    assert_eq!(ok.data["violations"][0]["current_role"], "R4");
}

/// `vlevel_calculator`'s postcondition is the seed's assertion,
/// `output.vlevel in ['V1', 'V2', 'V3', 'V4', 'V5']`.
#[test]
fn the_vlevel_postcondition_is_the_seeds() {
    let doc = skill_tests::exported_registry();
    let skill = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "vlevel_calculator")
        .unwrap();
    let assertion = skill["postconditions"][0]["assertion"].as_str().unwrap();
    for level in ["V1", "V2", "V3", "V4", "V5"] {
        assert!(assertion.contains(level), "{assertion}");
    }
    assert!(!assertion.contains("score"), "{assertion}");
}

/// A dry run changes nothing and says what would change: `rag_reindex`
/// reports the documents it would index and the version it would publish,
/// and leaves the index and the version cache as they were.
#[tokio::test]
async fn a_dry_run_reindex_changes_nothing_and_says_what_it_would_do() {
    let rt = runtime();
    let reindex = |dry_run| {
        let mut job = JobEnvelope::new("rag_reindex", json!({"namespace": "knowledge:faq"}));
        job.constraints.dry_run = dry_run;
        job
    };
    let store = rt
        .resources()
        .get::<seed_skills::stores::VectorStore>()
        .unwrap();
    let cache = rt
        .resources()
        .get::<seed_skills::stores::VersionCache>()
        .unwrap();

    let dry = rt.invoke(reindex(true)).await.expect("dry run succeeds");
    assert_eq!(dry.data["published"], false);
    assert_eq!(dry.data["version"], "knowledge:faq@1");
    assert!(dry.data["indexed"].as_u64().unwrap() > 0, "{}", dry.data);
    assert!(dry.notes.is_empty(), "the skill asked: {:?}", dry.notes);
    assert!(
        store.namespaces.lock().unwrap().is_empty(),
        "nothing indexed"
    );
    assert!(cache.entries.lock().unwrap().is_empty(), "nothing cached");

    let real = rt.invoke(reindex(false)).await.expect("reindex succeeds");
    assert_eq!(real.data["published"], true);
    assert_eq!(
        real.data["indexed"], dry.data["indexed"],
        "the dry run said what would change"
    );
    assert_eq!(store.namespaces.lock().unwrap().len(), 1);
}
