//! `agents`, `agent ID INPUT`, `export --agents` and the KPI part of `stats`:
//! the agents the linked crates declare.

use std::process::ExitCode;
use std::sync::Arc;

use skill_runtime::Registry;
use skill_runtime::agents::{AgentRegistry, AgentRunner, KpiRun, KpiValue};

use crate::run::{JobArgs, RuntimeArgs, async_runtime, build_runtime, read_input, records_lost};

/// The agents of every linked crate, checked; an error is printed.
pub fn registry() -> Result<AgentRegistry, ExitCode> {
    AgentRegistry::from_inventory().map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

/// `agents`: id, role, version, skills and KPIs of each agent.
pub fn list(json: bool) -> ExitCode {
    let agents = match registry() {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut rows = Vec::new();
    for a in agents.agents() {
        let c = a.contract();
        let skills: Vec<&str> = c.skills.iter().map(|s| s.manifest.name).collect();
        let kpis: Vec<&str> = c.kpis.iter().map(|k| k.metric_id).collect();
        if json {
            rows.push(serde_json::json!({
                "id": c.id,
                "version": c.version,
                "name": c.name,
                "role": c.role.as_str(),
                "skills": skills,
                "kpis": kpis,
                "description": c.description,
            }));
            continue;
        }
        outln!(
            "{}@{}  {}  role {}  skills {}  kpis {}\n    {}",
            c.id,
            c.version,
            c.name,
            c.role.as_str(),
            skills.join(", "),
            kpis.join(", "),
            c.description
        );
    }
    if json {
        out!(
            "{}",
            skill_runtime::export::canonical(&serde_json::Value::Array(rows))
        );
    }
    ExitCode::SUCCESS
}

/// `export --agents`: agent-registry.json, the bytes the build script writes.
pub fn export(skills: &Registry) -> ExitCode {
    match registry() {
        Ok(a) => {
            out!("{}", a.export(&skills.to_json()));
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// `agent ID INPUT`: run an agent, print its result; exit 2 when its input
/// was refused, 1 when it failed.
pub fn run(
    skills: Registry,
    id: &str,
    input: &str,
    artifacts: Option<std::path::PathBuf>,
    job: &JobArgs,
    args: &RuntimeArgs,
) -> ExitCode {
    let agents = match registry() {
        Ok(a) => Arc::new(a),
        Err(code) => return code,
    };
    let text = match read_input(input) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read input {input}: {e}");
            return ExitCode::from(2);
        }
    };
    let params: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: input for agent `{id}` is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async {
        let redis = match args.redis.connect().await {
            Ok(r) => r,
            Err(code) => return code,
        };
        let runtime = match build_runtime(skills, args, None, redis.as_ref()) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let mut runner = AgentRunner::new(runtime.clone(), agents);
        let has_dir = artifacts.is_some();
        if let Some(dir) = artifacts {
            runner = runner.with_artifacts(dir);
        }
        // On a fleet, a hand-over is a job of the queue, for a worker, and
        // the R3 files (without --artifacts) are kept on Redis.
        if let Some(r) = &redis {
            runner = runner.with_queue(Arc::new(r.clone()));
            if !has_dir {
                runner = runner.with_artifact_store(r.artifact_store());
            }
        }
        // The operator's identity, as --role/--permission/--grant give it;
        // the agent's skill calls carry the agent's own role.
        let caller = job
            .apply(skill_runtime::JobEnvelope::for_reference(
                id,
                serde_json::Value::Null,
            ))
            .caller;
        let result = match runner.run(id, params, caller, job.dry_run).await {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        if let Some(r) = &redis {
            r.record_sink().flush().await;
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        );
        if let Some(e) = &result.escalation {
            let done = match (&result.escalated, &result.escalation_job) {
                (Some(t), _) => format!(
                    "; it ran as job {} and {}",
                    t.job_id,
                    if t.success { "succeeded" } else { "failed" }
                ),
                (None, Some(job)) => format!("; it was enqueued as job {job}"),
                (None, None) => String::new(),
            };
            eprintln!(
                "next action: escalate to `{}`{}: {}{done}",
                e.target_agent,
                if e.human_required {
                    " (a human is required)"
                } else {
                    ""
                },
                e.reasons.join("; ")
            );
        }
        // Like `invoke`: 2 when the input was refused, 1 when the run failed.
        let status = match &result.error {
            None => ExitCode::SUCCESS,
            Some(e) if e.input_error => ExitCode::from(2),
            Some(_) => ExitCode::FAILURE,
        };
        records_lost(&runtime, args, redis.is_some())
            .err()
            .unwrap_or(status)
    })
}

/// Each linked agent's KPIs over `records` (run records of any jobs: each
/// agent reads its own), as (agent id, KPIs).
pub fn kpis_of(records: &[(&str, KpiRun<'_>)]) -> Vec<(&'static str, Vec<KpiValue>)> {
    match AgentRegistry::from_inventory() {
        Ok(agents) => agents.kpis(records),
        Err(_) => Vec::new(),
    }
}
