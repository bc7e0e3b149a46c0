//! The published `job-envelope.schema.json` and the runtime's reader agree: the
//! seed's own envelopes (camelCase, as its `createJobEnvelope` writes them) are
//! valid and read as they are, what the runtime writes is valid and reads back
//! the same, and the two refuse the same bad envelopes.

use serde_json::{Value, json};
use skill_runtime::envelope::stable_hash;
use skill_runtime::{
    JobEnvelope, envelope::JobConstraints, envelope::Priority, envelope::Scope, envelope::Source,
    manifest::EntityType,
};
use skill_tests::root;

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("job-envelope.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("job-envelope.schema.json compiles")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// An envelope as the seed's `createJobEnvelope` returns it after zod has
/// filled in its defaults.
fn seed_envelope() -> Value {
    json!({
        "jobId": "6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10",
        "traceId": "0f9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c",
        "parentJobId": "1a2b3c4d-5e6f-4a0b-8c9d-0e1f2a3b4c5d",
        "intent": "seo_audit",
        "scope": {
            "entityType": "gamme",
            "entityIds": ["plaquettes-de-frein", "disques-de-frein"],
            "filters": {"marque": "renault"},
            "limit": 1000
        },
        "payload": {"urls": ["https://shop.example.com/p/1"]},
        "constraints": {"maxTokens": 4000, "maxDocs": 10, "timeout": 300000, "budget": 0.5, "dryRun": false},
        "context": {"userId": "u-42", "source": "cron", "priority": "high", "ragVersion": "2026.01.0", "seoRole": "R1"},
        "idempotencyKey": "idem_eyJpbnRlbnQiOiJzZW9fYXVkaXQiLCJzY29w",
        "createdAt": "2026-11-23T08:00:00.000Z",
        "expiresAt": "2026-11-23T09:00:00.000+01:00"
    })
}

#[test]
fn the_seeds_envelope_is_valid_and_read_as_it_is() {
    let v = schema();
    let doc = seed_envelope();
    assert_eq!(errors(&v, &doc), Vec::<String>::new());
    let job: JobEnvelope = serde_json::from_value(doc.clone()).unwrap();
    assert_eq!(job.job_id.as_str(), "6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10");
    assert_eq!(
        job.parent_job_id.as_ref().unwrap().as_str(),
        "1a2b3c4d-5e6f-4a0b-8c9d-0e1f2a3b4c5d"
    );
    assert_eq!(job.intent.as_deref(), Some("seo_audit"));
    let scope = job.scope.as_ref().unwrap();
    assert_eq!(scope.entity_type, EntityType::Gamme);
    assert_eq!(scope.entity_ids.as_ref().unwrap().len(), 2);
    assert_eq!(scope.limit, 1000);
    assert_eq!(job.params, doc["payload"]);
    assert_eq!(job.constraints.max_tokens, 4000);
    assert_eq!(job.constraints.max_docs, 10);
    assert_eq!(job.constraints.timeout_ms, 300_000);
    assert_eq!(job.constraints.budget, Some(0.5));
    assert_eq!(job.caller.priority, Priority::High);
    assert_eq!(job.caller.rag_version.as_deref(), Some("2026.01.0"));
    assert_eq!(job.caller.seo_role.as_deref(), Some("R1"));
    assert_eq!(
        job.idempotency_key.as_deref(),
        Some("idem_eyJpbnRlbnQiOiJzZW9fYXVkaXQiLCJzY29w")
    );
    // Offsets are honoured: 09:00+01:00 is the instant 08:00Z.
    assert_eq!(job.created_at, job.expires_at);
    assert!(job.is_expired(job.created_at.unwrap()));

    // Written back: valid, camelCase, and the same envelope.
    let written = serde_json::to_value(&job).unwrap();
    assert_eq!(errors(&v, &written), Vec::<String>::new());
    for key in [
        "jobId",
        "traceId",
        "parentJobId",
        "payload",
        "context",
        "idempotencyKey",
        "createdAt",
    ] {
        assert!(written.get(key).is_some(), "{key} missing from {written}");
    }
    let again: JobEnvelope = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), written);
}

#[test]
fn a_minimal_seed_envelope_gets_the_seeds_defaults() {
    // `createJobEnvelope({intent, scope, payload, context})` with the rest
    // left out.
    let doc = json!({"intent": "rag_reindex", "scope": {"entityType": "all"}, "payload": {"namespace": "faq"}, "context": {"source": "event"}});
    assert_eq!(errors(&schema(), &doc), Vec::<String>::new());
    let job: JobEnvelope = serde_json::from_value(doc).unwrap();
    assert_eq!(job.scope.as_ref().unwrap().limit, Scope::DEFAULT_LIMIT);
    assert_eq!(job.caller.priority, Priority::Normal);
    assert_eq!(job.caller.source, Source::Event);
    // The seed's constraint defaults.
    assert_eq!(
        job.constraints,
        JobConstraints {
            max_tokens: 4000,
            max_docs: 10,
            timeout_ms: 300_000,
            budget: None,
            dry_run: false,
        }
    );
    assert_eq!(job.constraints, JobConstraints::default());
    assert!(
        job.skill.is_empty(),
        "no skill: the one serving the intent runs"
    );
    assert!(job.idempotency_key.is_none() && job.created_at.is_none());

    let sealed = job.seal();
    let key = sealed
        .idempotency_key
        .clone()
        .expect("sealing derives the stable key");
    assert!(key.starts_with("idem_") && key.len() == 5 + 64, "{key}");
    assert!(sealed.created_at.is_some());
    assert_eq!(
        key,
        stable_hash(&json!({
            "intent": "rag_reindex",
            "scope": {"entityType": "all", "limit": 1000},
            "payload": {"namespace": "faq"}
        })),
        "the seed's rule: the stable hash of intent + scope + payload"
    );
    assert_eq!(
        errors(&schema(), &serde_json::to_value(&sealed).unwrap()),
        Vec::<String>::new()
    );
}

#[test]
fn the_stable_key_ignores_key_order_and_time_and_a_callers_key_wins() {
    let a: JobEnvelope = serde_json::from_value(json!({
        "intent": "seo_audit", "scope": {"entityType": "page", "filters": {"b": 1, "a": 2}},
        "payload": {"x": 1, "y": [1, 2]}, "context": {"source": "cron"}
    }))
    .unwrap();
    let b: JobEnvelope = serde_json::from_value(json!({
        "payload": {"y": [1, 2], "x": 1},
        "scope": {"filters": {"a": 2, "b": 1}, "entityType": "page"}, "intent": "seo_audit",
        "createdAt": "2030-01-01T00:00:00Z", "context": {"source": "cron"}
    }))
    .unwrap();
    assert_eq!(a.clone().seal().idempotency_key, b.seal().idempotency_key);
    let mut c = a.clone();
    c.params = json!({"x": 2, "y": [1, 2]});
    assert_ne!(a.clone().seal().idempotency_key, c.seal().idempotency_key);
    let mut d = a.clone();
    d.scope.as_mut().unwrap().limit = 10;
    assert_ne!(a.clone().seal().idempotency_key, d.seal().idempotency_key);
    let own = a.clone().with_idempotency_key("caller-key").seal();
    assert_eq!(own.idempotency_key.as_deref(), Some("caller-key"));
}

#[test]
fn the_schema_and_the_reader_refuse_the_same_envelopes() {
    let v = schema();
    let ctx = json!({"source": "manual"});
    let bad: Vec<(&str, Value)> = vec![
        (
            "limit over 10000",
            json!({"scope": {"entityType": "all", "limit": 10001}, "context": ctx}),
        ),
        (
            "negative limit",
            json!({"scope": {"entityType": "all", "limit": -1}, "context": ctx}),
        ),
        (
            "scope without entityType",
            json!({"scope": {"limit": 5}, "context": ctx}),
        ),
        (
            "an entity type outside the seed's",
            json!({"scope": {"entityType": "spaceship"}, "context": ctx}),
        ),
        (
            "unknown field",
            json!({"intent": "seo_audit", "priority": "high", "context": ctx}),
        ),
        (
            "unknown scope field",
            json!({"scope": {"entityType": "all", "ids": []}, "context": ctx}),
        ),
        (
            "unknown constraint",
            json!({"constraints": {"maxCost": 3}, "context": ctx}),
        ),
        ("no context", json!({"intent": "seo_audit"})),
        (
            "a context without source",
            json!({"context": {"priority": "high"}}),
        ),
        (
            "unknown priority",
            json!({"context": {"source": "cron", "priority": "urgent"}}),
        ),
        ("unknown source", json!({"context": {"source": "email"}})),
        (
            "the source mcp, outside the seed's",
            json!({"context": {"source": "mcp"}}),
        ),
        (
            "a job id that is not a UUID",
            json!({"jobId": "job-1", "context": ctx}),
        ),
        (
            "a trace id that is not a UUID",
            json!({"traceId": "6c2f1a0e7b3d4c559a573f0d2a1b9e10", "context": ctx}),
        ),
        (
            "a parent id that is not a UUID",
            json!({"parentJobId": "", "context": ctx}),
        ),
        (
            "fractional timeout",
            json!({"constraints": {"timeout": 1.5}, "context": ctx}),
        ),
        (
            "zero timeout",
            json!({"constraints": {"timeout": 0}, "context": ctx}),
        ),
        (
            "a timeout past 30 days",
            json!({"constraints": {"timeout": 18446744073709551u64}, "context": ctx}),
        ),
        (
            "a negative budget",
            json!({"constraints": {"budget": -1}, "context": ctx}),
        ),
        (
            "dryRun not a boolean",
            json!({"constraints": {"dryRun": "yes"}, "context": ctx}),
        ),
        (
            "createdAt not a date-time",
            json!({"createdAt": "yesterday", "context": ctx}),
        ),
        (
            "expiresAt on day 31 of November",
            json!({"expiresAt": "2026-11-31T08:00:00Z", "context": ctx}),
        ),
        (
            "entityIds not strings",
            json!({"scope": {"entityType": "gamme", "entityIds": [1, 2]}, "context": ctx}),
        ),
        (
            "kind unknown",
            json!({"skill": "x", "kind": "agent", "context": ctx}),
        ),
        (
            "empty idempotency key",
            json!({"idempotencyKey": "", "context": ctx}),
        ),
    ];
    // Each bad envelope differs from a good one by its one fault.
    let good = json!({"context": ctx});
    assert_eq!(errors(&v, &good), Vec::<String>::new());
    serde_json::from_value::<JobEnvelope>(good).expect("the good envelope reads");
    for (why, doc) in bad {
        assert!(
            !v.is_valid(&doc),
            "the schema takes an envelope with {why}: {doc}"
        );
        let read = serde_json::from_value::<JobEnvelope>(doc.clone());
        assert!(
            read.is_err(),
            "the reader takes an envelope with {why}: {doc}"
        );
    }
}

#[test]
fn the_example_envelopes_are_valid_and_read() {
    let v = schema();
    let dir = root().join("examples/jobs");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{}", path.display());
            serde_json::from_value::<JobEnvelope>(doc)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n > 0, "no envelope in {}", dir.display());
}
