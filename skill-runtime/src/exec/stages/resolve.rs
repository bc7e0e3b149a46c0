//! Resolve: the skill (or op) a job names, at the version it asks for or the
//! highest, or the skill that serves its intent; a disabled skill does not
//! run, a deprecated one runs and says so.

use std::borrow::Cow;

use skill_core::manifest::{Sandbox, Status, TargetKind};
use skill_core::names::did_you_mean;

use crate::exec::state::State;
use crate::model::envelope::scope_rule;
use crate::model::error::InvokeError;
use crate::model::record::{Stage, StageOutcome};
use crate::registry::index::Registry;

/// The index in `registry` of the skill the job names.
#[inline]
pub(crate) fn resolve(registry: &Registry, st: &mut State) -> Result<usize, InvokeError> {
    if st.from_handler {
        st.step(Stage::Resolve, StageOutcome::Failed, None);
        return Err(InvokeError::Denied {
            skill: st.target.reference(st.inv.intent.as_deref()),
            reason: "the job was started through a runtime while a skill's handler runs: a handler runs other skills through its own context (`other(&ctx, input)`, for the skills it lists in `calls(...)`), never through a runtime, which would run any skill with no `calls(...)` checked".to_owned(),
        });
    }
    if let Err(message) = scope_rule(st.inv.intent.as_deref(), st.inv.scope.as_deref()) {
        st.step(Stage::Resolve, StageOutcome::Failed, None);
        return Err(InvokeError::InvalidEnvelope {
            skill: st.target.reference(None),
            message,
        });
    }
    if st.target.skill.is_empty() {
        return by_intent(registry, st);
    }
    let job = &st.target;
    let found = registry.index_of_kind(job.kind, &job.skill, job.version.as_deref());
    let i = match found {
        Ok(i) => i,
        Err(known) => {
            let e = match (&job.version, known.is_empty()) {
                (Some(v), false) => InvokeError::UnknownVersion {
                    skill: job.skill.to_string(),
                    version: v.to_string(),
                    known,
                },
                _ => InvokeError::UnknownSkill {
                    reference: job.reference(None),
                    hint: hint(registry, job.kind, &job.skill),
                },
            };
            st.step(Stage::Resolve, StageOutcome::Failed, None);
            return Err(e);
        }
    };
    status(registry, i, st)
}

/// What a caller naming no registered `name` may have meant: the same name
/// of the other kind (an op named as a skill), or a close name of its kind.
fn hint(registry: &Registry, kind: TargetKind, name: &str) -> String {
    let other = match kind {
        TargetKind::Skill => TargetKind::Op,
        TargetKind::Op => TargetKind::Skill,
    };
    if registry.index_of_kind(other, name, None).is_ok() {
        return match other {
            TargetKind::Op => format!(
                "; `{name}` is an op: run it as one (`invoke --op`, or `\"kind\": \"op\"` in a job envelope)"
            ),
            TargetKind::Skill => format!("; `{name}` is a skill, not an op"),
        };
    }
    let names: Vec<&str> = registry
        .skills()
        .iter()
        .filter(|s| s.is_op() == (kind == TargetKind::Op))
        .map(|s| s.name())
        .collect();
    did_you_mean(name, &names)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// The skill that serves the job's intent, named in the job from then on.
fn by_intent(registry: &Registry, st: &mut State) -> Result<usize, InvokeError> {
    let found = match st.inv.intent.as_deref() {
        None => Err(InvokeError::NoTarget),
        Some(intent) => {
            registry
                .index_of_intent(intent)
                .ok_or_else(|| InvokeError::UnknownIntent {
                    intent: intent.to_owned(),
                })
        }
    };
    match found {
        Ok(i) => {
            st.target.skill = Cow::Borrowed(registry.skills()[i].name());
            status(registry, i, st)
        }
        Err(e) => {
            st.step(Stage::Resolve, StageOutcome::Failed, None);
            Err(e)
        }
    }
}

/// A resolved skill runs unless it is disabled, or declared to run in a
/// sandbox (the ADR's `sandbox_type` DOCKER or WASM): this runtime runs
/// handlers in its own process, and one that must be isolated is refused
/// rather than run without its isolation. A deprecated one runs and says so.
#[inline]
fn status(registry: &Registry, i: usize, st: &mut State) -> Result<usize, InvokeError> {
    st.skill = Some(i);
    let m = registry.skills()[i].entry.manifest;
    let sandbox = m.constraints.sandbox_type;
    if sandbox != Sandbox::Local {
        st.step(
            Stage::Resolve,
            StageOutcome::Failed,
            Some(format!("sandbox {}", sandbox.as_str())),
        );
        return Err(InvokeError::SandboxUnavailable {
            skill: m.name.to_owned(),
            sandbox: sandbox.as_str(),
        });
    }
    match m.status {
        Status::Disabled => {
            st.step(
                Stage::Resolve,
                StageOutcome::Failed,
                Some("disabled".into()),
            );
            Err(InvokeError::Disabled {
                skill: m.name.to_owned(),
            })
        }
        Status::Deprecated => {
            let detail = match m.deprecation.and_then(|d| d.replaced_by) {
                Some(r) => format!("deprecated; replaced by `{r}`"),
                None => "deprecated".to_owned(),
            };
            st.step(Stage::Resolve, StageOutcome::Passed, Some(detail));
            Ok(i)
        }
        Status::Enabled => {
            st.step(Stage::Resolve, StageOutcome::Passed, None);
            Ok(i)
        }
    }
}
