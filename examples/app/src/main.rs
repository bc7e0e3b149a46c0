//! `skill-examples`: list, export and invoke the example skills.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use serde::Deserialize;
use skill_runtime::export::canonical;
use skill_runtime::manifest::TargetKind;
use skill_runtime::manifest::{AgentRole, PermissionLevel};
use skill_runtime::mcp::{McpOptions, McpServer};
use skill_runtime::op::{McpClient, McpTools};
use skill_runtime::record::{RunStatus, stats_from_records};
use skill_runtime::views;
use skill_runtime::{ApproveAll, Caller, JobEnvelope, JsonLinesSink, Registry, Runtime};

// The crates whose skills this app serves; naming them links their registrations.
use seed_skills as _;
use team_skills as _;

/// The registry exported by this package's build script.
pub const EXPORTED_REGISTRY: &str = include_str!(concat!(env!("OUT_DIR"), "/skill-registry.json"));

#[derive(Parser)]
#[command(name = "skill-examples", about = "Run the example skills", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the skills: name, version, capabilities and description.
    List,
    /// Print skill-registry.json (the same bytes the build script writes), or
    /// another view of the registry.
    Export {
        /// What to print.
        #[arg(long, value_enum, default_value_t = Format::Registry)]
        format: Format,
        /// Print capabilities.json (same as --format capabilities).
        #[arg(long, conflicts_with = "format")]
        capabilities: bool,
    },
    /// Run a skill through the whole pipeline (authorization, rate limit, schema,
    /// conditions, idempotency, approval, timeout and retries, output checks) and
    /// print its result.
    Invoke {
        /// Skill name, or name@version.
        name: String,
        /// Input JSON: the text itself, @FILE, or - for standard input.
        input: String,
        #[command(flatten)]
        job: JobArgs,
    },
    /// Serve the exposed skills as MCP tools over standard input and output. Every
    /// call goes through the runtime pipeline as the caller these flags describe;
    /// tools needing an MCP permission that is not granted are neither listed
    /// nor callable.
    Mcp {
        /// Grant this MCP permission (e.g. seo:read; repeat for several).
        #[arg(long = "grant", value_name = "PERMISSION")]
        grants: Vec<String>,
        /// Caller's agent role, checked against each skill's reusable_by.
        #[arg(long, value_parser = parse_role)]
        role: Option<AgentRole>,
        /// Caller's permission level (read, execute, admin).
        #[arg(long, value_parser = parse_level)]
        permission: Option<PermissionLevel>,
        /// Approve the calls of skills that require a human or are destructive
        /// (without it, they are refused with a tool error).
        #[arg(long)]
        approve: bool,
        /// Append a run record per call to this JSON-lines file.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Data folder of the example stores.
        #[arg(long, default_value = seed_skills::DATA_DIR)]
        data: PathBuf,
        /// Serve the Streamable HTTP transport on this loopback address (e.g.
        /// 127.0.0.1:8080; port 0 picks one) instead of standard input and
        /// output; the endpoint is printed on standard error.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
    },
    /// Per-skill runs, failures and latency percentiles from a run-record file
    /// (written by `invoke --record FILE`).
    Stats {
        /// A JSON-lines file of run records.
        records: PathBuf,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
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

#[derive(clap::Args)]
struct JobArgs {
    /// Caller's agent role (architect, analyzer, executor, validator,
    /// orchestrator), checked against the skill's reusable_by.
    #[arg(long, value_parser = parse_role)]
    role: Option<AgentRole>,
    /// Caller's permission level (read, execute, admin).
    #[arg(long, value_parser = parse_level)]
    permission: Option<PermissionLevel>,
    /// Grant the caller this permission (repeat for several); with any --grant,
    /// the caller holds exactly these and the skill's MCP permissions apply.
    #[arg(long = "grant", value_name = "PERMISSION")]
    grants: Vec<String>,
    /// Approve skills that require a human or are destructive (you are the human).
    #[arg(long)]
    approve: bool,
    /// Ask the skill to change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Deadline for the whole job, retries included.
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,
    /// Jobs with the same key run once.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
    /// Append the run record to this JSON-lines file.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Data folder of the example stores.
    #[arg(long, default_value = seed_skills::DATA_DIR)]
    data: PathBuf,
    /// NAME is an op of the op registry, not a skill.
    #[arg(long)]
    op: bool,
    /// The MCP server that `runtime = "mcp"` ops call: a command and its
    /// arguments, separated by spaces, started as a child process (e.g.
    /// "target/debug/skill-examples mcp").
    #[arg(long, value_name = "COMMAND")]
    mcp_server: Option<String>,
}

fn parse_role(s: &str) -> Result<AgentRole, String> {
    use AgentRole::*;
    [Architect, Analyzer, Executor, Validator, Orchestrator]
        .into_iter()
        .find(|r| r.as_str() == s)
        .ok_or_else(|| format!("unknown role `{s}`"))
}

fn parse_level(s: &str) -> Result<PermissionLevel, String> {
    use PermissionLevel::*;
    [Read, Execute, Admin]
        .into_iter()
        .find(|l| l.as_str() == s)
        .ok_or_else(|| format!("unknown permission level `{s}`"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Stats { records } = &cli.command {
        return stats(records);
    }
    let registry = match Registry::from_inventory() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::List => {
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
                println!(
                    "{:<20} {:<8} {:<10} [{}] {}",
                    m.name,
                    m.version,
                    kind,
                    caps.join(", "),
                    m.description
                );
            }
            ExitCode::SUCCESS
        }
        Command::Export {
            format,
            capabilities,
        } => export(
            &registry,
            if capabilities {
                Format::Capabilities
            } else {
                format
            },
        ),
        Command::Invoke { name, input, job } => invoke(registry, &name, &input, job),
        Command::Mcp {
            grants,
            role,
            permission,
            approve,
            record,
            data,
            http,
        } => {
            if let Some(addr) = http
                && !addr.ip().is_loopback()
            {
                eprintln!(
                    "error: --http {addr}: the MCP server listens on loopback only (127.0.0.1 or ::1)"
                );
                return ExitCode::from(2);
            }
            let runtime = match build_runtime(registry, &data, approve, record.as_deref(), None) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let options = McpOptions {
                grants: grants.into_iter().collect(),
                caller: Caller {
                    agent_role: role,
                    permission_level: permission,
                    ..Caller::default()
                },
                server_name: env!("CARGO_PKG_NAME").to_owned(),
                server_version: env!("CARGO_PKG_VERSION").to_owned(),
                // The ids lead to the records, which only a record file keeps
                // where someone can read them.
                result_ids: record.is_some(),
            };
            let server = match McpServer::new(runtime, options) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            // Over stdio, one client sends over one pipe: a single thread serves
            // it with no hand-offs between workers (calls still interleave at
            // their awaits). Over HTTP, clients are many: calls run in parallel.
            let builder = match http {
                None => tokio::runtime::Builder::new_current_thread(),
                Some(_) => tokio::runtime::Builder::new_multi_thread(),
            };
            let rt = match async_runtime(builder) {
                Ok(rt) => rt,
                Err(code) => return code,
            };
            let served = rt.block_on(async {
                match http {
                    None => server.serve_stdio().await,
                    Some(addr) => {
                        let listener = tokio::net::TcpListener::bind(addr).await?;
                        eprintln!(
                            "serving MCP (Streamable HTTP) at http://{}/mcp",
                            listener.local_addr()?
                        );
                        Ok(server.serve_http(listener).await?)
                    }
                }
            });
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Stats { .. } => unreachable!("handled above"),
    }
}

fn export(registry: &Registry, format: Format) -> ExitCode {
    let text = match format {
        Format::Registry => registry.export(),
        Format::Capabilities => registry.export_capabilities(),
        Format::Mcp => canonical(&views::mcp_tools(
            &registry.to_json(),
            Some(&registry.capabilities_json()),
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
    print!("{text}");
    ExitCode::SUCCESS
}

fn invoke(registry: Registry, name: &str, input: &str, args: JobArgs) -> ExitCode {
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
    let tools = match &args.mcp_server {
        None => None,
        Some(command) => {
            let mut words = command.split_whitespace();
            let mut child = tokio::process::Command::new(words.next().unwrap_or_default());
            child.args(words);
            match rt.block_on(McpClient::spawn(child)) {
                Ok(client) => Some(McpTools::new(client)),
                Err(e) => {
                    eprintln!("error: --mcp-server {command}: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    let runtime = match build_runtime(
        registry,
        &args.data,
        args.approve,
        args.record.as_deref(),
        tools,
    ) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut caller = Caller {
        agent_role: args.role,
        permission_level: args.permission,
        ..Caller::default()
    };
    if !args.grants.is_empty() {
        caller = caller.with_permissions(args.grants);
    }
    let mut job = JobEnvelope::for_reference(name, serde_json::Value::Null)
        .with_caller(caller)
        .with_dry_run(args.dry_run);
    job.constraints.timeout_ms = args.timeout_ms;
    job.idempotency_key = args.idempotency_key;
    if args.op {
        job.kind = TargetKind::Op;
    }
    match rt.block_on(runtime.invoke_text(job, &text)) {
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
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: the result does not serialize: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("next action: {:?}", e.next_action());
            if e.is_input_error() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// A tokio runtime from `builder`, with I/O and timers.
fn async_runtime(
    mut builder: tokio::runtime::Builder,
) -> Result<tokio::runtime::Runtime, ExitCode> {
    builder.enable_all().build().map_err(|e| {
        eprintln!("error: cannot start the async runtime: {e}");
        ExitCode::FAILURE
    })
}

/// The example runtime: the seed skills' resources and rollback actions, an
/// approver when the operator approves, a record file when asked.
fn build_runtime(
    registry: Registry,
    data: &Path,
    approve: bool,
    record: Option<&Path>,
    tools: Option<McpTools>,
) -> Result<Runtime, ExitCode> {
    let mut builder = match seed_skills::runtime_builder(Arc::new(registry), data) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "error: cannot load example data from {}: {e}",
                data.display()
            );
            return Err(ExitCode::FAILURE);
        }
    };
    if let Some(tools) = tools {
        builder = builder.resource(tools);
    }
    if approve {
        builder = builder.approver(ApproveAll {
            by: "the operator (--approve)".to_owned(),
        });
    }
    if let Some(path) = record {
        match JsonLinesSink::append(path) {
            Ok(sink) => builder = builder.sink(Arc::new(sink)),
            Err(e) => {
                eprintln!("error: cannot open {}: {e}", path.display());
                return Err(ExitCode::FAILURE);
            }
        }
    }
    builder.build().map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

/// The fields of a run record that statistics need.
#[derive(Deserialize)]
struct RecordLine {
    skill: String,
    #[serde(default)]
    version: Option<String>,
    duration_us: u64,
    status: RunStatus,
}

fn stats(path: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let mut lines = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str::<RecordLine>(line) {
            Ok(r) => lines.push(r),
            Err(e) => {
                eprintln!("error: {}:{}: not a run record: {e}", path.display(), n + 1);
                return ExitCode::from(2);
            }
        }
    }
    let keys: Vec<String> = lines
        .iter()
        .map(|r| match &r.version {
            Some(v) => format!("{}@{v}", r.skill),
            None => r.skill.clone(),
        })
        .collect();
    let stats = stats_from_records(
        lines
            .iter()
            .zip(&keys)
            .map(|(r, k)| (k.as_str(), r.duration_us, r.status == RunStatus::Failed)),
    );
    println!(
        "{:<32} {:>6} {:>8} {:>10} {:>10} {:>10} {:>10}",
        "skill", "runs", "failures", "p50 us", "p90 us", "p99 us", "max us"
    );
    for s in stats {
        println!(
            "{:<32} {:>6} {:>8} {:>10} {:>10} {:>10} {:>10}",
            s.skill, s.runs, s.failures, s.p50_us, s.p90_us, s.p99_us, s.max_us
        );
    }
    ExitCode::SUCCESS
}

fn read_input(arg: &str) -> std::io::Result<String> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        Ok(s)
    } else if let Some(path) = arg.strip_prefix('@') {
        std::fs::read_to_string(path)
    } else {
        Ok(arg.to_owned())
    }
}
