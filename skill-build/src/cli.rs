//! `skill-registry`: check, compare and convert registry files, for pipelines and
//! tools that never compile Rust.
//!
//! ```text
//! skill-registry validate FILE [--capabilities FILE] [--ops FILE] [--agents FILE]
//! skill-registry diff OLD NEW [--json]
//! skill-registry convert --to mcp|openai|unified FILE [--capabilities FILE]
//! skill-registry new DIR [--name NAME] [--runtime-path DIR]
//! skill-registry backstop DIR [--check]
//! ```
//!
//! `validate` reads `capabilities.json`, `op-registry.json` and
//! `agent-registry.json` beside FILE when they are there and no option names
//! another.
//!
//! Exit status: 0 when valid (or the diff's version bumps suffice), 1 when not,
//! 2 for a usage error or a file that cannot be read.

use std::io::Write;
use std::path::Path;

use serde_json::Value;
use skill_runtime::export::canonical;
use skill_runtime::rules::check_registry;
use skill_runtime::schema::CompiledSchema;
use skill_runtime::views;

use crate::diff::diff;
use crate::scaffold::{self, RuntimeDep};

/// The published format of `skill-registry.json`.
pub const REGISTRY_SCHEMA: &str = include_str!("../schemas/skill-registry.schema.json");

/// The published format of `op-registry.json`.
pub const OP_REGISTRY_SCHEMA: &str = include_str!("../schemas/op-registry.schema.json");

const USAGE: &str = "usage:
  skill-registry validate FILE [--capabilities FILE] [--ops FILE] [--agents FILE]   (the files beside FILE by default)
  skill-registry diff OLD NEW [--json]
  skill-registry convert --to mcp|openai|unified FILE [--capabilities FILE]
  skill-registry new DIR [--name NAME] [--runtime-path DIR]
  skill-registry backstop DIR [--check]";

/// The published format of `agent-registry.json`.
pub const AGENT_REGISTRY_SCHEMA: &str = include_str!("../schemas/agent-registry.schema.json");

/// A usage error or an unreadable file: exit status 2.
struct Fatal(String);

/// Run the command line `args` (without the program name); returns the exit status.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = match args.first().map(String::as_str) {
        Some("validate") => validate(&args[1..], out),
        Some("diff") => diff_cmd(&args[1..], out),
        Some("convert") => convert(&args[1..], out),
        Some("new") => new_crate(&args[1..], out),
        Some("backstop") => backstop(&args[1..], out, err),
        Some("-h" | "--help" | "help") => {
            let _ = writeln!(out, "{USAGE}");
            Ok(0)
        }
        Some(other) => Err(Fatal(format!("unknown command `{other}`\n{USAGE}"))),
        None => Err(Fatal(USAGE.to_owned())),
    };
    match result {
        Ok(code) => code,
        Err(Fatal(message)) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

/// Positional arguments and `--flag VALUE` options (`--json` takes none).
struct Args<'a> {
    positional: Vec<&'a str>,
    options: Vec<(&'a str, &'a str)>,
    json: bool,
    check: bool,
}

fn parse<'a>(args: &'a [String], options: &[&str]) -> Result<Args<'a>, Fatal> {
    let mut out = Args {
        positional: Vec::new(),
        options: Vec::new(),
        json: false,
        check: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--json" && options.contains(&"--json") {
            out.json = true;
        } else if a == "--check" && options.contains(&"--check") {
            out.check = true;
        } else if a.starts_with("--") {
            if !options.contains(&a.as_str()) || a == "--json" || a == "--check" {
                return Err(Fatal(format!("unknown option `{a}`\n{USAGE}")));
            }
            let value = it
                .next()
                .ok_or_else(|| Fatal(format!("`{a}` needs a value\n{USAGE}")))?;
            out.options.push((a, value));
        } else {
            out.positional.push(a);
        }
    }
    Ok(out)
}

impl Args<'_> {
    fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    fn files(&self, n: usize) -> Result<&[&str], Fatal> {
        if self.positional.len() != n {
            return Err(Fatal(format!(
                "expected {n} file argument{}, got {}\n{USAGE}",
                if n == 1 { "" } else { "s" },
                self.positional.len()
            )));
        }
        Ok(&self.positional)
    }
}

/// `new DIR`: a skills crate with the backstop `clippy.toml`.
fn new_crate(args: &[String], out: &mut dyn Write) -> Result<i32, Fatal> {
    let a = parse(args, &["--name", "--runtime-path"])?;
    let [dir] = a.files(1)? else {
        unreachable!("files(1) returns one")
    };
    let runtime = match a.option("--runtime-path") {
        Some(p) => RuntimeDep::Path(p.into()),
        None => RuntimeDep::Registry,
    };
    let files = scaffold::new_crate(Path::new(dir), a.option("--name"), &runtime)
        .map_err(|e| Fatal(e.to_string()))?;
    for f in files {
        let _ = writeln!(out, "wrote {}", f.display());
    }
    let _ = writeln!(
        out,
        "`cargo clippy -- -D warnings` in {dir} now refuses ambient side effects outside declared capabilities"
    );
    Ok(0)
}

/// `backstop DIR [--check]`: write, or check, the crate's `clippy.toml`.
fn backstop(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Fatal> {
    let a = parse(args, &["--check"])?;
    let [dir] = a.files(1)? else {
        unreachable!("files(1) returns one")
    };
    match scaffold::backstop(Path::new(dir), a.check) {
        Ok(path) if a.check => {
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

/// Read a JSON file; a key repeated in one object is refused (serde_json
/// would keep the last value silently, and another reader the first).
fn read_json(path: &str) -> Result<Value, Fatal> {
    let text = std::fs::read_to_string(Path::new(path))
        .map_err(|e| Fatal(format!("cannot read {path}: {e}")))?;
    match crate::dupkeys::first_duplicate_key(&text) {
        Err(e) => return Err(Fatal(format!("{path} is not JSON: {e}"))),
        Ok(Some(at)) => {
            return Err(Fatal(format!(
                "{path}: key `{at}` appears twice in its object; keep one"
            )));
        }
        Ok(None) => {}
    }
    serde_json::from_str(&text).map_err(|e| Fatal(format!("{path} is not JSON: {e}")))
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

/// Every `inputs_schema` and `outputs_schema` is itself a valid JSON Schema.
fn schemas_compile(path: &str, doc: &Value, list: &str, problems: &mut Vec<String>) {
    for v in doc
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["inputs_schema", "outputs_schema"] {
            if let Some(s) = v.get(key)
                && let Err(e) = CompiledSchema::compile(s)
            {
                problems.push(format!(
                    "{path}: `{}@{}`: {key}: {e}",
                    v.get("name").and_then(Value::as_str).unwrap_or_default(),
                    v.get("version").and_then(Value::as_str).unwrap_or_default()
                ));
            }
        }
    }
}

fn validate(args: &[String], out: &mut dyn Write) -> Result<i32, Fatal> {
    let a = parse(args, &["--capabilities", "--ops", "--agents"])?;
    let file = a.files(1)?[0];
    let registry = read_json(file)?;
    // The files an export writes beside the registry are read by default.
    let beside = |option: &str, name: &str| -> Option<String> {
        a.option(option).map(str::to_owned).or_else(|| {
            let path = Path::new(file).with_file_name(name);
            (path.is_file() && path != Path::new(file)).then(|| path.display().to_string())
        })
    };
    let catalog_file = beside("--capabilities", "capabilities.json");
    let catalog = catalog_file.as_deref().map(read_json).transpose()?;
    let ops_owned = beside("--ops", "op-registry.json");
    let ops_file = ops_owned.as_deref();
    let ops = ops_file.map(read_json).transpose()?;
    let agents_owned = beside("--agents", "agent-registry.json");
    let agents_file = agents_owned.as_deref();
    let agents = agents_file.map(read_json).transpose()?;

    let mut problems = Vec::new();
    format_problems(file, &registry, REGISTRY_SCHEMA, &mut problems);
    schemas_compile(file, &registry, "skills", &mut problems);
    if let (Some(path), Some(ops)) = (ops_file, &ops) {
        format_problems(path, ops, OP_REGISTRY_SCHEMA, &mut problems);
        schemas_compile(path, ops, "ops", &mut problems);
    }
    if let (Some(path), Some(agents)) = (agents_file, &agents) {
        format_problems(path, agents, AGENT_REGISTRY_SCHEMA, &mut problems);
    }
    // Cross rules read fields the format guarantees; after format errors they
    // would only repeat them.
    if problems.is_empty() {
        problems.extend(
            check_registry(&registry, ops.as_ref(), catalog.as_ref())
                .into_iter()
                .map(|f| format!("{file}: {f}")),
        );
        if let (Some(path), Some(agents)) = (agents_file, &agents) {
            problems.extend(
                skill_runtime::agents::check_agents(agents, Some(&registry))
                    .into_iter()
                    .map(|f| format!("{path}: {f}")),
            );
        }
    }
    if problems.is_empty() {
        let count =
            |doc: &Value, list: &str| doc.get(list).and_then(Value::as_array).map_or(0, Vec::len);
        let pipelines = registry
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|s| s.get("kind").and_then(Value::as_str) == Some("pipeline"))
            .count();
        let _ = writeln!(
            out,
            "{file}: valid ({} skills, {pipelines} pipelines{})",
            count(&registry, "skills"),
            ops.as_ref()
                .map(|o| format!(", {} ops", count(o, "ops")))
                .unwrap_or_default()
                + &agents
                    .as_ref()
                    .map(|a| format!(", {} agents", count(a, "agents")))
                    .unwrap_or_default()
        );
        return Ok(0);
    }
    for p in &problems {
        let _ = writeln!(out, "{p}");
    }
    Ok(1)
}

fn diff_cmd(args: &[String], out: &mut dyn Write) -> Result<i32, Fatal> {
    let a = parse(args, &["--json"])?;
    let files = a.files(2)?;
    let (old, new) = (read_json(files[0])?, read_json(files[1])?);
    let d = diff(&old, &new);
    if a.json {
        let _ = out.write_all(canonical(&d.to_json()).as_bytes());
    } else {
        let _ = write!(out, "{d}");
    }
    Ok(if d.ok() { 0 } else { 1 })
}

fn convert(args: &[String], out: &mut dyn Write) -> Result<i32, Fatal> {
    let a = parse(args, &["--to", "--capabilities"])?;
    let file = a.files(1)?[0];
    let registry = read_json(file)?;
    let catalog = a.option("--capabilities").map(read_json).transpose()?;
    let view = match a.option("--to") {
        Some("mcp") => views::mcp_tools(&registry, catalog.as_ref()),
        Some("openai") => views::openai_tools(&registry).map_err(|errors| {
            Fatal(
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })?,
        Some("unified") => views::unified_contracts(&registry),
        Some(other) => {
            return Err(Fatal(format!(
                "unknown view `{other}`; choose mcp, openai or unified"
            )));
        }
        None => return Err(Fatal(format!("`--to` is required\n{USAGE}"))),
    };
    let _ = out.write_all(canonical(&view).as_bytes());
    Ok(0)
}
