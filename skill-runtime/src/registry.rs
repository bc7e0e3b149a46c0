//! The registry: every skill of every linked crate, checked once and sorted.
//!
//! What one macro call cannot know (duplicate names across crates, call targets,
//! catalog membership, schema validity) is checked here, and every problem is
//! reported, each naming the skill and where it is defined.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde_json::Value;

use crate::capability::{self, CapabilityInfo, Operation, is_capability_id};
use crate::entry::{Conditions, SkillEntry};
use crate::manifest::{Kind, Location, Status, TargetKind, is_snake_case};
use crate::rules::{self, Closure};
use crate::schema::CompiledSchema;

/// Registered names to their versions' indexes, lowest version first.
type NameMap = HashMap<&'static str, Vec<usize>, BuildHasherDefault<NameHasher>>;

/// FNV-1a, for the name lookup every job starts with. The table holds only
/// registered names, so a caller choosing lookup keys cannot lengthen its
/// chains: SipHash's flooding protection buys nothing here, and it cost more
/// than the rest of the lookup.
struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The longest description the AI-COS model allows.
pub const MAX_DESCRIPTION: usize = 200;

/// One skill after the registry checked it.
pub struct RegisteredSkill {
    pub entry: &'static SkillEntry,
    pub input_schema: Value,
    pub output_schema: Value,
    pub conditions: Conditions,
    pub(crate) input_validator: Arc<CompiledSchema>,
    pub(crate) output_validator: Arc<CompiledSchema>,
    version: semver::Version,
    label: Arc<str>,
    /// A pipeline's capabilities and side effects: the union over its steps.
    closure: Option<Closure>,
}

impl RegisteredSkill {
    pub fn name(&self) -> &'static str {
        self.entry.manifest.name
    }

    pub fn version(&self) -> &semver::Version {
        &self.version
    }

    /// Whether this is an op (`#[op]`, the op registry) rather than a skill.
    pub fn is_op(&self) -> bool {
        self.entry.manifest.op.is_some()
    }

    pub fn kind(&self) -> TargetKind {
        if self.is_op() {
            TargetKind::Op
        } else {
            TargetKind::Skill
        }
    }

    /// A pipeline's capabilities and side effects, computed from its steps.
    pub fn closure(&self) -> Option<&Closure> {
        self.closure.as_ref()
    }

    /// `name@version`.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub(crate) fn shared_label(&self) -> Arc<str> {
        self.label.clone()
    }

    /// The crate the skill is defined in (first segment of its module path).
    pub fn crate_name(&self) -> &'static str {
        crate_of(self.entry.manifest.entrypoint.module)
    }

    /// Check `input` against the compiled input schema.
    pub fn input_violations(&self, input: &Value) -> Vec<crate::schema::SchemaViolation> {
        self.input_validator.violations(input)
    }

    /// Check `output` against the compiled output schema.
    pub fn output_violations(&self, output: &Value) -> Vec<crate::schema::SchemaViolation> {
        self.output_validator.violations(output)
    }
}

impl fmt::Debug for RegisteredSkill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// `name@version` into its parts; `name` alone has no version.
pub fn split_reference(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('@') {
        Some((n, v)) => (n, Some(v)),
        None => (reference, None),
    }
}

pub(crate) fn crate_of(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// Every skill and capability, sorted, checked and with compiled schemas.
#[derive(Debug)]
pub struct Registry {
    skills: Vec<RegisteredSkill>,
    catalog: Vec<&'static CapabilityInfo>,
    /// Index into `skills` of every version of a name, lowest version first.
    by_name: NameMap,
    /// Likewise for ops (a separate namespace).
    ops_by_name: NameMap,
}

/// Everything wrong with a set of skills, one problem per line.
#[derive(Debug, thiserror::Error)]
pub struct RegistryError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "the skill registry has {n} problem{}:",
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

/// One registry problem: the skill (or capability) it concerns, where that is
/// defined, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub subject: String,
    pub location: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.subject, self.location, self.message)
    }
}

struct Problems(Vec<Problem>);

impl Problems {
    fn skill(&mut self, e: &SkillEntry, message: impl Into<String>) {
        let m = e.manifest;
        self.0.push(Problem {
            subject: format!(
                "{} `{}@{}`",
                if m.op.is_some() { "op" } else { "skill" },
                m.name,
                m.version
            ),
            location: m.location.to_string(),
            message: message.into(),
        });
    }
}

impl Registry {
    /// Collect every skill and capability submitted by the crates linked into this
    /// binary, and check them.
    pub fn from_inventory() -> Result<Registry, RegistryError> {
        let entries: Vec<&'static SkillEntry> = inventory::iter::<SkillEntry>().collect();
        Registry::build(entries, capability::catalog())
    }

    /// Check `entries` against each other and against `catalog`, compile every
    /// schema once, and sort by name then version.
    pub fn build(
        entries: Vec<&'static SkillEntry>,
        catalog: Vec<&'static CapabilityInfo>,
    ) -> Result<Registry, RegistryError> {
        let mut problems = Problems(Vec::new());
        check_catalog(&catalog, &mut problems);

        let mut skills = Vec::with_capacity(entries.len());
        for entry in entries {
            if let Some(s) = check_skill(entry, &catalog, &mut problems) {
                skills.push(s);
            }
        }
        skills.sort_by(|a: &RegisteredSkill, b| {
            a.is_op()
                .cmp(&b.is_op())
                .then_with(|| a.name().cmp(b.name()))
                .then_with(|| a.version.cmp(&b.version))
                .then_with(|| {
                    a.entry
                        .manifest
                        .location
                        .file
                        .cmp(b.entry.manifest.location.file)
                })
        });
        check_duplicates(&skills, &mut problems);
        check_cross_references(&skills, &mut problems);
        check_pipelines(&mut skills, &mut problems);

        if problems.0.is_empty() {
            let mut by_name = NameMap::default();
            let mut ops_by_name = NameMap::default();
            for (i, s) in skills.iter().enumerate() {
                let map = if s.is_op() {
                    &mut ops_by_name
                } else {
                    &mut by_name
                };
                map.entry(s.name()).or_default().push(i);
            }
            Ok(Registry {
                skills,
                catalog,
                by_name,
                ops_by_name,
            })
        } else {
            Err(RegistryError {
                problems: problems.0,
            })
        }
    }

    /// All skills, sorted by name then version, then all ops likewise.
    pub fn skills(&self) -> &[RegisteredSkill] {
        &self.skills
    }

    /// Every capability of the linked crates, sorted by id.
    pub fn catalog(&self) -> &[&'static CapabilityInfo] {
        &self.catalog
    }

    /// Resolve `name` or `name@version`; without a version, the highest one.
    pub fn get(&self, reference: &str) -> Option<&RegisteredSkill> {
        let (name, version) = split_reference(reference);
        self.index_of(name, version).ok().map(|i| &self.skills[i])
    }

    /// The index in [`Registry::skills`] of `name` at `version` (the highest
    /// version when `None`); on failure, the versions of `name` that exist (empty
    /// when there is no skill of that name).
    pub fn index_of(&self, name: &str, version: Option<&str>) -> Result<usize, Vec<String>> {
        self.index_of_kind(TargetKind::Skill, name, version)
    }

    /// [`Registry::index_of`] for a skill or an op.
    pub fn index_of_kind(
        &self,
        kind: TargetKind,
        name: &str,
        version: Option<&str>,
    ) -> Result<usize, Vec<String>> {
        let map = match kind {
            TargetKind::Skill => &self.by_name,
            TargetKind::Op => &self.ops_by_name,
        };
        let Some(versions) = map.get(name) else {
            return Err(Vec::new());
        };
        let found = match version {
            None => versions.last().copied(),
            // The version as written in the manifest (what exports and MCP
            // routes carry) matches without parsing; other spellings of the
            // same version (`1.0.0+build`) go through semver.
            Some(v) => versions
                .iter()
                .copied()
                .find(|&i| self.skills[i].entry.manifest.version == v)
                .or_else(|| {
                    let v = semver::Version::parse(v).ok()?;
                    versions
                        .iter()
                        .copied()
                        .find(|&i| self.skills[i].version == v)
                }),
        };
        found.ok_or_else(|| {
            versions
                .iter()
                .map(|&i| self.skills[i].version.to_string())
                .collect()
        })
    }

    /// The names of the crates that contributed at least one skill or capability.
    pub fn contributing_crates(&self) -> BTreeSet<&'static str> {
        let mut crates: BTreeSet<&'static str> = self
            .skills
            .iter()
            .map(RegisteredSkill::crate_name)
            .collect();
        crates.extend(self.catalog.iter().map(|c| crate_of(c.rust_path)));
        crates
    }
}

/// Capability ids are `domain.verb` and name exactly one capability type.
fn check_catalog(catalog: &[&'static CapabilityInfo], problems: &mut Problems) {
    let mut seen: BTreeMap<&str, &CapabilityInfo> = BTreeMap::new();
    for c in catalog {
        let loc = format!("{}:{}", c.file, c.line);
        if !is_capability_id(c.id) {
            problems.0.push(Problem {
                subject: format!("capability `{}`", c.rust_path),
                location: loc.clone(),
                message: format!("id `{}` is not of the form `domain.verb`", c.id),
            });
        }
        if let Some(first) = seen.insert(c.id, c)
            && first.rust_path != c.rust_path
        {
            problems.0.push(Problem {
                subject: format!("capability `{}`", c.id),
                location: loc,
                message: format!(
                    "declared twice: by `{}` at {}:{} and by `{}`",
                    first.rust_path, first.file, first.line, c.rust_path
                ),
            });
        }
    }
}

/// The rules of one skill on its own, then its schemas.
fn check_skill(
    entry: &'static SkillEntry,
    catalog: &[&'static CapabilityInfo],
    problems: &mut Problems,
) -> Option<RegisteredSkill> {
    let m = entry.manifest;
    let before = problems.0.len();
    if !is_snake_case(m.name) {
        problems.skill(entry, format!("name `{}` is not snake_case", m.name));
    }
    let version = match semver::Version::parse(m.version) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.skill(entry, format!("version `{}` is not semver: {e}", m.version));
            None
        }
    };
    if m.description.trim().is_empty() {
        problems.skill(entry, "description is empty");
    } else if m.description.chars().count() > MAX_DESCRIPTION {
        problems.skill(
            entry,
            format!("description is longer than {MAX_DESCRIPTION} characters"),
        );
    }
    match (m.kind, m.steps.is_empty()) {
        (Kind::Pipeline, true) => problems.skill(entry, "a pipeline needs at least one step"),
        (Kind::Logic, false) => problems.skill(
            entry,
            "only pipeline skills have steps; declare it with #[pipeline]",
        ),
        _ => {}
    }
    match (m.status, &m.deprecation) {
        (Status::Deprecated, None) => problems.skill(
            entry,
            "status is `deprecated` but there is no deprecation metadata",
        ),
        (Status::Enabled | Status::Disabled, Some(_)) => problems.skill(
            entry,
            "has deprecation metadata but its status is not `deprecated`",
        ),
        (_, Some(d)) => {
            if let Some(v) = d.removal_version
                && semver::Version::parse(v).is_err()
            {
                problems.skill(entry, format!("removal_version `{v}` is not semver"));
            }
        }
        _ => {}
    }

    for c in m.capabilities {
        if !catalog
            .iter()
            .any(|k| k.id == c.id && k.rust_path == c.rust_path)
        {
            problems.skill(
                entry,
                format!(
                    "capability `{}` ({}) is not in the capability catalog; is the crate that declares it linked?",
                    c.id, c.rust_path
                ),
            );
        }
        if c.is_effectful() && !m.side_effects.iter().any(|s| s.capability.id == c.id) {
            problems.skill(
                entry,
                format!(
                    "capability `{}` changes the world ({} {}) but is not listed in side_effects",
                    c.id,
                    c.effect.as_str(),
                    c.operation.as_str()
                ),
            );
        }
    }
    for s in m.side_effects {
        if !m.capabilities.iter().any(|c| c.id == s.capability.id) {
            problems.skill(
                entry,
                format!(
                    "side effect `{}` is not among the declared capabilities",
                    s.capability.id
                ),
            );
        }
        if s.capability.operation == Operation::Delete
            && !s.reversible
            && !m.constraints.is_destructive
        {
            problems.skill(
                entry,
                format!(
                    "side effect `{}` is an irreversible delete but the skill is not marked destructive",
                    s.capability.id
                ),
            );
        }
    }

    let mut codes = BTreeSet::new();
    for f in entry.failure_modes {
        if !is_snake_case(f.code) {
            problems.skill(
                entry,
                format!("failure mode code `{}` is not snake_case", f.code),
            );
        }
        if !codes.insert(f.code) {
            problems.skill(
                entry,
                format!("failure mode code `{}` appears twice", f.code),
            );
        }
    }
    if m.mcp.exposed && m.op.is_some() {
        problems.skill(
            entry,
            "ops are not served over MCP; expose a skill that calls the op",
        );
    } else if m.mcp.exposed {
        let tool = m.mcp.tool_name.unwrap_or(m.name);
        if !is_mcp_tool_name(tool) {
            problems.skill(
                entry,
                format!("MCP tool name `{tool}` must be 1 to 128 of A-Z a-z 0-9 _ - ."),
            );
        }
    }

    let input_schema = crate::schema::input_schema(entry.erased.input_root);
    let output_schema = crate::schema::output_schema(entry.erased.output_root);
    let input_validator = compile(entry, "input", &input_schema, problems);
    let output_validator = compile(entry, "output", &output_schema, problems);
    for (side, fields, schema) in [
        ("input", m.redaction.inputs, &input_schema),
        ("output", m.redaction.outputs, &output_schema),
    ] {
        for field in fields {
            if schema.pointer(&format!("/properties/{field}")).is_none() {
                problems.skill(
                    entry,
                    format!(
                        "redacted {side} field `{field}` is not a property of the {side} schema"
                    ),
                );
            }
        }
    }
    if problems.0.len() > before {
        return None;
    }
    Some(RegisteredSkill {
        entry,
        conditions: entry.erased.conditions(),
        input_schema,
        output_schema,
        input_validator: Arc::new(input_validator?),
        output_validator: Arc::new(output_validator?),
        label: Arc::from(format!("{}@{}", m.name, m.version)),
        version: version?,
        closure: None,
    })
}

/// MCP's tool naming rule: 1 to 128 characters of `A-Za-z0-9_-.`.
pub fn is_mcp_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn compile(
    entry: &SkillEntry,
    side: &str,
    schema: &Value,
    problems: &mut Problems,
) -> Option<CompiledSchema> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.skill(
            entry,
            format!(
                "the {side} type must serialize to a JSON object (a struct with named fields); its schema is {schema}"
            ),
        );
        return None;
    }
    match CompiledSchema::compile(schema) {
        Ok(c) => Some(c),
        Err(e) => {
            problems.skill(entry, format!("{side} schema: {e}"));
            None
        }
    }
}

/// No two skills share a name and version; the error names both definitions.
fn check_duplicates(skills: &[RegisteredSkill], problems: &mut Problems) {
    for pair in skills.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.is_op() == b.is_op() && a.name() == b.name() && a.version == b.version {
            let (la, lb): (Location, Location) =
                (a.entry.manifest.location, b.entry.manifest.location);
            problems.skill(
                b.entry,
                format!(
                    "defined twice: in crate `{}` at {la} and in crate `{}` at {lb}",
                    a.crate_name(),
                    b.crate_name()
                ),
            );
        }
    }
}

/// Pipeline steps against the skills they target (the rules over the exported
/// JSON, shared with `skill-registry validate`), and each pipeline's closure.
fn check_pipelines(skills: &mut [RegisteredSkill], problems: &mut Problems) {
    if skills
        .iter()
        .all(|s| s.entry.manifest.kind != Kind::Pipeline)
    {
        return;
    }
    let docs: Vec<Value> = skills
        .iter()
        .filter(|s| !s.is_op())
        .map(crate::export::skill_json)
        .collect();
    let ops: Vec<Value> = skills
        .iter()
        .filter(|s| s.is_op())
        .map(crate::export::op_json)
        .collect();
    let (findings, mut closures) = rules::check_pipelines(&docs, &ops);
    for f in findings {
        let at = skills
            .iter()
            .find(|s| f.subject == format!("pipeline `{}`", s.label()));
        match at {
            Some(s) => problems.skill(s.entry, f.message),
            None => problems.0.push(Problem {
                subject: f.subject,
                location: String::new(),
                message: f.message,
            }),
        }
    }
    for s in skills.iter_mut() {
        s.closure = closures.remove(s.label());
    }
}

/// Call targets and `replaced_by` name skills that exist; exposed MCP tool names
/// are unique.
fn check_cross_references(skills: &[RegisteredSkill], problems: &mut Problems) {
    let exists = |kind: TargetKind, name: &str, version: Option<&str>| {
        skills.iter().any(|s| {
            s.kind() == kind
                && s.name() == name
                && version.is_none_or(|v| semver::Version::parse(v).is_ok_and(|v| v == s.version))
        })
    };
    let mut tools: BTreeMap<&str, &RegisteredSkill> = BTreeMap::new();
    for s in skills {
        let m = s.entry.manifest;
        for t in m.call_targets {
            if !exists(t.kind, t.name, t.version) {
                problems.skill(
                    s.entry,
                    format!(
                        "call target {} `{}{}` is not in the registry; is its crate linked?",
                        t.kind.as_str(),
                        t.name,
                        t.version.map(|v| format!("@{v}")).unwrap_or_default()
                    ),
                );
            }
        }
        if let Some(d) = &m.deprecation
            && let Some(r) = d.replaced_by
            && !exists(s.kind(), r, None)
        {
            problems.skill(
                s.entry,
                format!("replaced_by names skill `{r}`, which is not in the registry"),
            );
        }
        if m.mcp.exposed {
            let tool = m.mcp.tool_name.unwrap_or(m.name);
            if let Some(other) = tools.insert(tool, s)
                && other.name() != s.name()
            {
                problems.skill(
                    s.entry,
                    format!(
                        "MCP tool name `{tool}` is also used by skill `{}` at {}",
                        other.name(),
                        other.entry.manifest.location
                    ),
                );
            }
        }
    }
}
