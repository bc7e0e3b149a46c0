//! The audit of the compiled code (feature `audit`): for every skill, op and
//! agent, the ambient effects its handler reaches in the compiled program,
//! helpers, generic instantiations and dependencies included, checked
//! against what its manifest lets it reach. `skill-registry audit` runs it.
//!
//! The vantage point is the object files of the rlibs of a normal `cargo
//! build` (the user's profile and target directory): rustc puts each
//! function and each constant in a section of its own, and every call,
//! function pointer and vtable entry is a relocation, so the program's
//! reference graph is read without rebuilding anything. See
//! docs/compile-time-checks.md for what it sees and what it does not.

mod cargo;
mod effects;
mod graph;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use serde_json::{Value, json};

pub use effects::KINDS;

use graph::{NodeId, Program};

/// The analyser's name and version, recorded with each verdict.
pub const ANALYSER: &str = concat!("skill-audit/", env!("CARGO_PKG_VERSION"));

/// What to build and audit.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The `Cargo.toml` to build (default: cargo's search from the current
    /// directory).
    pub manifest_path: Option<PathBuf>,
    /// The packages to build (default: the workspace's default members).
    pub packages: Vec<String>,
    /// Keep cargo's output unless it fails.
    pub quiet: bool,
}

/// Why an audit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// Building, linking the probe or running it failed.
    #[error("{0}")]
    Build(String),
    /// An object file could not be read.
    #[error("{0}")]
    Read(String),
}

/// One effect a handler reaches, with one path to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    /// `file_read`, `file_write`, `network`, `process`, `env` or `database`.
    pub kind: &'static str,
    /// From the handler to the effectful function.
    pub path: Vec<String>,
    /// The path goes through a vtable or a table of function pointers: the
    /// call may happen (all of a trait object's methods are counted).
    pub possible: bool,
    /// The manifest covers it (a capability or an `ambient(...)` allowance).
    pub declared: bool,
}

/// The audit of one skill, op or agent.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// `skill`, `op`, `pipeline` or `agent`.
    pub kind: String,
    /// Its name (an agent's id).
    pub name: String,
    /// Its version.
    pub version: String,
    /// `module::handler`.
    pub handler: String,
    /// The effects reached, one per kind.
    pub effects: Vec<Effect>,
    /// The handler has a body and none was found in the compiled code.
    pub missing: bool,
}

impl Verdict {
    /// The kinds reached, sorted.
    pub fn observed(&self) -> BTreeSet<&'static str> {
        self.effects.iter().map(|e| e.kind).collect()
    }

    /// The effects the manifest does not cover.
    pub fn undeclared(&self) -> impl Iterator<Item = &Effect> {
        self.effects.iter().filter(|e| !e.declared)
    }

    /// Nothing undeclared, and the code was found.
    pub fn passed(&self) -> bool {
        !self.missing && self.undeclared().next().is_none()
    }
}

/// The audit of a build.
#[derive(Clone, Debug)]
pub struct Audit {
    /// One per skill, op, pipeline and agent, sorted by kind and name.
    pub verdicts: Vec<Verdict>,
    /// Object files read, of how many the build's rlibs hold, and the
    /// functions and data sections they define.
    pub read: (usize, usize, usize),
    /// Executables that define handlers in their own crate, with those
    /// handlers' names: the audit reads libraries, so these are unchecked.
    pub unaudited: Vec<(String, Vec<String>)>,
}

impl Audit {
    /// Whether every handler stays within its manifest, and every handler
    /// was audited.
    pub fn passed(&self) -> bool {
        self.verdicts.iter().all(Verdict::passed) && self.unaudited.is_empty()
    }

    /// The audit as JSON (`skill-registry audit --json`).
    pub fn to_json(&self) -> Value {
        let effect = |e: &Effect| json!({"kind": e.kind, "path": e.path, "possible": e.possible});
        json!({
            "analyser": ANALYSER,
            "passed": self.passed(),
            "read": {"objects": self.read.0, "of": self.read.1, "sections": self.read.2},
            "unaudited": self.unaudited.iter().map(|(bin, handlers)| json!({"binary": bin, "handlers": handlers})).collect::<Vec<_>>(),
            "targets": self.verdicts.iter().map(|v| json!({
                "kind": v.kind,
                "name": v.name,
                "version": v.version,
                "handler": v.handler,
                "observed": v.observed(),
                "undeclared": v.undeclared().map(effect).collect::<Vec<_>>(),
                "effects": v.effects.iter().map(effect).collect::<Vec<_>>(),
                "missing": v.missing,
            })).collect::<Vec<_>>(),
        })
    }

    /// The audit for people: each handler that reaches beyond its manifest,
    /// with one path per kind, then a summary line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for v in &self.verdicts {
            let who = if v.kind == "capability" {
                format!("capability {}: its resource `{}`", v.name, v.handler)
            } else {
                format!("{} {} {}", v.kind, v.name, v.version)
            };
            if v.missing {
                out.push_str(&format!(
                    "{who}: no compiled code found for `{}` (a `Skill` implemented by hand, or a handler the build did not keep); cannot verify it, so it is not passed\n",
                    v.handler
                ));
            }
            for e in v.undeclared() {
                let possibly = if e.possible {
                    " (possibly, through a vtable or function table)"
                } else {
                    ""
                };
                let what = if e.kind == effects::RUNNER {
                    format!(
                        "runs skills through the runtime{possibly}, with nothing checked against its `calls(...)`; a skill runs the skills it lists through its own context"
                    )
                } else {
                    format!(
                        "reaches {}{possibly} and declares nothing covering it",
                        e.kind
                    )
                };
                out.push_str(&format!("{who}: {what}\n    {}\n", e.path.join(" -> ")));
            }
        }
        for (bin, handlers) in &self.unaudited {
            out.push_str(&format!(
                "binary `{bin}` defines {} in its own crate ({}), which the audit cannot read: it reads libraries; move them to the package's `src/lib.rs` (or a skills crate), where they are audited and exported\n",
                if handlers.len() == 1 { "a handler".to_owned() } else { format!("{} handlers", handlers.len()) },
                handlers.join(", ")
            ));
        }
        let failed = self.verdicts.iter().filter(|v| !v.passed()).count();
        let resources = self
            .verdicts
            .iter()
            .filter(|v| v.kind == "capability")
            .count();
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut verdict = Vec::new();
        if failed > 0 {
            verdict.push(format!(
                "{} beyond their manifest; declare the capability (or an `ambient(...)` allowance with its reason)",
                plural(failed, "reaches", "reach")
            ));
        }
        if !self.unaudited.is_empty() {
            verdict.push(format!(
                "{} handlers the audit cannot read",
                plural(self.unaudited.len(), "binary holds", "binaries hold")
            ));
        }
        if verdict.is_empty() {
            verdict.push("each stays within its manifest".to_owned());
        }
        out.push_str(&format!(
            "audited {} and {}: {}\n",
            plural(self.verdicts.len() - resources, "handler", "handlers"),
            plural(resources, "resource", "resources"),
            verdict.join("; ")
        ));
        out
    }

    /// Record each verdict in a `skill-registry.json` value: an `audit`
    /// object per skill with a body the audit saw (`analyser`, `observed`
    /// kinds sorted, `verdict`; a pipeline's steps carry theirs), nothing
    /// that changes between two audits of the same code. Returns how many.
    pub fn stamp(&self, registry: &mut Value) -> usize {
        let mut by_name: BTreeMap<(&str, &str), &Verdict> = BTreeMap::new();
        for v in &self.verdicts {
            by_name.insert((v.name.as_str(), v.version.as_str()), v);
        }
        let mut stamped = 0;
        if let Some(skills) = registry["skills"].as_array_mut() {
            for skill in skills {
                let key = (
                    skill["name"].as_str().unwrap_or_default().to_owned(),
                    skill["version"].as_str().unwrap_or_default().to_owned(),
                );
                if let Some(v) = by_name.get(&(key.0.as_str(), key.1.as_str()))
                    && v.kind != "pipeline"
                {
                    skill["audit"] = json!({
                        "analyser": ANALYSER,
                        "observed": v.observed(),
                        "verdict": if v.passed() { "consistent" } else { "undeclared" },
                    });
                    stamped += 1;
                }
            }
        }
        stamped
    }
}

/// `skill-registry audit`: build, audit, print (and stamp `stamp`); the exit
/// status, 1 when a handler reaches beyond its manifest.
pub fn command(
    options: &Options,
    json: bool,
    stamp: Option<&std::path::Path>,
    out: &mut dyn std::io::Write,
) -> Result<i32, String> {
    let audit = audit(options).map_err(|e| e.to_string())?;
    if let Some(file) = stamp {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let mut registry: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
        let n = audit.stamp(&mut registry);
        std::fs::write(file, skill_runtime::export::canonical(&registry))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        if !json {
            let _ = writeln!(out, "recorded {n} verdicts in {}", file.display());
        }
    }
    if json {
        let _ = writeln!(
            out,
            "{}",
            skill_runtime::export::canonical(&audit.to_json())
        );
    } else {
        let _ = write!(out, "{}", audit.render());
    }
    Ok(if audit.passed() { 0 } else { 1 })
}

/// Build what `options` names and audit every handler linked into it, and
/// every declared capability's resource type.
pub fn audit(options: &Options) -> Result<Audit, AuditError> {
    let build = cargo::build(options)?;
    let probed = cargo::targets(&build)?;
    let targets = probed["targets"].as_array().cloned().unwrap_or_default();
    let capabilities = probed["capabilities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let paths: Vec<PathBuf> = build.rlibs.iter().map(|r| r.path.clone()).collect();
    let mut program = Program::open(&paths).map_err(AuditError::Read)?;
    for (i, r) in build.rlibs.iter().enumerate() {
        if effects::RUNTIME_CRATES.contains(&r.krate.as_str()) {
            program.trust(i);
        }
    }
    let resources: Vec<String> = capabilities
        .iter()
        .filter_map(|c| c["resource"].as_str())
        .map(effects::subject)
        .collect();
    // Every node of the crates that hold handlers or resources, to find
    // their roots.
    let crates: BTreeSet<&str> = targets
        .iter()
        .filter_map(|t| t["module"].as_str())
        .chain(resources.iter().map(String::as_str))
        .filter_map(|path| path.split("::").next())
        .collect();
    let mut local = Vec::new();
    for (i, r) in build.rlibs.iter().enumerate() {
        if crates.contains(r.krate.as_str()) {
            local.extend(program.load_all(i).map_err(AuditError::Read)?);
        }
    }
    let mut roots: Vec<Vec<NodeId>> = targets
        .iter()
        .map(|t| {
            let module = t["module"].as_str().unwrap_or_default();
            let handler = t["handler"].as_str().unwrap_or_default();
            if !t["body"].as_bool().unwrap_or(true) {
                return Vec::new();
            }
            let names = HandlerNames::new(module, handler);
            local
                .iter()
                .copied()
                .filter(|n| names.hold(&program.nodes[*n].name))
                .collect()
        })
        .collect();
    // Each skill's typed code, which the runtime runs for it (its input
    // decoded, with any `deserialize_with` of its fields; its output
    // encoded), is the skill's too: found by what it calls, the handler.
    let typed: Vec<NodeId> = local
        .iter()
        .copied()
        .filter(|n| program.nodes[*n].subject() == effects::TYPED)
        .collect();
    for own in roots.iter_mut().filter(|r| !r.is_empty()) {
        for &n in &typed {
            if program.refers_to(n, own).map_err(AuditError::Read)? {
                own.push(n);
            }
        }
    }
    let all_roots: HashSet<NodeId> = roots.iter().flatten().copied().collect();
    let mut verdicts = Vec::new();
    for (t, roots) in targets.iter().zip(&roots) {
        let module = t["module"].as_str().unwrap_or_default();
        let handler = t["handler"].as_str().unwrap_or_default();
        let own: Vec<String> = strs(&t["resources"]).map(effects::subject).collect();
        let reaches = program
            .walk(roots, &all_roots, &own)
            .map_err(AuditError::Read)?;
        verdicts.push(Verdict {
            kind: t["kind"].as_str().unwrap_or("skill").to_owned(),
            name: t["name"].as_str().unwrap_or_default().to_owned(),
            version: t["version"].as_str().unwrap_or_default().to_owned(),
            handler: format!("{module}::{handler}"),
            effects: effects_of(&program, reaches, &grants(t), module, handler),
            missing: t["body"].as_bool().unwrap_or(true) && roots.is_empty(),
        });
    }
    // A resource's code is its capability's: held to the capability's
    // effect and its own allowances. Other resources are audited on their own.
    for (c, resource) in capabilities.iter().zip(&resources) {
        let roots: Vec<NodeId> = local
            .iter()
            .copied()
            .filter(|n| {
                program.nodes[*n]
                    .subject()
                    .strip_prefix(resource.as_str())
                    .is_some_and(|rest| rest.starts_with("::"))
            })
            .collect();
        let others: Vec<String> = resources
            .iter()
            .filter(|r| *r != resource)
            .cloned()
            .collect();
        let reaches = program
            .walk(&roots, &all_roots, &others)
            .map_err(AuditError::Read)?;
        let (module, ty) = resource.rsplit_once("::").unwrap_or(("", resource));
        verdicts.push(Verdict {
            kind: "capability".to_owned(),
            name: c["id"].as_str().unwrap_or_default().to_owned(),
            version: String::new(),
            handler: resource.clone(),
            effects: effects_of(&program, reaches, &grants(c), module, ty),
            missing: false,
        });
    }
    verdicts.sort_by(|a, b| (&a.kind, &a.name, &a.version).cmp(&(&b.kind, &b.name, &b.version)));
    let mut unaudited = Vec::new();
    for (krate, exe) in &build.bins {
        let handlers = cargo::handlers_in_bin(krate, exe)?;
        if !handlers.is_empty() {
            unaudited.push((krate.clone(), handlers));
        }
    }
    Ok(Audit {
        verdicts,
        read: (program.read(), program.objects, program.nodes.len()),
        unaudited,
    })
}

/// The strings of a JSON array.
fn strs(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// The kinds a probed target may reach: covered by a capability, or allowed.
fn grants(t: &Value) -> BTreeSet<&str> {
    let allowed = t["allowed"].as_object().into_iter().flat_map(|o| o.keys());
    strs(&t["may"]).chain(allowed.map(String::as_str)).collect()
}

fn effects_of(
    program: &Program,
    reaches: Vec<graph::Reach>,
    may: &BTreeSet<&str>,
    module: &str,
    handler: &str,
) -> Vec<Effect> {
    reaches
        .into_iter()
        .map(|r| Effect {
            kind: r.kind,
            path: display_path(program, &r.path, module, handler),
            possible: r.possible,
            declared: may.contains(r.kind),
        })
        .collect()
}

/// The names of the functions that are the handler `module::handler`: its
/// body (`#[skill]` moves it to `module::_::__skill_body_handler`), the
/// closures and async blocks in it, the function callers name, the
/// generated impls for its marker type (conditions, rules), and the trait
/// impls written by hand for a type of that name (a `Skill` implemented
/// without the macro).
struct HandlerNames {
    body: String,
    function: String,
    impls: String,
    marker: String,
    by_hand: String,
}

impl HandlerNames {
    fn new(module: &str, handler: &str) -> HandlerNames {
        HandlerNames {
            body: format!("{module}::_::__skill_body_{handler}"),
            function: format!("{module}::{handler}"),
            impls: format!("{module}::_::<impl "),
            marker: format!(" for {module}::{handler}>::"),
            by_hand: format!("<{module}::{handler} as "),
        }
    }

    /// Whether the function `name` is part of the handler.
    fn hold(&self, name: &str) -> bool {
        let within = |prefix: &str| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        };
        within(&self.body)
            || within(&self.function)
            || (name.starts_with(&self.impls) && name.contains(&self.marker))
            || name.starts_with(&self.by_hand)
    }
}

/// A path for people: the handler by its name, closures folded into the
/// function that holds them, vtables named as such.
fn display_path(program: &Program, path: &[NodeId], module: &str, handler: &str) -> Vec<String> {
    let body = format!("{module}::_::__skill_body_{handler}");
    let mut out: Vec<String> = Vec::new();
    for n in path {
        let node = &program.nodes[*n];
        let mut name = if node.data {
            "<vtable or function table>".to_owned()
        } else {
            node.name.replace(&body, handler)
        };
        while let Some(s) = name.strip_suffix("::{{closure}}") {
            name = s.to_owned();
        }
        if name.starts_with(&format!("{module}::_::<impl ")) || node.subject() == effects::TYPED {
            name = handler.to_owned();
        }
        if out.last() != Some(&name) {
            out.push(name);
        }
    }
    out
}
