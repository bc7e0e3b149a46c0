//! `invoke`, and what every command that runs skills shares: the job's flags,
//! the runtime's flags, the example runtime, and how a result or an error is
//! printed (with the exit status).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use skill_runtime::manifest::{AgentRole, PermissionLevel, TargetKind};
use skill_runtime::op::{McpClient, McpTools};
use skill_runtime::queue::fleet::Fleet;
use skill_runtime::record::{FanOut, RecordSink};
use skill_runtime::registry::Contract;
use skill_runtime::{
    InvokeError, JobEnvelope, Registry, Runtime, SkillResult, envelope::JobConstraints,
    policy::ApproveAll, record::JsonLinesSink,
};

use crate::redis_args::RedisArgs;
use crate::{parse_level, parse_role};

/// The level a caller of the command line holds: the one given, else
/// `execute` for a caller that gave a role (it means to run as that role).
pub fn level(role: Option<AgentRole>, given: Option<PermissionLevel>) -> Option<PermissionLevel> {
    given.or(role.map(|_| PermissionLevel::Execute))
}

/// Who asks, and what they ask of the job.
#[derive(clap::Args)]
pub struct JobArgs {
    /// Caller's agent role (architect, analyzer, executor, validator,
    /// orchestrator), checked against the skill's reusable_by.
    #[arg(long, value_parser = parse_role)]
    pub role: Option<AgentRole>,
    /// Caller's permission level (read, execute, admin); `execute` when
    /// --role is given without it. Any of --role, --permission or --grant
    /// holds the caller to reusable_by; without --role it gets what the
    /// least-granted role gets (nothing, unless the skill is open to every
    /// role or lists them all).
    #[arg(long, value_parser = parse_level)]
    pub permission: Option<PermissionLevel>,
    /// Grant the caller this permission (repeat for several); with any --grant,
    /// the caller holds exactly these and the skill's MCP permissions apply.
    #[arg(long = "grant", value_name = "PERMISSION")]
    pub grants: Vec<String>,
    /// Ask the skill to change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Deadline for the whole job, retries included (1 ms to 30 days; the
    /// default is the seed's 5 minutes).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=JobConstraints::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// Jobs with the same key run once: across processes and the fleet with
    /// --redis (or SKILL_REDIS_URL, and always on a queue); without it, the
    /// key is held by this process only, so separate `invoke` commands with
    /// the same key each run.
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
}

impl JobArgs {
    /// `job` with the flags that were given applied (a flag not given leaves
    /// the envelope's own value).
    pub fn apply(&self, mut job: JobEnvelope) -> JobEnvelope {
        if self.role.is_some() {
            job.caller.agent_role = self.role;
        }
        if let Some(level) = level(self.role, self.permission) {
            job.caller.permission_level = Some(level);
        }
        if !self.grants.is_empty() {
            job.caller = job.caller.with_permissions(self.grants.iter().cloned());
        }
        job.constraints.dry_run |= self.dry_run;
        if let Some(ms) = self.timeout_ms {
            job.constraints.timeout_ms = ms;
        }
        if self.idempotency_key.is_some() {
            job.idempotency_key = self.idempotency_key.clone();
        }
        job
    }
}

/// How the runtime that runs the skills is set up.
#[derive(clap::Args)]
pub struct RuntimeArgs {
    /// Approve skills that require a human or are destructive (you are the human).
    #[arg(long)]
    pub approve: bool,
    /// Append a run record per job to this JSON-lines file.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Data folder of the example stores. Without it: the repository's
    /// (`examples/seed-skills/data`) under the working directory, else under
    /// the folders holding this program (a checkout's `target/debug/..`).
    #[arg(long, value_name = "DIR", env = "SKILL_DATA_DIR")]
    pub data: Option<PathBuf>,
    #[command(flatten)]
    pub contract: ContractArgs,
    #[command(flatten)]
    pub redis: RedisArgs,
}

/// The registry a deployment was reviewed against, and its overlays.
#[derive(clap::Args)]
pub struct ContractArgs {
    /// Start only if this binary's skills are exactly those of this published
    /// skill-registry.json (and op-registry.json beside it): every
    /// difference is listed and nothing starts.
    #[arg(long = "registry", value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Apply this overlay (repeat for several, applied in order): disable a
    /// skill, lower its rate limit or timeout, hide its MCP tool, require more
    /// permissions, keep fewer roles, require a human; never widen.
    #[arg(long = "overlay", value_name = "FILE")]
    pub overlays: Vec<PathBuf>,
}

impl ContractArgs {
    /// The contract these flags describe, if any.
    pub fn contract(&self, compiled: &Registry) -> Result<Option<Contract>, ExitCode> {
        let fail = |e: skill_runtime::registry::ContractError| {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        };
        let mut contract = match &self.registry {
            Some(path) => Contract::from_file(path).map_err(fail)?,
            None if self.overlays.is_empty() => return Ok(None),
            None => Contract::from_json(
                "this binary's registry",
                compiled.to_json(),
                Some(compiled.ops_json()),
            ),
        };
        for o in &self.overlays {
            contract = contract.overlay_file(o).map_err(fail)?;
        }
        Ok(Some(contract))
    }

    /// `registry` as the contract makes it: checked against the file, with
    /// the overlays applied.
    pub fn effective(&self, registry: Registry) -> Result<Arc<Registry>, ExitCode> {
        let registry = Arc::new(registry);
        match self.contract(&registry)? {
            None => Ok(registry),
            Some(c) => c.apply(&registry).map_err(|problems| {
                eprintln!("error: the registry does not match its contract ({c}):");
                for p in problems {
                    eprintln!("  - {p}");
                }
                ExitCode::FAILURE
            }),
        }
    }
}

/// `invoke NAME INPUT`: one job, run here; with --redis, sharing the fleet's
/// idempotency, rate limits and records.
pub fn invoke(
    registry: Registry,
    name: &str,
    input: &str,
    job_args: &JobArgs,
    args: &RuntimeArgs,
    mcp_server: Option<&str>,
    op: bool,
) -> ExitCode {
    let text = match read_input(input) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read input {input}: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async {
        let tools = match mcp_server {
            None => None,
            Some(command) => {
                let mut words = command.split_whitespace();
                let mut child = tokio::process::Command::new(words.next().unwrap_or_default());
                child.args(words);
                match McpClient::spawn(child).await {
                    Ok(client) => Some(McpTools::new(client)),
                    Err(e) => {
                        eprintln!("error: --mcp-server {command}: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        };
        let redis = match args.redis.connect().await {
            Ok(r) => r,
            Err(code) => return code,
        };
        let runtime = match build_runtime(registry, args, tools, redis.as_ref()) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let mut job = job_args.apply(JobEnvelope::for_reference(name, serde_json::Value::Null));
        if op {
            job.kind = TargetKind::Op;
        }
        let result = runtime.invoke_text(job, &text).await;
        if let Some(r) = &redis {
            r.record_sink().flush().await;
        }
        let status = print_result(result);
        match records_lost(&runtime, args, redis.is_some()) {
            Ok(()) => status,
            Err(failed) => failed,
        }
    })
}

/// Report on stderr the run records the runtime's sinks could not keep (a
/// `--record` file on a full disk or a device that refuses writes, a Redis
/// backlog that overflowed): `Err` with a failing status when there were any,
/// so a lost record is never a silent success.
pub fn records_lost(runtime: &Runtime, args: &RuntimeArgs, redis: bool) -> Result<(), ExitCode> {
    let n = runtime.records_lost();
    if n == 0 {
        return Ok(());
    }
    let mut places: Vec<String> = args
        .record
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if redis {
        places.push("the fleet's records stream".to_owned());
    }
    eprintln!(
        "error: {n} run record{} could not be written to {}",
        if n == 1 { "" } else { "s" },
        places.join(" or ")
    );
    Err(ExitCode::FAILURE)
}

/// Print a job's result as JSON (rule notes on stderr), or its error and what
/// to do next; the exit status: 0, 2 for bad input, 1 otherwise.
pub fn print_result(result: Result<SkillResult, InvokeError>) -> ExitCode {
    match result {
        Ok(result) => {
            for note in &result.notes {
                eprintln!(
                    "{}: rule `{}`: {}",
                    note.severity.as_str(),
                    note.rule_id,
                    note.message
                );
            }
            match serde_json::to_string_pretty(&result) {
                Ok(text) => {
                    outln!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: the result does not serialize: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            if let Some(output) = e.rejected_output() {
                eprintln!("rejected output: {output}");
            }
            print_error(&e.to_string(), e.next_action(), e.is_input_error())
        }
    }
}

/// Print an error and what to do next; the exit status.
pub fn print_error(message: &str, next: skill_runtime::NextAction, input_error: bool) -> ExitCode {
    eprintln!("error: {message}");
    eprintln!("next action: {next}");
    if input_error {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}

/// A tokio runtime from `builder`, with I/O and timers.
pub fn async_runtime(
    mut builder: tokio::runtime::Builder,
) -> Result<tokio::runtime::Runtime, ExitCode> {
    builder.enable_all().build().map_err(|e| {
        eprintln!("error: cannot start the async runtime: {e}");
        ExitCode::FAILURE
    })
}

/// The example data ([`seed_skills::data_dir`]).
fn data_dir(given: Option<&std::path::Path>) -> Result<PathBuf, ExitCode> {
    seed_skills::data_dir(given).map_err(|e| {
        eprintln!("error: {e} (or set SKILL_DATA_DIR)");
        ExitCode::FAILURE
    })
}

/// The example runtime: the seed skills' resources and rollback actions, an
/// approver when the operator approves, a record file when asked; with a
/// Redis backend, the fleet's idempotency, rate limits and records.
pub fn build_runtime(
    registry: Registry,
    args: &RuntimeArgs,
    tools: Option<McpTools>,
    redis: Option<&Fleet>,
) -> Result<Runtime, ExitCode> {
    let data = data_dir(args.data.as_deref())?;
    let registry = args.contract.effective(registry)?;
    let mut builder = match team_skills::runtime_builder(registry, &data) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "error: cannot load example data from {}: {e}; pass --data DIR (or set SKILL_DATA_DIR)",
                data.display()
            );
            return Err(ExitCode::FAILURE);
        }
    };
    if let Some(tools) = tools {
        builder = builder.resource(tools);
    }
    if args.approve {
        builder = builder.approver(ApproveAll {
            by: "the operator (--approve)".to_owned(),
        });
    }
    let mut sinks: Vec<Arc<dyn RecordSink>> = Vec::new();
    if let Some(path) = &args.record {
        match JsonLinesSink::append(path) {
            Ok(sink) => {
                sinks.push(Arc::new(sink));
            }
            Err(e) => {
                eprintln!("error: cannot open {}: {e}", path.display());
                return Err(ExitCode::FAILURE);
            }
        }
    }
    if let Some(redis) = redis {
        builder = redis.share(builder);
        // Beside a record file, if there is one.
        sinks.push(redis.record_sink());
    }
    builder = match sinks.len() {
        0 => builder,
        1 => builder.sink(sinks.remove(0)),
        _ => builder.sink(Arc::new(FanOut(sinks))),
    };
    let runtime = builder.build().map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })?;
    // When spans and metrics are exported: the records it loses too.
    skill_runtime::otel::observe_runtime(&runtime);
    Ok(runtime)
}

/// An argument that is JSON text itself, `@FILE`, or `-` for standard input.
/// A file is read as the runtime reads an operator's files: a regular file
/// (not a FIFO or a device), within a size and a time, as JSON with no key
/// repeated in an object.
pub fn read_input(arg: &str) -> std::io::Result<String> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        Ok(s)
    } else if let Some(path) = arg.strip_prefix('@') {
        skill_runtime::registry::read_json_file(std::path::Path::new(path))
            .map(|v| v.to_string())
            .map_err(std::io::Error::other)
    } else {
        Ok(arg.to_owned())
    }
}
