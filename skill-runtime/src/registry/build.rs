//! Building the registry: every skill of every linked crate, checked once and
//! sorted.
//!
//! What one macro call cannot know (duplicate names across crates, call targets,
//! catalog membership, pipelines against their targets) is checked here by the
//! registry's one rule set ([`rules::check_registry`]), run on the registry's
//! own export. Each finding names the entry it concerns; it is reported at that
//! entry's source location, and every problem is reported at once.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use skill_core::capability::CapabilityInfo;
use skill_core::manifest::{Kind, Location};

use crate::contract::capability::catalog;
use crate::contract::conditions::Conditions;
use crate::contract::entry::SkillEntry;
use crate::contract::ordered::Shape;
use crate::registry::export::{Exported, capability_json, op_json, skill_json};
use crate::registry::index::Registry;
use crate::registry::rules::finding::{At, Finding};
use crate::registry::rules::pipeline::{Closure, check_pipelines};
use crate::registry::rules::{self};
use crate::registry::skill::{RegisteredSkill, crate_of};
use crate::schema::compiled::CompiledSchema;
use crate::schema::generate::{input_schema, output_schema};

/// Everything wrong with a set of skills, one problem per line.
#[derive(Debug, thiserror::Error)]
pub struct RegistryError {
    /// Every problem found.
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
    /// The skill, op or capability concerned.
    pub subject: String,
    /// Where it was declared.
    pub location: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.subject, self.location, self.message)
    }
}

/// A skill or op on its way into the registry: what is exported of it.
struct Draft {
    entry: &'static SkillEntry,
    input_schema: Value,
    output_schema: Value,
    conditions: Conditions,
    /// `None` when the manifest's version is not semver (a finding).
    version: Option<semver::Version>,
    closure: Option<Closure>,
}

impl Draft {
    fn new(entry: &'static SkillEntry) -> Draft {
        Draft {
            entry,
            input_schema: input_schema(entry.erased.input_root),
            output_schema: output_schema(entry.erased.output_root),
            conditions: entry.erased.checks.text(),
            version: semver::Version::parse(entry.manifest.version).ok(),
            closure: None,
        }
    }

    fn is_op(&self) -> bool {
        self.entry.manifest.op.is_some()
    }

    fn exported(&self) -> Exported<'_> {
        Exported {
            entry: self.entry,
            input_schema: &self.input_schema,
            output_schema: &self.output_schema,
            conditions: &self.conditions,
            closure: self.closure.as_ref(),
        }
    }

    fn json(&self) -> Value {
        if self.is_op() {
            op_json(&self.exported())
        } else {
            skill_json(&self.exported())
        }
    }
}

impl Registry {
    /// Collect every skill and capability submitted by the crates linked into this
    /// binary, and check them.
    pub fn from_inventory() -> Result<Registry, RegistryError> {
        let entries: Vec<&'static SkillEntry> = inventory::iter::<SkillEntry>().collect();
        Registry::build(entries, catalog())
    }

    /// Check `entries` against each other and against `catalog`, compile every
    /// schema once, and sort by name then version (skills, then ops).
    pub fn build(
        entries: Vec<&'static SkillEntry>,
        catalog: Vec<&'static CapabilityInfo>,
    ) -> Result<Registry, RegistryError> {
        let mut drafts: Vec<Draft> = entries.into_iter().map(Draft::new).collect();
        drafts.sort_by(|a, b| {
            a.is_op()
                .cmp(&b.is_op())
                .then_with(|| a.entry.manifest.name.cmp(b.entry.manifest.name))
                .then_with(|| a.version.cmp(&b.version))
                .then_with(|| {
                    a.entry
                        .manifest
                        .location
                        .file
                        .cmp(b.entry.manifest.location.file)
                })
        });
        let skill_count = drafts.iter().filter(|d| !d.is_op()).count();
        let mut skills: Vec<Value> = drafts[..skill_count].iter().map(Draft::json).collect();
        let ops: Vec<Value> = drafts[skill_count..].iter().map(Draft::json).collect();
        // A pipeline's capabilities are its steps': computed, then exported.
        if drafts
            .iter()
            .any(|d| d.entry.manifest.kind == Kind::Pipeline)
        {
            let (_, mut closures) = check_pipelines(&skills, &ops);
            for (d, doc) in drafts.iter_mut().zip(&mut skills) {
                if d.entry.manifest.kind == Kind::Pipeline {
                    d.closure = closures.remove(&format!(
                        "{}@{}",
                        d.entry.manifest.name, d.entry.manifest.version
                    ));
                    *doc = d.json();
                }
            }
        }
        let capabilities: Vec<Value> = catalog.iter().map(|c| capability_json(c)).collect();
        let findings = rules::check_registry(
            &json!({ "skills": skills }),
            Some(&json!({ "ops": ops })),
            Some(&json!({ "capabilities": capabilities })),
        );

        let places = Places {
            drafts: &drafts,
            skill_count,
            catalog: &catalog,
        };
        let mut problems: Vec<Problem> = findings.into_iter().map(|f| places.problem(f)).collect();
        let mut validators = Vec::with_capacity(drafts.len());
        for d in &drafts {
            let compiled =
                [("input", &d.input_schema), ("output", &d.output_schema)].map(|(side, schema)| {
                    // A root that is not an object is a finding already.
                    if schema.get("type").and_then(Value::as_str) != Some("object") {
                        return None;
                    }
                    CompiledSchema::compile(schema)
                        .map_err(|e| problems.push(places.at(d, format!("{side} schema: {e}"))))
                        .ok()
                });
            // The input type's fields, as its decoder takes them: a type that
            // cannot be decoded in order is refused here, with the reason.
            let shape = Shape::learn(&d.input_schema, |params| d.entry.erased.decode(params))
                .map_err(|reason| problems.push(places.at(d, reason)))
                .ok();
            validators.push((compiled, shape));
        }
        let mut skills = Vec::with_capacity(drafts.len());
        for (d, ([input, output], shape)) in drafts.into_iter().zip(validators) {
            let m = d.entry.manifest;
            // A missing version, validator or shape was reported above.
            let (Some(version), Some(input), Some(output), Some(shape)) =
                (d.version, input, output, shape)
            else {
                continue;
            };
            skills.push(RegisteredSkill {
                entry: d.entry,
                conditions: d.conditions,
                input_schema: d.input_schema,
                output_schema: d.output_schema,
                input_validator: Arc::new(input),
                output_validator: Arc::new(output),
                version,
                label: Arc::from(format!("{}@{}", m.name, m.version)),
                closure: d.closure,
                takes_fields: AtomicBool::new(true),
                shape,
                #[cfg(feature = "otel")]
                succeeded: std::sync::OnceLock::new(),
            });
        }
        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        Ok(Registry::assemble(skills, catalog))
    }
}

/// Where the entries the rules name are defined.
struct Places<'a> {
    drafts: &'a [Draft],
    skill_count: usize,
    catalog: &'a [&'static CapabilityInfo],
}

impl Places<'_> {
    /// The problem a finding is, at the source location of the entry it names.
    fn problem(&self, f: Finding) -> Problem {
        let location = f.at.map(|at| self.location(at)).unwrap_or_default();
        let message = match (f.also, f.at) {
            (Some(first), Some(at)) => format!(
                "{}: {} and {}",
                f.message,
                self.described(first),
                self.described(at)
            ),
            _ => f.message,
        };
        Problem {
            subject: f.subject,
            location,
            message,
        }
    }

    /// A problem of `d` that no rule over JSON can see.
    fn at(&self, d: &Draft, message: String) -> Problem {
        let m = d.entry.manifest;
        Problem {
            subject: format!(
                "{} `{}@{}`",
                if d.is_op() { "op" } else { "skill" },
                m.name,
                m.version
            ),
            location: m.location.to_string(),
            message,
        }
    }

    fn draft(&self, at: At) -> Option<&Draft> {
        match at {
            At::Skills(i) => self.drafts[..self.skill_count].get(i),
            At::Ops(i) => self.drafts[self.skill_count..].get(i),
            At::Capabilities(_) => None,
        }
    }

    fn location(&self, at: At) -> String {
        match (at, self.draft(at)) {
            (_, Some(d)) => d.entry.manifest.location.to_string(),
            (At::Capabilities(i), _) => self
                .catalog
                .get(i)
                .map(|c| format!("{}:{}", c.file, c.line))
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// `in crate `x` at FILE:LINE:COL`, or `by `path` at FILE:LINE` for a
    /// capability.
    fn described(&self, at: At) -> String {
        match (at, self.draft(at)) {
            (_, Some(d)) => {
                let m = d.entry.manifest;
                let loc: Location = m.location;
                format!("in crate `{}` at {loc}", crate_of(m.entrypoint.module))
            }
            (At::Capabilities(i), _) => match self.catalog.get(i) {
                Some(c) => format!("by `{}` at {}:{}", c.rust_path, c.file, c.line),
                None => at.to_string(),
            },
            _ => at.to_string(),
        }
    }
}
