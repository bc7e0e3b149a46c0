//! `skill-examples`: list, export and invoke the example skills; serve them
//! over MCP; run them on a fleet of workers over Redis.

/// `println!`, except that a closed standard output (the reader went away,
/// as `| head` does) ends the program quietly with success instead of a panic:
/// what was asked for was delivered as far as anyone reads it.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::write_out(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// `print!`, with [`outln!`]'s handling of a closed standard output.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_out(::std::format_args!($($arg)*))
    };
}

mod agents;
mod auth_args;
mod console;
mod fleet;
mod ground;
mod progress;
mod queue_admin;
mod redis_args;
mod report;
mod run;
mod runs;
mod serve;
mod telemetry;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use skill_runtime::Registry;
use skill_runtime::manifest::{AgentRole, PermissionLevel};
use skill_runtime::views::McpProtocol;

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
    /// Export traces and metrics over OTLP/HTTP to the collector the standard
    /// variables name (`OTEL_EXPORTER_OTLP_ENDPOINT`, default
    /// http://localhost:4318); setting that variable alone does the same.
    #[arg(long, global = true)]
    otel: bool,
}

#[derive(Subcommand)]
enum Command {
    /// List the skills: name, version, capabilities and description.
    List {
        /// Print a JSON array: name, version, kind, capabilities (the
        /// pipeline's closure for a pipeline), description.
        #[arg(long)]
        json: bool,
    },
    /// Print skill-registry.json (the same bytes the build script writes), or
    /// another view of the registry.
    Export {
        /// What to print.
        #[arg(long, value_enum, default_value_t = report::Format::Registry)]
        format: report::Format,
        /// Print capabilities.json (same as --format capabilities).
        #[arg(long, conflicts_with = "format")]
        capabilities: bool,
        /// Print agent-registry.json (the same bytes the build script writes).
        #[arg(long, conflicts_with_all = ["format", "capabilities"])]
        agents: bool,
        /// With --format mcp: the MCP revision whose tools/list result to
        /// print (2026-07-28 adds resultType, cacheScope and ttlMs).
        #[arg(long, value_name = "REVISION", default_value = "2025-11-25", value_parser = parse_protocol)]
        protocol: McpProtocol,
        /// Print what a runtime started with --registry and --overlay serves:
        /// the registry checked against the file, the overlays applied.
        #[arg(long)]
        effective: bool,
        #[command(flatten)]
        contract: run::ContractArgs,
    },
    /// List the agents: id, version, name, role, skills, KPIs and description.
    Agents {
        /// Print a JSON array with the same fields.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Run an agent: its input checked, its pre-conditions, its body (every
    /// skill it runs goes through every stage of a job with the agent as the caller),
    /// its post-conditions and escalation triggers; print its result.
    Agent {
        /// Agent id, like agent.seo.vlevel.
        id: String,
        /// Input JSON: the text itself, @FILE, or - for standard input.
        input: String,
        /// Write the run's R3 files here (`{id}.{time}.{job_id}.audit.md`,
        /// `.backlog.json`, `.graph.json`), and an escalated run's too.
        #[arg(long, value_name = "DIR")]
        artifacts: Option<PathBuf>,
        #[command(flatten)]
        job: run::JobArgs,
        #[command(flatten)]
        runtime: run::RuntimeArgs,
    },
    /// Run a skill through every stage of a job (authorization, rate limit, schema,
    /// conditions, idempotency, approval, timeout and retries, output checks) and
    /// print its result.
    Invoke {
        /// Skill name, or name@version.
        name: String,
        /// Input JSON: the text itself, @FILE, or - for standard input.
        input: String,
        #[command(flatten)]
        job: run::JobArgs,
        #[command(flatten)]
        runtime: run::RuntimeArgs,
        /// The MCP server that `runtime = "mcp"` ops call: a command and its
        /// arguments, separated by spaces, started as a child process (e.g.
        /// "target/debug/skill-examples mcp").
        #[arg(long, value_name = "COMMAND")]
        mcp_server: Option<String>,
        /// NAME is an op of the op registry, not a skill.
        #[arg(long)]
        op: bool,
    },
    /// Ground tool calls as a model proposed them, without running them: read
    /// JSON lines `{"name": ..., "arguments": ...}` (a skill's name or its
    /// tool name; the arguments as JSON text or a value) from standard input,
    /// and print for each whether it would pass the skill's input stage
    /// (schema, decoding, limits), with each error's path.
    Ground {
        #[command(flatten)]
        runtime: run::RuntimeArgs,
    },
    /// Serve the exposed skills as MCP tools over standard input and output. Every
    /// call goes through the runtime pipeline as the caller these flags describe;
    /// tools needing an MCP permission that is not granted are neither listed
    /// nor callable.
    Mcp(Box<serve::McpArgs>),
    /// The fleet in web pages, for people: the queue (jobs waiting for a
    /// person, with Approve and Deny), the runs, latency per skill, the
    /// registry. Loopback without --auth; see docs/console.md.
    Console(console::ConsoleArgs),
    /// Per-skill runs, failures and latency percentiles, and each agent's KPIs
    /// with their status: from a run-record file
    /// (written by `--record FILE`), or over the fleet's records with --redis.
    Stats {
        /// A JSON-lines file of run records.
        records: Option<PathBuf>,
        #[command(flatten)]
        redis: redis_args::RedisArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Take jobs from a queue on Redis and run them, until SIGTERM or Ctrl-C
    /// (then take no more, let running jobs finish, hand back the rest).
    Worker(fleet::WorkerArgs),
    /// Put a job on a queue on Redis; print its id, or with --wait its result.
    Enqueue(fleet::EnqueueArgs),
    /// The outcome of a queued job: its result, or its error.
    Result(fleet::ResultArgs),
    /// Cancel a queued job: one still waiting never runs, one running is
    /// stopped at its next await (its worker hears within a second).
    Cancel(queue_admin::CancelArgs),
    /// Approve a queued job that waits for a person (`requires_hitl`, or a
    /// destructive skill): it runs, and its record names you.
    Approve(queue_admin::DecideArgs),
    /// Deny a queued job that waits for a person: it ends `not_approved`.
    Deny(queue_admin::DenyArgs),
    /// The latest pipeline runs of the fleet: where each is, what it did.
    Runs(runs::RunsArgs),
    /// One pipeline run's state (the seed's GraphState).
    Run {
        #[command(subcommand)]
        command: runs::RunCommand,
    },
    /// The state of a queue on Redis.
    Queue {
        #[command(subcommand)]
        command: queue_admin::QueueCommand,
    },
    /// API keys for `mcp --http ADDR --auth api-keys FILE`.
    ApiKey {
        #[command(subcommand)]
        command: ApiKeyCommand,
    },
}

#[derive(clap::Subcommand)]
enum ApiKeyCommand {
    /// Make a key for caller NAME, add its SHA-256 digest to FILE (created
    /// when missing, readable by its owner only) and print the key, once:
    /// it is stored nowhere. A running server reads the file again when it
    /// changes; removing an entry revokes its key.
    New {
        /// Who the key is for (letters, digits, `-`, `_`, `.`): the caller's
        /// user id in records.
        name: String,
        /// The key file.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// The caller's agent role, checked against each skill's reusable_by.
        #[arg(long, value_parser = parse_role)]
        role: Option<AgentRole>,
        /// The caller's permission level (read, execute, admin).
        #[arg(long, value_parser = parse_level)]
        level: Option<PermissionLevel>,
        /// Grant this MCP permission (e.g. seo:read; repeat for several).
        #[arg(long = "grant", value_name = "PERMISSION")]
        grants: Vec<String>,
    },
}

fn parse_protocol(s: &str) -> Result<McpProtocol, String> {
    s.parse()
}

fn parse_role(s: &str) -> Result<AgentRole, String> {
    AgentRole::parse(s).ok_or_else(|| format!("unknown role `{s}`"))
}

fn parse_level(s: &str) -> Result<PermissionLevel, String> {
    PermissionLevel::parse(s).ok_or_else(|| format!("unknown permission level `{s}`"))
}

/// Write to standard output; exit quietly when the reader is gone, and report
/// any other write error the way `println!` would, without a panic.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {e}");
            std::process::exit(1);
        }
        std::process::exit(0);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Flushes what is left when `main` returns.
    let _otel = match telemetry::start(cli.otel) {
        Ok(o) => o,
        Err(code) => return code,
    };
    // Commands that do not run skills need no registry.
    match cli.command {
        Command::Stats {
            records,
            redis,
            json,
        } => return report::stats(records.as_deref(), &redis, json),
        Command::Result(args) => return fleet::result(args),
        Command::Cancel(args) => return queue_admin::cancel(args),
        Command::Approve(args) => return queue_admin::approve(args),
        Command::Deny(args) => return queue_admin::deny(args),
        Command::Queue { command } => return queue_admin::queue(command),
        Command::Runs(args) => return runs::runs(args),
        Command::Run { command } => return runs::run(command),
        Command::ApiKey {
            command:
                ApiKeyCommand::New {
                    name,
                    file,
                    role,
                    level,
                    grants,
                },
        } => {
            return match skill_runtime::mcp::auth::ApiKeys::add(&file, &name, role, level, grants) {
                Ok(made) => {
                    eprintln!(
                        "key for `{name}` added to {}; it is shown once, here:",
                        file.display()
                    );
                    out!("{}\n", made.key);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Enqueue(args) => return fleet::enqueue(args),
        // Listens for SIGTERM before it builds its registry (`fleet.rs`).
        Command::Worker(args) => return fleet::worker(args),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "skill-examples", &mut out);
            out!("{}", String::from_utf8_lossy(&out));
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let registry = match Registry::from_inventory() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::List { json } => report::list(&registry, json),
        Command::Console(args) => console::console(registry, args),
        Command::Export { agents: true, .. } => agents::export(&registry),
        Command::Agents { json } => agents::list(json),
        Command::Agent {
            id,
            input,
            artifacts,
            job,
            runtime,
        } => agents::run(registry, &id, &input, artifacts, &job, &runtime),
        Command::Export {
            format,
            capabilities,
            protocol,
            effective,
            contract,
            ..
        } => {
            let format = if capabilities {
                report::Format::Capabilities
            } else {
                format
            };
            if !effective && (contract.registry.is_some() || !contract.overlays.is_empty()) {
                eprintln!(
                    "error: --registry and --overlay shape what `export --effective` prints; add --effective"
                );
                return ExitCode::from(2);
            }
            match contract.effective(registry) {
                Ok(registry) => report::export(&registry, format, protocol),
                Err(code) => code,
            }
        }
        Command::Invoke {
            name,
            input,
            job,
            runtime,
            mcp_server,
            op,
        } => run::invoke(
            registry,
            &name,
            &input,
            &job,
            &runtime,
            mcp_server.as_deref(),
            op,
        ),
        Command::Mcp(args) => serve::mcp(registry, *args),
        Command::Ground { runtime } => ground::ground(registry, &runtime),
        Command::Worker(_) => unreachable!("answered above"),
        Command::Stats { .. }
        | Command::Result(_)
        | Command::Cancel(_)
        | Command::Approve(_)
        | Command::Deny(_)
        | Command::Queue { .. }
        | Command::Runs(_)
        | Command::Run { .. }
        | Command::ApiKey { .. }
        | Command::Enqueue(_)
        | Command::Completions { .. } => {
            unreachable!("handled above")
        }
    }
}
