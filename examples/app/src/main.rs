//! `skill-examples`: list, export and invoke the example skills.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use skill_runtime::manifest::{AgentRole, PermissionLevel};
use skill_runtime::{Caller, InvokeError, Registry, Runtime};

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
    /// Print skill-registry.json (the same bytes the build script writes).
    Export {
        /// Print capabilities.json instead.
        #[arg(long)]
        capabilities: bool,
    },
    /// Validate INPUT against the skill's schema, run it, validate and print the output.
    Invoke {
        /// Skill name, or name@version.
        name: String,
        /// Input JSON: the text itself, @FILE, or - for standard input.
        input: String,
        /// Caller's agent role (architect, analyzer, executor, validator, orchestrator).
        #[arg(long, value_parser = parse_role)]
        role: Option<AgentRole>,
        /// Caller's permission level (read, execute, admin).
        #[arg(long, value_parser = parse_level)]
        permission: Option<PermissionLevel>,
        /// Data folder of the example stores.
        #[arg(long, default_value = seed_skills::DATA_DIR)]
        data: PathBuf,
    },
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
                let caps: Vec<&str> = m.capabilities.iter().map(|c| c.id).collect();
                println!(
                    "{:<20} {:<8} [{}] {}",
                    m.name,
                    m.version,
                    caps.join(", "),
                    m.description
                );
            }
            ExitCode::SUCCESS
        }
        Command::Export { capabilities } => {
            let text = if capabilities {
                registry.export_capabilities()
            } else {
                registry.export()
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        Command::Invoke {
            name,
            input,
            role,
            permission,
            data,
        } => invoke(
            registry,
            &name,
            &input,
            Caller {
                agent_role: role,
                permission_level: permission,
                user_id: None,
            },
            &data,
        ),
    }
}

fn invoke(
    registry: Registry,
    name: &str,
    input: &str,
    caller: Caller,
    data: &std::path::Path,
) -> ExitCode {
    let text = match read_input(input) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read input {input}: {e}");
            return ExitCode::from(2);
        }
    };
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: input is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let resources = match seed_skills::demo_resources(data) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "error: cannot load example data from {}: {e}",
                data.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let runtime = match Runtime::new(Arc::new(registry), resources) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(runtime.invoke_json(name, value, caller)) {
        Ok(outcome) => {
            for note in &outcome.notes {
                eprintln!(
                    "{}: rule `{}`: {}",
                    note.severity.as_str(),
                    note.rule_id,
                    note.message
                );
            }
            println!(
                "{}",
                serde_json::to_string_pretty(&outcome.output).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            match e {
                InvokeError::UnknownSkill { .. }
                | InvokeError::InvalidInput { .. }
                | InvokeError::MalformedInput { .. } => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
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
