//! Running skills from JSON by name: the seam the CLI (and later MCP) calls.
//!
//! The order is the one DESIGN §7 fixes: resolve, validate input against the
//! compiled schema, preconditions, execute, validate output, postconditions,
//! validation rules. Authorization, rate limits, idempotency, approval, timeouts
//! and retries slot in between these steps without changing this API.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde_json::Value;

use crate::ctx::{Caller, Invocation, Resources};
use crate::registry::Registry;
use crate::schema::SchemaViolation;
use crate::skill::Severity;

/// Why an invocation did not produce an output. Each variant names the skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvokeError {
    #[error("unknown skill `{reference}`")]
    UnknownSkill { reference: String },
    #[error("invalid input for skill `{skill}`:{}", list(.violations))]
    InvalidInput {
        skill: String,
        violations: Vec<SchemaViolation>,
    },
    #[error("input for skill `{skill}` does not decode: {message}")]
    MalformedInput { skill: String, message: String },
    #[error("skill `{skill}` refused the input: {error_code}: {message}")]
    Precondition {
        skill: String,
        error_code: String,
        message: String,
    },
    #[error("skill `{skill}` failed with `{code}`{}: {message}", if *.retryable { " (retryable)" } else { "" })]
    Failed {
        skill: String,
        code: String,
        retryable: bool,
        message: String,
    },
    #[error("skill `{skill}` returned output that breaks its own schema:{}", list(.violations))]
    InvalidOutput {
        skill: String,
        violations: Vec<SchemaViolation>,
    },
    #[error("skill `{skill}` broke its postcondition `{assertion}`{}", .rollback_action.as_ref().map(|a| format!("; rollback action: {a}")).unwrap_or_default())]
    Postcondition {
        skill: String,
        assertion: String,
        rollback_action: Option<String>,
    },
    #[error("skill `{skill}` broke validation rule `{rule_id}`: {message}")]
    ValidationRule {
        skill: String,
        rule_id: String,
        message: String,
    },
}

fn list(violations: &[SchemaViolation]) -> String {
    violations.iter().map(|v| format!("\n  {v}")).collect()
}

/// A successful invocation: the output and the non-fatal rule notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub output: Value,
    pub notes: Vec<RuleNote>,
}

/// A validation rule of severity warning or info that did not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleNote {
    pub rule_id: &'static str,
    pub severity: Severity,
    pub message: &'static str,
}

/// Resources a registry's skills need that were not registered.
#[derive(Debug, thiserror::Error)]
pub struct MissingResources {
    /// (skill, capability id, resource type) triples.
    pub missing: Vec<(String, &'static str, &'static str)>,
}

impl fmt::Display for MissingResources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "resources are missing for declared capabilities:")?;
        for (skill, cap, ty) in &self.missing {
            writeln!(
                f,
                "  - skill `{skill}` declares `{cap}`, which needs a `{ty}` in Resources"
            )?;
        }
        Ok(())
    }
}

/// A registry plus the resources its skills' capabilities grant.
pub struct Runtime {
    registry: Arc<Registry>,
    resources: Arc<Resources>,
    next_id: AtomicU64,
}

impl Runtime {
    /// Refuses to start when a declared capability's resource is missing, so a
    /// skill never finds out at run time.
    pub fn new(registry: Arc<Registry>, resources: Resources) -> Result<Runtime, MissingResources> {
        let mut missing = Vec::new();
        for s in registry.skills() {
            for c in s.entry.manifest.capabilities {
                if c.needs_resource() && !resources.contains((c.resource)()) {
                    missing.push((format!("{s:?}"), c.id, c.resource_name));
                }
            }
        }
        if !missing.is_empty() {
            return Err(MissingResources { missing });
        }
        Ok(Runtime {
            registry,
            resources: Arc::new(resources),
            next_id: AtomicU64::new(1),
        })
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Run skill `reference` (`name` or `name@version`) on JSON `input`.
    pub async fn invoke_json(
        &self,
        reference: &str,
        input: Value,
        caller: Caller,
    ) -> Result<Outcome, InvokeError> {
        let skill = self
            .registry
            .get(reference)
            .ok_or_else(|| InvokeError::UnknownSkill {
                reference: reference.to_owned(),
            })?;
        let violations = skill.input_validator.violations(&input);
        if !violations.is_empty() {
            return Err(InvokeError::InvalidInput {
                skill: skill.name().to_owned(),
                violations,
            });
        }
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let inv = Arc::new(Invocation {
            resources: self.resources.clone(),
            caller,
            trace_id: format!("trace-{n}"),
            job_id: format!("job-{n}"),
            started_at: SystemTime::now(),
        });
        (skill.entry.invoke)(inv, input, skill.output_validator.clone()).await
    }
}
