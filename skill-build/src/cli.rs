//! `skill-registry`: check, compare, convert and import registry files, for
//! pipelines and tools that never compile Rust (feature `cli`).
//!
//! ```text
//! skill-registry validate FILE [--capabilities FILE] [--ops FILE] [--agents FILE] [--json]
//! skill-registry diff OLD NEW [--json]
//! skill-registry convert --to mcp|openai|unified FILE [--capabilities FILE] [--protocol REV]
//! skill-registry import --from unified FILE [--json]
//! skill-registry new DIR [--name NAME] [--runtime-path DIR]
//! skill-registry backstop DIR [--check]
//! skill-registry audit [--manifest-path PATH] [-p PACKAGE]... [--json] [-q] [--stamp FILE]
//! skill-registry completions SHELL
//! ```
//!
//! `skill-registry help COMMAND` or `COMMAND --help` describes each one.
//! `validate` reads `capabilities.json`, `op-registry.json` and
//! `agent-registry.json` beside FILE when they are there and no option names
//! another.
//!
//! Exit status: 0 when valid (or the diff's version bumps suffice), 1 when not,
//! 2 for a usage error or a file that cannot be read.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use skill_runtime::export::canonical;
use skill_runtime::rules::check_registry;
use skill_runtime::schema::CompiledSchema;
use skill_runtime::views::{self, McpProtocol};

use crate::diff::diff;
use crate::formats::{self, Format};
use crate::scaffold::{self, RuntimeDep};

/// The published format of `skill-registry.json`.
pub const REGISTRY_SCHEMA: &str = include_str!("../schemas/skill-registry.schema.json");

/// The published format of `op-registry.json`.
pub const OP_REGISTRY_SCHEMA: &str = include_str!("../schemas/op-registry.schema.json");

/// The published format of `agent-registry.json`.
pub const AGENT_REGISTRY_SCHEMA: &str = include_str!("../schemas/agent-registry.schema.json");

pub use crate::unified::UNIFIED_CONTRACT_SCHEMA;

/// Check, compare, convert and import skill registry files.
#[derive(Parser)]
#[command(name = "skill-registry", version, propagate_version = true)]
#[command(
    after_help = "Exit status: 0 valid, 1 not valid (or a diff needing a bigger version bump), 2 usage error or unreadable file."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a registry against its format and the cross rules.
    ///
    /// The published format schema, every input and output schema, then the
    /// rules the registry build runs (pipelines' targets, capabilities,
    /// agents' skills). capabilities.json, op-registry.json and
    /// agent-registry.json beside FILE are read unless an option names
    /// another file.
    Validate {
        /// The skill-registry.json to check.
        file: PathBuf,
        /// capabilities.json (default: the one beside FILE, if any).
        #[arg(long, value_name = "FILE")]
        capabilities: Option<PathBuf>,
        /// op-registry.json (default: the one beside FILE, if any).
        #[arg(long, value_name = "FILE")]
        ops: Option<PathBuf>,
        /// agent-registry.json (default: the one beside FILE, if any).
        #[arg(long, value_name = "FILE")]
        agents: Option<PathBuf>,
        /// Print one JSON object: validity, counts and each problem.
        #[arg(long)]
        json: bool,
    },
    /// Compare two registries and check each version bump.
    ///
    /// What changed per skill, the bump each change needs, and exit 1 when a
    /// declared version bump is smaller.
    Diff {
        /// The registry before.
        old: PathBuf,
        /// The registry after.
        new: PathBuf,
        /// Print the diff as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print another tool's view of a registry.
    ///
    /// MCP's tools/list result, OpenAI function tools, or the ADR's
    /// UnifiedSkillContract v1 list.
    Convert {
        /// The view to print.
        #[arg(long, value_enum)]
        to: View,
        /// The skill-registry.json to convert.
        file: PathBuf,
        /// capabilities.json, for MCP's effect hints.
        #[arg(long, value_name = "FILE")]
        capabilities: Option<PathBuf>,
        /// The MCP protocol revision whose tools/list result to write
        /// (2026-07-28 adds resultType, cacheScope and ttlMs).
        #[arg(long, value_name = "REVISION", default_value = "2025-11-25", value_parser = parse_protocol)]
        protocol: McpProtocol,
    },
    /// Check contracts from a global source against the ADR's rules.
    ///
    /// UnifiedSkillContract v1 (ADR-0002): every required field with its
    /// type, source GLOBAL, valid schemas, unique skill ids. Each problem is
    /// printed; a contract with any is rejected whole.
    Import {
        /// The contract format.
        #[arg(long, value_enum)]
        from: ImportFormat,
        /// A contract, or a list of contracts, as JSON.
        file: PathBuf,
        /// Print one JSON object: the accepted skill ids and each problem.
        #[arg(long)]
        json: bool,
    },
    /// Write a new skills crate, with the clippy.toml backstop.
    New {
        /// Where to write the crate.
        dir: PathBuf,
        /// The package name (default: the directory's name).
        #[arg(long)]
        name: Option<String>,
        /// Depend on skill-runtime at this path instead of crates.io.
        #[arg(long, value_name = "DIR")]
        runtime_path: Option<PathBuf>,
    },
    /// Write a skills crate's clippy.toml backstop, or check it is current.
    Backstop {
        /// The crate's directory.
        dir: PathBuf,
        /// Check only; exit 1 when it is missing or stale.
        #[arg(long)]
        check: bool,
    },
    /// Check every handler's compiled code against its manifest.
    ///
    /// Builds the package (your profile and target directory, so a warm
    /// build is reused), reads the reference graph of its compiled code
    /// (calls, function pointers, vtables; helpers, generics and
    /// dependencies included) and prints each skill, op or agent that
    /// reaches file, network, process, environment or database effects its
    /// capabilities and ambient allowances do not cover, with one call path
    /// each. Exit 1 when any does.
    Audit {
        /// The Cargo.toml to build.
        #[arg(long, value_name = "PATH")]
        manifest_path: Option<PathBuf>,
        /// A package to build (repeatable; default: the workspace's default
        /// members).
        #[arg(long = "package", short = 'p', value_name = "SPEC")]
        packages: Vec<String>,
        /// Print one JSON object: every handler's observed effects, each
        /// with a path, and what is undeclared.
        #[arg(long)]
        json: bool,
        /// Show cargo's output only when the build fails.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Record the verdicts in this skill-registry.json (an `audit`
        /// object per skill), rewritten in canonical form.
        #[arg(long, value_name = "FILE")]
        stamp: Option<PathBuf>,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The views `convert` writes.
#[derive(Clone, Copy, ValueEnum)]
enum View {
    /// The MCP tools/list result.
    Mcp,
    /// OpenAI function tools (Chat Completions `tools`).
    Openai,
    /// UnifiedSkillContract v1, one per skill.
    Unified,
}

/// The formats `import` reads.
#[derive(Clone, Copy, ValueEnum)]
enum ImportFormat {
    /// UnifiedSkillContract v1 (ADR-0002).
    Unified,
}

fn parse_protocol(s: &str) -> Result<McpProtocol, String> {
    s.parse()
}

/// A usage error or an unreadable file: exit status 2.
struct Fatal(String);

/// Run the command line `args` (without the program name); returns the exit status.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(
        std::iter::once("skill-registry".to_owned()).chain(args.iter().cloned()),
    ) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(err, "{text}");
                2
            } else {
                // --help and --version.
                let _ = write!(out, "{text}");
                0
            };
        }
    };
    let result = match cli.command {
        Command::Validate {
            file,
            capabilities,
            ops,
            agents,
            json,
        } => validate(&file, capabilities, ops, agents, json, out),
        Command::Diff { old, new, json } => diff_cmd(&old, &new, json, out),
        Command::Convert {
            to,
            file,
            capabilities,
            protocol,
        } => convert(to, &file, capabilities.as_deref(), protocol, out),
        Command::Import {
            from: ImportFormat::Unified,
            file,
            json,
        } => import_unified(&file, json, out),
        Command::New {
            dir,
            name,
            runtime_path,
        } => new_crate(&dir, name.as_deref(), runtime_path, out),
        Command::Backstop { dir, check } => backstop(&dir, check, out, err),
        Command::Audit {
            manifest_path,
            packages,
            json,
            quiet,
            stamp,
        } => {
            let options = crate::audit::Options {
                manifest_path,
                packages,
                quiet,
            };
            crate::audit::command(&options, json, stamp.as_deref(), out).map_err(Fatal)
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "skill-registry", out);
            Ok(0)
        }
    };
    match result {
        Ok(code) => code,
        Err(Fatal(message)) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

/// `new DIR`: a skills crate with the backstop `clippy.toml`.
fn new_crate(
    dir: &Path,
    name: Option<&str>,
    runtime_path: Option<PathBuf>,
    out: &mut dyn Write,
) -> Result<i32, Fatal> {
    let runtime = match runtime_path {
        Some(p) => RuntimeDep::Path(p),
        None => RuntimeDep::Registry,
    };
    let files = scaffold::new_crate(dir, name, &runtime).map_err(|e| Fatal(e.to_string()))?;
    for f in files {
        let _ = writeln!(out, "wrote {}", f.display());
    }
    let _ = writeln!(
        out,
        "`cargo clippy -- -D warnings` in {} now refuses ambient side effects outside declared capabilities",
        dir.display()
    );
    Ok(0)
}

/// `backstop DIR [--check]`: write, or check, the crate's `clippy.toml`.
fn backstop(
    dir: &Path,
    check: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Fatal> {
    match scaffold::backstop(dir, check) {
        Ok(path) if check => {
            let _ = writeln!(out, "{} is current", path.display());
            Ok(0)
        }
        Ok(path) => {
            let _ = writeln!(out, "wrote {}", path.display());
            Ok(0)
        }
        Err(e @ scaffold::ScaffoldError::Stale { .. }) => {
            let _ = writeln!(err, "{e}");
            Ok(1)
        }
        Err(e) => Err(Fatal(e.to_string())),
    }
}

/// Read a JSON file as the runtime reads an operator's files: a regular
/// file, within a size and a time; a key repeated in one object is refused
/// (serde_json would keep the last value silently, and another reader the
/// first).
fn read_json(file: &Path) -> Result<Value, Fatal> {
    skill_runtime::registry::read_json_file(file).map_err(Fatal)
}

/// A registry file (skills under `list`) in whichever of the two formats it
/// is in, with that format's defaults written out: what `diff` and `convert`
/// read (they do not validate; `validate` does).
fn read_registry(file: &Path, list: &str, export_schema: &str) -> Result<Value, Fatal> {
    let doc = read_json(file)?;
    let read = formats::read(&file.display().to_string(), &doc, list, export_schema);
    Ok(formats::normalized(doc, read.format, list))
}

fn format_problems(path: &str, doc: &Value, schema_text: &str, problems: &mut Vec<String>) {
    let schema: Value = match serde_json::from_str(schema_text) {
        Ok(s) => s,
        Err(e) => {
            problems.push(format!(
                "{path}: the published format schema does not parse: {e}"
            ));
            return;
        }
    };
    match CompiledSchema::compile(&schema) {
        Ok(c) => problems.extend(
            c.violations(doc)
                .into_iter()
                .map(|v| format!("{path}: {v}")),
        ),
        Err(e) => problems.push(format!(
            "{path}: the published format schema does not compile: {e}"
        )),
    }
}

fn validate(
    file: &Path,
    capabilities: Option<PathBuf>,
    ops: Option<PathBuf>,
    agents: Option<PathBuf>,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, Fatal> {
    let doc = read_json(file)?;
    let name = file.display().to_string();
    // An op registry on its own (`{"registry_version", "ops"}`) is checked
    // as the op registry of an empty skill registry.
    let op_registry_alone = doc.get("skills").is_none() && doc.get("ops").is_some();
    if op_registry_alone && ops.is_some() {
        return Err(Fatal(format!(
            "{name} is an op registry; give the skill registry as FILE and this one with --ops"
        )));
    }
    let (registry, ops) = if op_registry_alone {
        let version = doc.get("registry_version").cloned().unwrap_or(Value::Null);
        (
            json!({"registry_version": version, "skills": []}),
            Some(file.to_path_buf()),
        )
    } else {
        (doc, ops)
    };
    // The files an export writes beside the registry are read by default.
    let beside = |given: Option<PathBuf>, default: &str| -> Option<PathBuf> {
        given.or_else(|| {
            let path = file.with_file_name(default);
            (path.is_file() && path != file).then_some(path)
        })
    };
    let catalog_file = beside(capabilities, "capabilities.json");
    let catalog = catalog_file.as_deref().map(read_json).transpose()?;
    let ops_file = beside(ops, "op-registry.json");
    let ops = ops_file.as_deref().map(read_json).transpose()?;
    let agents_file = beside(agents, "agent-registry.json");
    let agents = agents_file.as_deref().map(read_json).transpose()?;
    let shown = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let (ops_name, agents_name) = (shown(&ops_file), shown(&agents_file));

    let mut problems = Vec::new();
    let mut format = Format::Export;
    let registry = if op_registry_alone {
        registry
    } else {
        let read = formats::read(&name, &registry, "skills", REGISTRY_SCHEMA);
        format = read.format;
        problems.extend(read.problems);
        formats::normalized(registry, format, "skills")
    };
    let ops = match (&ops_name, ops) {
        (Some(path), Some(ops)) => {
            let read = formats::read(path, &ops, "ops", OP_REGISTRY_SCHEMA);
            problems.extend(read.problems);
            if op_registry_alone || read.format == Format::BrainOs {
                format = read.format;
            }
            Some(formats::normalized(ops, read.format, "ops"))
        }
        _ => None,
    };
    if let (Some(path), Some(agents)) = (&agents_name, &agents) {
        format_problems(path, agents, AGENT_REGISTRY_SCHEMA, &mut problems);
    }
    // Cross rules read fields the format guarantees; after format errors they
    // would only repeat them. A file another runtime wrote may be one of
    // several loaded together: what it references and does not hold is
    // reported as not checked; an export is whole, and must resolve.
    let mut unchecked = Vec::new();
    if problems.is_empty() {
        for f in check_registry(&registry, ops.as_ref(), catalog.as_ref()) {
            if f.unresolved && format == Format::BrainOs {
                unchecked.push(format!("{name}: not checked: {f}"));
            } else {
                problems.push(format!("{name}: {f}"));
            }
        }
        if let (Some(path), Some(agents)) = (&agents_name, &agents) {
            problems.extend(
                skill_runtime::agents::check_agents(agents, Some(&registry))
                    .into_iter()
                    .map(|f| format!("{path}: {f}")),
            );
        }
    }
    let warnings = formats::warnings(&name, &registry);
    let count =
        |doc: &Value, list: &str| doc.get(list).and_then(Value::as_array).map_or(0, Vec::len);
    let pipelines = registry
        .get("skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("kind").and_then(Value::as_str) == Some("pipeline"))
        .count();
    let code = if problems.is_empty() { 0 } else { 1 };
    if json {
        let report = json!({
            "file": name,
            "format": format.word(),
            "valid": problems.is_empty(),
            "not_checked": unchecked,
            "warnings": warnings,
            "read": {
                "capabilities": shown(&catalog_file),
                "ops": ops_name,
                "agents": agents_name,
            },
            "counts": {
                "skills": count(&registry, "skills"),
                "pipelines": pipelines,
                "ops": ops.as_ref().map(|o| count(o, "ops")),
                "agents": agents.as_ref().map(|a| count(a, "agents")),
            },
            "problems": problems,
        });
        let _ = out.write_all(canonical(&report).as_bytes());
        return Ok(code);
    }
    if problems.is_empty() {
        let _ = writeln!(
            out,
            "{name}: valid {} ({} skills, {pipelines} pipelines{})",
            format.describe(),
            count(&registry, "skills"),
            ops.as_ref()
                .map(|o| format!(", {} ops", count(o, "ops")))
                .unwrap_or_default()
                + &agents
                    .as_ref()
                    .map(|a| format!(", {} agents", count(a, "agents")))
                    .unwrap_or_default()
        );
    }
    for p in problems.iter().chain(&unchecked).chain(&warnings) {
        let _ = writeln!(out, "{p}");
    }
    Ok(code)
}

fn diff_cmd(old: &Path, new: &Path, json: bool, out: &mut dyn Write) -> Result<i32, Fatal> {
    let (old, new) = (
        read_registry(old, "skills", REGISTRY_SCHEMA)?,
        read_registry(new, "skills", REGISTRY_SCHEMA)?,
    );
    let d = diff(&old, &new);
    if json {
        let _ = out.write_all(canonical(&d.to_json()).as_bytes());
    } else {
        let _ = write!(out, "{d}");
    }
    Ok(if d.ok() { 0 } else { 1 })
}

fn convert(
    to: View,
    file: &Path,
    capabilities: Option<&Path>,
    protocol: McpProtocol,
    out: &mut dyn Write,
) -> Result<i32, Fatal> {
    let registry = read_registry(file, "skills", REGISTRY_SCHEMA)?;
    let catalog = capabilities.map(read_json).transpose()?;
    let view = match to {
        View::Mcp => views::mcp_tools_for(&registry, catalog.as_ref(), protocol),
        View::Openai => views::openai_tools(&registry).map_err(|errors| {
            Fatal(
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })?,
        View::Unified => views::unified_contracts(&registry),
    };
    let _ = out.write_all(canonical(&view).as_bytes());
    Ok(0)
}

/// `import --from unified FILE`: the ADR's `validateSkillContract` for
/// contracts from a global source.
fn import_unified(file: &Path, json: bool, out: &mut dyn Write) -> Result<i32, Fatal> {
    let doc = read_json(file)?;
    let name = file.display().to_string();
    let (accepted, problems) = crate::unified::check_contracts(&doc);
    let code = if problems.is_empty() { 0 } else { 1 };
    if json {
        let report = json!({
            "file": name,
            "valid": problems.is_empty(),
            "accepted": accepted,
            "problems": problems,
        });
        let _ = out.write_all(canonical(&report).as_bytes());
        return Ok(code);
    }
    for p in &problems {
        let _ = writeln!(out, "{name}: {p}");
    }
    let _ = writeln!(
        out,
        "{name}: {} contract{} accepted, {} problem{}",
        accepted.len(),
        if accepted.len() == 1 { "" } else { "s" },
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
    );
    Ok(code)
}
