//! The registry built from the example crates: contents, order, cross-crate
//! resolution, hand-written skills, and the rules the registry enforces.

use std::sync::Arc;

use seed_skills as _;
use team_skills as _;

use serde_json::json;
use skill_runtime::manifest::*;
use skill_runtime::prelude::*;
use skill_runtime::{InvokeError, Runtime, capability::catalog, registry::SkillEntry};
use skill_runtime::{Registry, Resources};

fn registry() -> Registry {
    Registry::from_inventory().expect("the example skills form a valid registry")
}

#[test]
fn collects_every_skill_of_both_crates_sorted() {
    let r = registry();
    let names: Vec<&str> = r.skills().iter().map(|s| s.name()).collect();
    // Skills by name, then ops by name.
    assert_eq!(
        names,
        [
            "canonical_check",
            "count_slowly",
            "durable_tally",
            "echo",
            "handle_normalization",
            "handle_profile",
            "mcp_tool_workflow",
            "normalize_handle",
            "note_failure",
            "notify",
            "rag_cache_purge",
            "rag_reindex",
            "read_note",
            "routes_sync",
            "search_notes",
            "seo_role_audit",
            "summarize_note",
            "summarize_text",
            "tally",
            "tally_fanout",
            "tally_route",
            "threshold",
            "vlevel_calculator",
            "wobbly_tally",
            "mcp_summarize",
            "obsidian_search",
            "word_count",
        ]
    );
    assert!(r.skills()[24..].iter().all(|s| s.is_op()));
    let crates = r.contributing_crates();
    assert!(
        crates.contains("seed_skills") && crates.contains("team_skills"),
        "{crates:?}"
    );
    assert_eq!(r.get("handle_profile").unwrap().crate_name(), "team_skills");
}

#[test]
fn manifests_carry_the_seed_fields() {
    let r = registry();
    let m = r.get("seo_role_audit").unwrap().entry.manifest;
    assert_eq!(m.title, Some("SEO Role Audit"));
    assert_eq!(
        m.description,
        "Audit PageRole assignments and detect R1/R4 confusion."
    );
    assert_eq!(
        m.execution,
        Execution {
            timeout_ms: 120_000,
            retries: 2,
            backoff: Backoff::Exponential,
            idempotent: true
        }
    );
    assert_eq!(m.mcp.tool_name, Some("ai_cos_seo_role_audit"));
    assert_eq!(m.mcp.permissions, ["database:read", "seo:audit"]);
    let caps: Vec<&str> = m.capabilities.iter().map(|c| c.id).collect();
    assert_eq!(caps, ["database.read", "seo.audit", "database.write"]);
    assert_eq!(m.side_effects.len(), 1);
    assert_eq!(m.side_effects[0].target, "__seo_audit_log");
    assert_eq!(
        m.side_effects[0].capability.operation,
        skill_runtime::capability::Operation::Write
    );
    let c = &r.get("seo_role_audit").unwrap().conditions;
    assert_eq!(c.preconditions[0].error_code, "EMPTY_INPUT");
    assert_eq!(
        c.preconditions[0].condition,
        "|i: &AuditInput| !i.urls.is_empty()"
    );
    assert_eq!(c.validation_rules[0].rule_id, "no_r1_expert_content");

    let search = r.get("search_notes").unwrap();
    assert_eq!(
        search.entry.manifest.rate_limit,
        Some(RateLimit { max_per_minute: 10 })
    );
    assert_eq!(search.entry.manifest.redaction.inputs, ["query"]);
    assert_eq!(search.entry.failure_modes[0].code, "search_failed");
    assert!(search.entry.failure_modes[0].retryable);

    let read = r.get("read_note").unwrap();
    let codes: Vec<&str> = read.entry.failure_modes.iter().map(|f| f.code).collect();
    assert_eq!(
        codes,
        [
            "invalid_path",
            "note_not_found",
            "read_failed",
            "budget_exceeded"
        ]
    );
    // A skill without an error type has no failure modes.
    assert!(
        r.get("vlevel_calculator")
            .unwrap()
            .entry
            .failure_modes
            .is_empty()
    );
}

#[test]
fn call_targets_resolve_across_crates() {
    let r = registry();
    let targets = r.get("handle_profile").unwrap().entry.manifest.call_targets;
    assert_eq!(
        targets,
        [CallTarget {
            kind: TargetKind::Skill,
            name: "normalize_handle",
            version: Some("1.0.0")
        }]
    );
}

#[test]
fn catalog_holds_every_declared_capability() {
    let r = registry();
    let ids: Vec<&str> = r.catalog().iter().map(|c| c.id).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    for s in r.skills() {
        for c in s.entry.manifest.capabilities {
            assert!(
                ids.contains(&c.id),
                "{} uses {} outside the catalog",
                s.name(),
                c.id
            );
        }
    }
}

#[tokio::test]
async fn invoke_validates_input_runs_and_validates_output() {
    let rt = team_skills::runtime_builder(
        Arc::new(registry()),
        std::path::Path::new(seed_skills::DATA_DIR),
    )
    .unwrap()
    .build()
    .unwrap();
    let ok = rt
        .invoke_json(
            "handle_profile",
            json!({"handle": " https://github.com/Ada_Lovelace "}),
            Caller::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        *ok.data,
        json!({"handle": "@ada_lovelace", "platform": "github", "display_name": "Ada Lovelace", "slug": "github-ada-lovelace"})
    );

    let err = rt
        .invoke_json(
            "seo_role_audit",
            json!({"urls": ["not a uri"], "check_content": "yes"}),
            Caller::default(),
        )
        .await;
    let Err(InvokeError::InvalidInput { violations, .. }) = err else {
        panic!("{err:?}")
    };
    let paths: Vec<&str> = violations
        .iter()
        .map(|v| v.instance_path.as_str())
        .collect();
    assert!(
        paths.contains(&"/urls/0") && paths.contains(&"/check_content"),
        "{violations:?}"
    );

    let err = rt
        .invoke_json(
            "read_note",
            json!({"path": "../secrets"}),
            Caller::default(),
        )
        .await;
    assert!(
        matches!(&err, Err(InvokeError::Failed { code, retryable: false, .. }) if code == "invalid_path"),
        "{err:?}"
    );

    let err = rt
        .invoke_json("routes_sync", json!({"dryRun": false}), Caller::default())
        .await;
    assert!(
        matches!(&err, Err(InvokeError::Precondition { error_code, .. }) if error_code == "PERMISSION_DENIED"),
        "{err:?}"
    );
    let admin = Caller::agent(AgentRole::Orchestrator, PermissionLevel::Admin);
    let done = rt
        .invoke_json("routes_sync", json!({"dryRun": false}), admin)
        .await
        .unwrap();
    assert_eq!(
        done.data["added"],
        json!(["/guide/:slug", "/pieces/:gamme/:marque"])
    );

    let warn = rt
        .invoke_json(
            "vlevel_calculator",
            json!({"page_data": {"url": "https://a.example/x", "gamme": "g", "ktypnr": "1"}}),
            Caller::default(),
        )
        .await
        .unwrap();
    assert_eq!(warn.data["vlevel"], "V5");
    assert_eq!(warn.notes[0].rule_id, "score_consistency");

    let err = rt.invoke_json("nope", json!({}), Caller::default()).await;
    assert!(matches!(err, Err(InvokeError::UnknownSkill { .. })));
}

#[test]
fn runtime_refuses_to_start_without_declared_resources() {
    let Err(err) = Runtime::new(Arc::new(registry()), Resources::new()) else {
        panic!("must fail")
    };
    let text = err.to_string();
    assert!(
        text.contains(
            "skill `read_note@1.0.0` declares `obsidian.read`, which needs a `Vault` in Resources"
        ),
        "{text}"
    );
}

// A hand-written skill: the trait path, without the macro.

#[derive(Deserialize, JsonSchema)]
pub struct Num {
    pub n: i64,
}

#[derive(Serialize, JsonSchema)]
pub struct Doubled {
    pub doubled: i64,
}

pub struct Double;

unsafe impl Skill for Double {
    type Input = Num;
    type Output = Doubled;
    type Error = Never;
    const MANIFEST: &'static Manifest = &Manifest {
        name: "double",
        version: "2.0.0",
        description: "Double a number.",
        entrypoint: Entrypoint {
            module: module_path!(),
            handler: "Double",
        },
        location: Location {
            file: file!(),
            line: line!(),
            column: column!(),
        },
        ..Manifest::DEFAULT
    };
    async fn run(_ctx: Ctx<'_, Self>, input: Num) -> Result<Doubled, Never> {
        Ok(Doubled {
            doubled: input.n * 2,
        })
    }
}

pub struct Broken;

unsafe impl Skill for Broken {
    type Input = Num;
    type Output = Vec<i64>;
    type Error = Never;
    const MANIFEST: &'static Manifest = &Manifest {
        name: "BrokenSkill",
        version: "1.0",
        description: "",
        status: Status::Deprecated,
        entrypoint: Entrypoint {
            module: module_path!(),
            handler: "Broken",
        },
        location: Location {
            file: file!(),
            line: line!(),
            column: column!(),
        },
        call_targets: &[CallTarget {
            kind: TargetKind::Skill,
            name: "missing_skill",
            version: None,
        }],
        ..Manifest::DEFAULT
    };
    async fn run(_ctx: Ctx<'_, Self>, input: Num) -> Result<Vec<i64>, Never> {
        Ok(vec![input.n])
    }
}

/// An input with a name its schema does not list.
#[derive(Deserialize, JsonSchema)]
pub struct AliasedNum {
    #[serde(alias = "number")]
    pub n: i64,
}

pub struct Aliased;

unsafe impl Skill for Aliased {
    type Input = AliasedNum;
    type Output = Doubled;
    type Error = Never;
    const MANIFEST: &'static Manifest = &Manifest {
        name: "aliased",
        version: "1.0.0",
        ..*Double::MANIFEST
    };
    async fn run(_ctx: Ctx<'_, Self>, input: AliasedNum) -> Result<Doubled, Never> {
        Ok(Doubled { doubled: input.n })
    }
}

static DOUBLE: SkillEntry = SkillEntry::of::<Double>();
static ALIASED: SkillEntry = SkillEntry::of::<Aliased>();
static BROKEN: SkillEntry = SkillEntry::of::<Broken>();

#[tokio::test]
async fn hand_written_skills_register_and_run() {
    let r = Registry::build(vec![&DOUBLE], catalog()).unwrap();
    let rt = Runtime::new(Arc::new(r), Resources::new()).unwrap();
    let out = rt
        .invoke_json("double@2.0.0", json!({"n": 21}), Caller::default())
        .await
        .unwrap();
    assert_eq!(*out.data, json!({"doubled": 42}));
}

#[test]
fn an_input_name_the_schema_does_not_list_is_refused_with_the_fix() {
    // serde accepts `number` for `n`; the schema, which clients read, says
    // only `n`. The registry says so rather than decode a hidden contract.
    let err = Registry::build(vec![&DOUBLE, &ALIASED], catalog()).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems.len(), 1, "{text}");
    assert!(text.contains("skill `aliased@1.0.0`"), "{text}");
    assert!(
        text.contains("does not list (`number`)") && text.contains("remove the alias"),
        "{text}"
    );
}

#[test]
fn registry_reports_every_problem_of_a_broken_manifest() {
    let err = Registry::build(vec![&BROKEN], catalog()).unwrap_err();
    let text = err.to_string();
    for expected in [
        "name `BrokenSkill` is not snake_case",
        "version `1.0` is not semver",
        "description is empty",
        "status is `deprecated` but there is no deprecation metadata",
        "the output type must serialize to a JSON object",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(
        text.contains("tests/registry.rs:"),
        "problems name the source location:\n{text}"
    );
}
