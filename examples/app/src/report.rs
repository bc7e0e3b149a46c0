//! `list`, `export` and `stats`: what the registry holds, its artifacts and
//! views, and statistics from run records (a file, or the fleet's on Redis).

use std::path::Path;
use std::process::ExitCode;

use serde::Deserialize;
use skill_runtime::Registry;
use skill_runtime::agents::KpiRun;
use skill_runtime::export::canonical;
use skill_runtime::record::{RunStatus, SkillStats, stats_from_records};
use skill_runtime::views::{self, McpProtocol};

use crate::redis_args::RedisArgs;
use crate::run::async_runtime;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// skill-registry.json.
    Registry,
    /// capabilities.json.
    Capabilities,
    /// The MCP `tools/list` result: every exposed tool.
    Mcp,
    /// OpenAI function tools (Chat Completions `tools`).
    Openai,
    /// The ADR's UnifiedSkillContract v1, one per skill.
    Unified,
    /// op-registry.json.
    Ops,
}

pub fn list(registry: &Registry, json: bool) -> ExitCode {
    let mut rows = Vec::new();
    for s in registry.skills() {
        let m = s.entry.manifest;
        let caps: Vec<&str> = match s.closure() {
            Some(c) => c.capabilities.iter().map(String::as_str).collect(),
            None => m.capabilities.iter().map(|c| c.id).collect(),
        };
        let kind = match (m.op, m.kind) {
            (Some(r), _) => format!("op:{}", r.as_str()),
            (None, k) => k.as_str().to_owned(),
        };
        if json {
            rows.push(serde_json::json!({
                "name": m.name,
                "version": m.version,
                "kind": kind,
                "capabilities": caps,
                "description": m.description,
            }));
            continue;
        }
        outln!(
            "{:<20} {:<8} {:<10} [{}] {}",
            m.name,
            m.version,
            kind,
            caps.join(", "),
            m.description
        );
    }
    if json {
        out!("{}", canonical(&serde_json::Value::Array(rows)));
    }
    ExitCode::SUCCESS
}

pub fn export(registry: &Registry, format: Format, protocol: McpProtocol) -> ExitCode {
    let text = match format {
        Format::Registry => registry.export(),
        Format::Capabilities => registry.export_capabilities(),
        Format::Mcp => canonical(&views::mcp_tools_for(
            &registry.to_json(),
            Some(&registry.capabilities_json()),
            protocol,
        )),
        Format::Openai => match views::openai_tools(&registry.to_json()) {
            Ok(tools) => canonical(&tools),
            Err(errors) => {
                for e in errors {
                    eprintln!("error: {e}");
                }
                return ExitCode::FAILURE;
            }
        },
        Format::Unified => canonical(&views::unified_contracts(&registry.to_json())),
        Format::Ops => registry.export_ops(),
    };
    out!("{text}");
    ExitCode::SUCCESS
}

/// The fields of a run record that statistics need.
#[derive(Deserialize)]
struct RecordLine {
    skill: String,
    #[serde(default)]
    version: Option<String>,
    duration_us: u64,
    status: RunStatus,
    #[serde(default)]
    output: Option<serde_json::Value>,
}

/// How many of the fleet's most recent records `stats --redis` reads.
const FLEET_RECORDS: usize = 100_000;

/// `stats FILE`, or `stats --redis URL` over the fleet's records.
pub fn stats(file: Option<&Path>, redis: &RedisArgs, json: bool) -> ExitCode {
    let (lines, source): (Vec<String>, String) = match (file, redis.url()) {
        // Bytes, not text: a line that is not UTF-8 is one bad line, not a
        // bad file.
        (Some(path), _) => match std::fs::read(path) {
            Ok(bytes) => (
                bytes
                    .split(|b| *b == b'\n')
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect(),
                path.display().to_string(),
            ),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        (None, Some(url)) => {
            let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
                Ok(rt) => rt,
                Err(code) => return code,
            };
            let read = rt.block_on(async {
                let backend = redis.connect().await.map_err(|_| ())?.ok_or(())?;
                backend
                    .records(FLEET_RECORDS)
                    .await
                    .map_err(|e| eprintln!("error: {e}"))
            });
            match read {
                Ok(lines) => (lines, format!("the records stream at {url}")),
                Err(()) => return ExitCode::FAILURE,
            }
        }
        (None, None) => {
            eprintln!(
                "error: stats reads a run-record file (stats FILE) or the fleet's records (stats --redis URL, or SKILL_REDIS_URL)"
            );
            return ExitCode::from(2);
        }
    };
    // A line that is not a record (cut short by a crash, written by hand) is
    // skipped and counted: the rest of the file still counts.
    let mut records = Vec::new();
    let mut skipped: Vec<(usize, String)> = Vec::new();
    for (n, line) in lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str::<RecordLine>(line) {
            Ok(r) => records.push(r),
            Err(e) => skipped.push((n + 1, e.to_string())),
        }
    }
    if let Some((line, why)) = skipped.first() {
        if records.is_empty() {
            eprintln!("error: {source}:{line}: not a run record: {why}; no line of it is one");
            return ExitCode::from(2);
        }
        eprintln!(
            "warning: {source}: {} line(s) are not run records and were skipped (the first, line {line}: {why})",
            skipped.len()
        );
    }
    let keys: Vec<String> = records
        .iter()
        .map(|r| match &r.version {
            Some(v) => format!("{}@{v}", r.skill),
            None => r.skill.clone(),
        })
        .collect();
    let stats = stats_from_records(
        records
            .iter()
            .zip(&keys)
            .map(|(r, k)| (k.as_str(), r.duration_us, r.status == RunStatus::Failed)),
    );
    let runs: Vec<(&str, KpiRun<'_>)> = records
        .iter()
        .map(|r| {
            let run = KpiRun {
                succeeded: r.status == RunStatus::Succeeded,
                duration_us: r.duration_us,
                output: r.output.as_ref(),
            };
            (r.skill.as_str(), run)
        })
        .collect();
    let agents = crate::agents::kpis_of(&runs);
    if json {
        let agents: Vec<serde_json::Value> = agents
            .iter()
            .map(|(id, kpis)| serde_json::json!({"agent": id, "kpis": kpis}))
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"skills": stats, "agents": agents}))
                .unwrap_or_default()
        );
    } else {
        print_table(&stats);
        print_kpis(&agents);
    }
    ExitCode::SUCCESS
}

fn print_kpis(agents: &[(&str, Vec<skill_runtime::agents::KpiValue>)]) {
    if agents.is_empty() {
        return;
    }
    outln!(
        "\n{:<22} {:<22} {:>10} {:<12} {:>8} {:>8} {:>8} {:<8} {:>5}",
        "agent",
        "kpi",
        "value",
        "unit",
        "target",
        "warning",
        "critical",
        "status",
        "runs"
    );
    for (id, kpis) in agents {
        for k in kpis {
            outln!(
                "{:<22} {:<22} {:>10} {:<12} {:>8} {:>8} {:>8} {:<8} {:>5}",
                id,
                k.metric_id,
                k.value.map_or("-".to_owned(), |v| format!("{v:.3}")),
                k.unit,
                k.target,
                k.threshold_warning,
                k.threshold_critical,
                k.status.map_or("no data", |s| s.as_str()),
                k.samples
            );
        }
    }
}

fn print_table(stats: &[SkillStats]) {
    outln!(
        "{:<32} {:>6} {:>8} {:>10} {:>10} {:>10} {:>10}",
        "skill",
        "runs",
        "failures",
        "p50 us",
        "p90 us",
        "p99 us",
        "max us"
    );
    for s in stats {
        outln!(
            "{:<32} {:>6} {:>8} {:>10} {:>10} {:>10} {:>10}",
            s.skill,
            s.runs,
            s.failures,
            s.p50_us,
            s.p90_us,
            s.p99_us,
            s.max_us
        );
    }
}
