//! The registry as a deployment's contract: the reviewed `skill-registry.json`
//! a runtime is started against, and the overlays a deployment adds.
//!
//! A binary whose skills drifted from the file that was reviewed and
//! published (a capability added, a schema changed, a version not bumped)
//! must not start as if nothing happened: [`Contract::apply`] compares every
//! exported field of every skill and op with the file's and lists each
//! difference. Overlays are what a deployment may change without a new
//! build, and they only narrow: disable a skill, lower its rate limit or
//! timeout, hide its MCP tool, require more MCP permissions, keep fewer
//! roles in `reusable_by` (or at a lower level), require a human. Anything
//! that would widen what a skill may do is refused when the contract is
//! read.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use skill_core::manifest::{
    AgentRole, Manifest, Mcp, PermissionLevel, RateLimit, Reuse, Status, granted,
};

use crate::contract::entry::SkillEntry;
use crate::registry::index::Registry;

/// The published registry a runtime must match, and the overlays it applies.
#[derive(Clone, Debug)]
pub struct Contract {
    /// Where the file came from, for messages.
    label: String,
    skills: Value,
    ops: Option<Value>,
    overlays: Vec<Overlay>,
}

/// A contract that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ContractError(String);

/// One overlay: narrowing changes, per skill (`name`, or `name@version`).
#[derive(Clone, Debug)]
struct Overlay {
    label: String,
    skills: BTreeMap<String, Change>,
}

/// What an overlay changes of one skill; every field narrows.
#[derive(Clone, Debug, Default)]
struct Change {
    disabled: bool,
    rate_limit: Option<u32>,
    timeout_ms: Option<u64>,
    hidden: bool,
    permissions: Option<Vec<String>>,
    reusable_by: Option<Vec<(AgentRole, PermissionLevel)>>,
    requires_hitl: bool,
}

impl Contract {
    /// The registry file at `path` (a `skill-registry.json`), with the
    /// `op-registry.json` beside it when there is one.
    pub fn from_file(path: &Path) -> Result<Contract, ContractError> {
        let skills = read_json(path)?;
        let ops_path = path.with_file_name("op-registry.json");
        let ops = if ops_path.is_file() && ops_path != path {
            Some(read_json(&ops_path)?)
        } else {
            None
        };
        Ok(Contract::from_json(path.display().to_string(), skills, ops))
    }

    /// A registry (and its op registry) given as values; `label` names it in
    /// messages.
    pub fn from_json(label: impl Into<String>, skills: Value, ops: Option<Value>) -> Contract {
        Contract {
            label: label.into(),
            skills,
            ops,
            overlays: Vec::new(),
        }
    }

    /// Apply the overlay file at `path` too (after the ones added before).
    pub fn overlay_file(self, path: &Path) -> Result<Contract, ContractError> {
        let value = read_json(path)?;
        self.overlay(path.display().to_string(), &value)
    }

    /// Apply the overlay `value` too; `label` names it in messages. Its
    /// shape is checked here; what it narrows, when the contract is applied.
    ///
    /// ```json
    /// {"overlay_version": "1.0.0", "skills": {
    ///   "rag_cache_purge": {"status": "disabled"},
    ///   "seo_role_audit@1.0.0": {"rate_limit": {"max_per_minute": 5}, "mcp": {"exposed": false}}
    /// }}
    /// ```
    pub fn overlay(
        mut self,
        label: impl Into<String>,
        value: &Value,
    ) -> Result<Contract, ContractError> {
        let label = label.into();
        let overlay = Overlay::read(&label, value).map_err(ContractError)?;
        self.overlays.push(overlay);
        Ok(self)
    }

    /// `registry` checked against the file, then with the overlays applied:
    /// the registry the runtime serves. Every difference between the compiled
    /// skills and the file, and every overlay that does not narrow, is listed.
    pub fn apply(&self, registry: &Arc<Registry>) -> Result<Arc<Registry>, Vec<String>> {
        let mut problems = drift(
            &self.label,
            "skill",
            list(&self.skills, "skills"),
            list(&registry.to_json(), "skills"),
        );
        if let Some(ops) = &self.ops {
            problems.extend(drift(
                &self.label,
                "op",
                list(ops, "ops"),
                list(&registry.ops_json(), "ops"),
            ));
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        if self.overlays.is_empty() {
            return Ok(registry.clone());
        }
        let mut entries: Vec<&'static SkillEntry> =
            registry.skills().iter().map(|s| s.entry).collect();
        for overlay in &self.overlays {
            for (reference, change) in &overlay.skills {
                let (name, version) = crate::model::envelope::split_reference(reference);
                let mut found = false;
                for e in entries.iter_mut() {
                    let m = e.manifest;
                    if m.op.is_some() || m.name != name || version.is_some_and(|v| v != m.version) {
                        continue;
                    }
                    found = true;
                    match change.narrow(m) {
                        Ok(narrowed) => *e = leak_entry(e, narrowed),
                        Err(why) => problems.push(format!(
                            "{}: skill `{}@{}`: {why}",
                            overlay.label, m.name, m.version
                        )),
                    }
                }
                if !found {
                    problems.push(format!(
                        "{}: `{reference}` names no skill of this registry",
                        overlay.label
                    ));
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Registry::build(entries, registry.catalog().to_vec())
            .map(Arc::new)
            .map_err(|e| vec![e.to_string()])
    }
}

/// A skill entry like `e`, with manifest `m`: made once per overlaid skill
/// when a runtime starts, and kept for the life of the process, like the
/// entries the linker collected.
fn leak_entry(e: &'static SkillEntry, m: Manifest) -> &'static SkillEntry {
    let manifest: &'static Manifest = Box::leak(Box::new(m));
    Box::leak(Box::new(SkillEntry {
        manifest,
        failure_modes: e.failure_modes,
        erased: e.erased,
    }))
}

fn leak_strs(v: &[String]) -> &'static [&'static str] {
    let strs: Vec<&'static str> = v
        .iter()
        .map(|s| &*Box::leak(s.clone().into_boxed_str()))
        .collect();
    Box::leak(strs.into_boxed_slice())
}

impl Change {
    /// `m` with this change, or why it would widen what the skill may do.
    fn narrow(&self, m: &'static Manifest) -> Result<Manifest, String> {
        let mut n = Manifest { ..*m };
        if self.disabled {
            n.status = Status::Disabled;
        }
        if let Some(limit) = self.rate_limit {
            if let Some(r) = m.rate_limit
                && limit > r.max_per_minute
            {
                return Err(format!(
                    "rate_limit {limit} a minute is over the manifest's {}; an overlay only lowers it",
                    r.max_per_minute
                ));
            }
            n.rate_limit = Some(RateLimit {
                max_per_minute: limit,
            });
        }
        if let Some(t) = self.timeout_ms {
            if t > m.execution.timeout_ms {
                return Err(format!(
                    "timeout_ms {t} is over the manifest's {}; an overlay only lowers it",
                    m.execution.timeout_ms
                ));
            }
            n.execution.timeout_ms = t;
        }
        if self.hidden {
            n.mcp = Mcp {
                exposed: false,
                ..m.mcp
            };
        }
        if let Some(p) = &self.permissions {
            let kept: BTreeSet<&str> = p.iter().map(String::as_str).collect();
            if let Some(dropped) = m.mcp.permissions.iter().find(|q| !kept.contains(**q)) {
                return Err(format!(
                    "mcp.permissions drops `{dropped}`; an overlay may require more permissions, never fewer"
                ));
            }
            n.mcp.permissions = leak_strs(p);
        }
        if let Some(r) = &self.reusable_by {
            let reuse: Vec<Reuse> = r
                .iter()
                .map(|&(agent_role, permission_level)| Reuse {
                    agent_role,
                    permission_level,
                })
                .collect();
            // Compared by what each list grants every role (and a caller
            // with none), as authorization reads them: an empty list is
            // open to every role, so it never narrows a list that names some.
            let roles = AgentRole::ALL.iter().map(|r| Some(*r)).chain([None]);
            for role in roles {
                let (before, after) = (granted(m.reusable_by, role), granted(&reuse, role));
                if after <= before {
                    continue;
                }
                let name = role.map_or("(none)", AgentRole::as_str);
                return Err(match (r.is_empty(), before) {
                    (true, _) => "reusable_by is empty, which opens the skill to every role; to close it to every role, set `\"status\": \"disabled\"`".to_owned(),
                    (false, None) => format!(
                        "reusable_by adds role `{name}`; an overlay keeps fewer roles, never more"
                    ),
                    (false, Some(b)) => format!(
                        "reusable_by raises role `{name}` from `{}` to `{}`; an overlay only lowers a level",
                        b.as_str(),
                        after.map_or("", PermissionLevel::as_str)
                    ),
                });
            }
            n.reusable_by = Box::leak(reuse.into_boxed_slice());
        }
        if self.requires_hitl {
            n.constraints.requires_hitl = true;
        }
        Ok(n)
    }
}

impl Overlay {
    fn read(label: &str, v: &Value) -> Result<Overlay, String> {
        let o = v
            .as_object()
            .ok_or_else(|| format!("{label}: an overlay is a JSON object"))?;
        for k in o.keys() {
            if !matches!(k.as_str(), "overlay_version" | "skills") {
                return Err(format!(
                    "{label}: unknown field `{k}`; an overlay has `overlay_version` and `skills`"
                ));
            }
        }
        match o.get("overlay_version").and_then(Value::as_str) {
            Some(v) if v.starts_with("1.") => {}
            other => {
                return Err(format!(
                    "{label}: `overlay_version` must be 1.x, not {}",
                    other.unwrap_or("absent")
                ));
            }
        }
        let mut skills = BTreeMap::new();
        let empty = Map::new();
        let entries = match o.get("skills") {
            None => &empty,
            Some(s) => s
                .as_object()
                .ok_or_else(|| format!("{label}: `skills` maps skill names to changes"))?,
        };
        for (reference, change) in entries {
            let change = Change::read(change)
                .map_err(|why| format!("{label}: `skills.{reference}`: {why}"))?;
            skills.insert(reference.clone(), change);
        }
        Ok(Overlay {
            label: label.to_owned(),
            skills,
        })
    }
}

impl Change {
    fn read(v: &Value) -> Result<Change, String> {
        let o = v.as_object().ok_or("a change is a JSON object")?;
        let mut c = Change::default();
        for (k, v) in o {
            match k.as_str() {
                "status" => match v.as_str() {
                    Some("disabled") => c.disabled = true,
                    _ => return Err("`status` may only be \"disabled\"".to_owned()),
                },
                "rate_limit" => {
                    c.rate_limit = Some(
                        v.get("max_per_minute")
                            .and_then(Value::as_u64)
                            .and_then(|n| u32::try_from(n).ok())
                            .filter(|&n| n >= 1)
                            .ok_or("`rate_limit` is {\"max_per_minute\": N}, N from 1")?,
                    );
                }
                "timeout_ms" => {
                    c.timeout_ms = Some(
                        v.as_u64()
                            .filter(|&n| n >= 1)
                            .ok_or("`timeout_ms` is a number of milliseconds, from 1")?,
                    );
                }
                "requires_hitl" => match v.as_bool() {
                    Some(true) => c.requires_hitl = true,
                    _ => return Err("`requires_hitl` may only be true".to_owned()),
                },
                "mcp" => {
                    let m = v.as_object().ok_or("`mcp` is an object")?;
                    for (k, v) in m {
                        match k.as_str() {
                            "exposed" => match v.as_bool() {
                                Some(false) => c.hidden = true,
                                _ => return Err("`mcp.exposed` may only be false".to_owned()),
                            },
                            "permissions" => {
                                c.permissions = Some(
                                    v.as_array()
                                        .and_then(|a| {
                                            a.iter()
                                                .map(|p| p.as_str().map(str::to_owned))
                                                .collect()
                                        })
                                        .ok_or("`mcp.permissions` is a list of strings")?,
                                );
                            }
                            other => {
                                return Err(format!(
                                    "unknown field `mcp.{other}`; an overlay sets `mcp.exposed` (false) or `mcp.permissions`"
                                ));
                            }
                        }
                    }
                }
                "reusable_by" => {
                    let list = v.as_array().ok_or("`reusable_by` is a list")?;
                    let mut r = Vec::new();
                    for e in list {
                        let role = e
                            .get("agent_role")
                            .and_then(Value::as_str)
                            .and_then(AgentRole::parse);
                        let level = e
                            .get("permission_level")
                            .and_then(Value::as_str)
                            .and_then(PermissionLevel::parse);
                        match (role, level) {
                            (Some(role), _) if r.iter().any(|(seen, _)| *seen == role) => {
                                return Err(format!(
                                    "`reusable_by` names role `{}` twice",
                                    role.as_str()
                                ));
                            }
                            (Some(role), Some(level)) => r.push((role, level)),
                            _ => {
                                return Err("`reusable_by` entries are {\"agent_role\": ..., \"permission_level\": ...}".to_owned());
                            }
                        }
                    }
                    c.reusable_by = Some(r);
                }
                other => {
                    return Err(format!(
                        "unknown field `{other}`; an overlay changes status (disabled), rate_limit, timeout_ms, requires_hitl, mcp or reusable_by, and nothing that would widen a skill"
                    ));
                }
            }
        }
        Ok(c)
    }
}

/// Every difference between the entries of a file and of the compiled
/// registry, matched by `name@version`.
fn drift(label: &str, kind: &str, file: &[Value], code: &[Value]) -> Vec<String> {
    let key = |v: &Value| {
        format!(
            "{}@{}",
            v.get("name").and_then(Value::as_str).unwrap_or_default(),
            v.get("version").and_then(Value::as_str).unwrap_or_default()
        )
    };
    let in_file: BTreeMap<String, &Value> = file.iter().map(|v| (key(v), v)).collect();
    let in_code: BTreeMap<String, &Value> = code.iter().map(|v| (key(v), v)).collect();
    let mut out = Vec::new();
    for (k, c) in &in_code {
        let Some(f) = in_file.get(k) else {
            out.push(format!(
                "{kind} `{k}` is in this binary but not in {label}: publish a registry that lists it"
            ));
            continue;
        };
        let fields: BTreeSet<&String> = object_keys(c).chain(object_keys(f)).collect();
        for field in fields {
            let (a, b) = (f.get(field.as_str()), c.get(field.as_str()));
            if a != b {
                out.push(format!(
                    "{kind} `{k}`: `{field}` differs{}: {label} has {}, this binary has {}",
                    first_difference(a, b)
                        .map(|p| format!(" at {p}"))
                        .unwrap_or_default(),
                    short(a),
                    short(b)
                ));
            }
        }
    }
    for k in in_file.keys() {
        if !in_code.contains_key(k) {
            out.push(format!("{kind} `{k}` is in {label} but not in this binary"));
        }
    }
    out
}

fn list<'a>(doc: &'a Value, key: &str) -> &'a [Value] {
    doc.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn object_keys(v: &Value) -> impl Iterator<Item = &String> {
    v.as_object().into_iter().flat_map(|o| o.keys())
}

/// The JSON pointer below which `a` and `b` first differ, when both are
/// objects or arrays.
fn first_difference(a: Option<&Value>, b: Option<&Value>) -> Option<String> {
    fn walk(a: &Value, b: &Value, at: &mut String) -> bool {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    match (x.get(k), y.get(k)) {
                        (Some(p), Some(q)) if p == q => {}
                        (Some(p), Some(q)) => {
                            at.push('/');
                            at.push_str(k);
                            return walk(p, q, at);
                        }
                        _ => {
                            at.push('/');
                            at.push_str(k);
                            return true;
                        }
                    }
                }
                false
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    if p != q {
                        at.push_str(&format!("/{i}"));
                        return walk(p, q, at);
                    }
                }
                false
            }
            _ => true,
        }
    }
    let (a, b) = (a?, b?);
    if !(a.is_object() || a.is_array()) {
        return None;
    }
    let mut at = String::new();
    (walk(a, b, &mut at) && !at.is_empty()).then_some(at)
}

/// A value for a one-line message: short ones whole, long ones by size.
fn short(v: Option<&Value>) -> String {
    match v {
        None => "nothing".to_owned(),
        Some(v) => {
            let text = v.to_string();
            if text.len() <= 120 {
                text
            } else {
                format!(
                    "{}... ({} bytes)",
                    &text[..text.floor_char_boundary(100)],
                    text.len()
                )
            }
        }
    }
}

fn read_json(path: &Path) -> Result<Value, ContractError> {
    crate::files::read_json(path).map_err(ContractError)
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.label)?;
        for o in &self.overlays {
            write!(f, " + {}", o.label)?;
        }
        Ok(())
    }
}
