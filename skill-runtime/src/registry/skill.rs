//! One skill (or op) of a built registry: its entry, its schemas compiled, the
//! text of its conditions, and, for a pipeline, what its steps can do.

use crate::contract::boxed::Boxed;
use crate::contract::de::Input;
use crate::contract::ordered::{self, Shape};
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use std::sync::atomic::AtomicBool;

use skill_core::manifest::TargetKind;

use crate::contract::conditions::Conditions;
use crate::contract::entry::SkillEntry;
use crate::registry::rules::pipeline::Closure;
use crate::schema::compiled::{CompiledSchema, SchemaViolation};

/// One skill after the registry checked it.
pub struct RegisteredSkill {
    /// The registration.
    pub entry: &'static SkillEntry,
    /// The input schema, generated from the input type.
    pub input_schema: Value,
    /// The output schema, generated from the output type.
    pub output_schema: Value,
    /// Its conditions and rules, as registries write them.
    pub conditions: Conditions,
    pub(crate) input_validator: Arc<CompiledSchema>,
    pub(crate) output_validator: Arc<CompiledSchema>,
    pub(crate) version: semver::Version,
    pub(crate) label: Arc<str>,
    /// A pipeline's capabilities and side effects: the union over its steps.
    pub(crate) closure: Option<Closure>,
    /// Whether the input decodes from an object's list of fields (params
    /// text, `contract/de.rs`): true until its decoder asks for something
    /// else than a struct (a `#[serde(flatten)]` field asks for a map), and
    /// then the text is parsed whole from the first call on.
    pub(crate) takes_fields: AtomicBool,
    /// The input type's fields, as its decoder takes them
    /// (`contract/ordered.rs`).
    pub(crate) shape: Shape,
    /// Its `skill.job.duration` histogram for successful jobs, bound to
    /// its attributes at its first such job (`exec/trace.rs`): a job then
    /// records its duration without the attribute set being hashed.
    #[cfg(feature = "otel")]
    pub(crate) succeeded: std::sync::OnceLock<opentelemetry::metrics::BoundHistogram<f64>>,
}

impl RegisteredSkill {
    /// The input decoded from `input`, as the skill's typed code does it.
    pub(crate) fn decode(&self, input: Input<'_>) -> Result<Boxed, serde_json::Error> {
        let erased = &self.entry.erased;
        ordered::decode(&self.shape, input, |params| erased.decode(params))
    }

    /// The skill's name.
    pub fn name(&self) -> &'static str {
        self.entry.manifest.name
    }

    /// The skill's version.
    pub fn version(&self) -> &semver::Version {
        &self.version
    }

    /// Whether this is an op (`#[op]`, the op registry) rather than a skill.
    pub fn is_op(&self) -> bool {
        self.entry.manifest.op.is_some()
    }

    /// A skill or an op.
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
    pub fn input_violations(&self, input: &Value) -> Vec<SchemaViolation> {
        self.input_validator.violations(input)
    }

    /// Check `output` against the compiled output schema.
    pub fn output_violations(&self, output: &Value) -> Vec<SchemaViolation> {
        self.output_validator.violations(output)
    }
}

impl fmt::Debug for RegisteredSkill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// The crate of a Rust module path (its first segment).
pub(crate) fn crate_of(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}
