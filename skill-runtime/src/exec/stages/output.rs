//! Output: the job within its budgets, the output valid against its schema,
//! the postconditions (a rollback action when one breaks) and the validation
//! rules; then the result.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::contract::boxed::Boxed;
use crate::contract::de::Input;
use crate::contract::evaluate::CheckFailed;
use crate::contract::invocation::{Report, Resources};
use crate::exec::clock;
use crate::exec::policy::rollback::{Rollback, RollbackRequest};
use crate::exec::stages::errors::{
    check_error, check_error_with, mismatch, over_budget, passed_unless_empty, rollback_action,
};
use crate::exec::stages::execute::CatchUnwind;
use crate::exec::state::State;
use crate::model::data::Data;
use crate::model::error::InvokeError;
use crate::model::error::RollbackError;
use crate::model::record::{RuleNote, Stage, StageOutcome};
use crate::model::result::{Metrics, NextAction, SkillResult};
use crate::registry::skill::RegisteredSkill;
use crate::schema::compiled::SchemaViolation;

/// The execute step, passed when the handler's successful attempt ended.
#[inline]
pub(crate) fn executed(st: &mut State) {
    let end = st.executed.take().unwrap_or_else(clock::now);
    st.step_at(Stage::Execute, StageOutcome::Passed, None, end);
}

/// The tokens, documents and cost the handler reported, within the job's
/// budgets (a handler that crossed one was stopped at its next await; one
/// that returned first fails here all the same).
#[inline]
pub(crate) fn budget(
    skill: &RegisteredSkill,
    report: &Report,
    st: &mut State,
) -> Result<(), InvokeError> {
    let within = match st.inv.over_budget(report) {
        Some(over) => Err(over_budget(skill, over)),
        None => Ok(()),
    };
    st.settle(Stage::Budget, within)
}

/// The handler's output as JSON, valid against the output schema.
pub(crate) fn encode(
    skill: &RegisteredSkill,
    output: &Boxed,
    st: &mut State,
) -> Result<Data, InvokeError> {
    let data = valid_output(skill, output);
    st.settle(Stage::ValidateOutput, data)
}

fn valid_output(skill: &RegisteredSkill, output: &Boxed) -> Result<Data, InvokeError> {
    let name = skill.name();
    let data = match skill.entry.erased.encode(output) {
        Some(Ok(data)) => data,
        Some(Err(err)) => {
            return Err(InvokeError::InvalidOutput {
                skill: name.to_owned(),
                violations: vec![SchemaViolation {
                    instance_path: String::new(),
                    schema_path: String::new(),
                    message: format!("the output does not serialize to JSON: {err}"),
                }],
            });
        }
        None => return Err(mismatch(name)),
    };
    // The output was serialized from the handler's value: only what its
    // type does not guarantee is checked (on the value, parsed only then).
    if !skill.output_validator.implied_by_type()
        && !skill.output_validator.is_valid_for_type(data.value())
    {
        return Err(InvokeError::InvalidOutput {
            skill: name.to_owned(),
            violations: skill.output_validator.violations(data.value()),
        });
    }
    Ok(data)
}

/// How the postconditions and validation rules went.
pub(crate) enum After {
    /// Every check held but rules below error severity, noted here.
    Held(Vec<RuleNote>),
    /// A postcondition or an error-severity rule broke; the rollback
    /// action, if any, is due.
    Broke {
        failed: CheckFailed,
        action: Option<&'static str>,
    },
}

/// The postconditions, then the validation rules, over the input and the
/// output. A broken postcondition or rule of severity error is for the
/// caller to roll back (an await, which this does not do, so the job's
/// future stays small), and is the job's error.
#[inline]
pub(crate) fn after(
    skill: &RegisteredSkill,
    output: &Boxed,
    st: &mut State,
) -> Result<After, InvokeError> {
    let e = &skill.entry.erased;
    let name = skill.name();
    if !e.checks.any_after() {
        st.skip(Stage::Postconditions);
        st.skip(Stage::ValidationRules);
        return Ok(After::Held(Vec::new()));
    }
    // The handler consumed its input: decoded again only for checks that
    // read it.
    let input = match e.checks.after_reads_input() {
        true => {
            let params = st.parse_params().map_err(|_| mismatch(name))?;
            Some(
                skill
                    .decode(Input::Value(params))
                    .map_err(|_| mismatch(name))?,
            )
        }
        false => None,
    };
    let mut failed_rules = Vec::new();
    match e.checks.after(input.as_ref(), output, &mut failed_rules) {
        Ok(()) => {}
        Err(f @ CheckFailed::Postcondition(p)) => {
            // Its own action, else the skill's: `#[skill]` refuses a skill
            // with side effects that declares none.
            let action = skill.conditions.postconditions[p]
                .rollback_action
                .or_else(|| rollback_action(skill));
            return Ok(After::Broke { failed: f, action });
        }
        Err(f @ CheckFailed::Rule(_)) => {
            // A rejected output is undone like one a postcondition broke.
            st.step(Stage::Postconditions, StageOutcome::Passed, None);
            return Ok(After::Broke {
                failed: f,
                action: rollback_action(skill),
            });
        }
        Err(f) => return Err(check_error(skill, f, None)),
    }
    let c = &skill.conditions;
    st.step(
        Stage::Postconditions,
        passed_unless_empty(&c.postconditions),
        None,
    );
    let notes = failed_rules
        .into_iter()
        .map(|r| {
            let r = &c.validation_rules[r];
            RuleNote {
                rule_id: Cow::Borrowed(r.rule_id),
                severity: r.severity,
                message: Cow::Borrowed(r.message),
            }
        })
        .collect();
    st.step(
        Stage::ValidationRules,
        passed_unless_empty(&c.validation_rules),
        None,
    );
    Ok(After::Held(notes))
}

/// A broken postcondition or error-severity rule: the rollback action run
/// (when there is one), the step failed, and the error that says both.
pub(crate) async fn roll_back(
    rollbacks: &HashMap<String, Arc<dyn Rollback>>,
    resources: &Resources,
    skill: &RegisteredSkill,
    (failed, action): (CheckFailed, Option<&'static str>),
    data: &Value,
    st: &mut State,
) -> InvokeError {
    let rollback = match action {
        Some(a) => {
            // The rollback reads the params as a value.
            let _ = st.parse_params();
            let request = RollbackRequest {
                skill: skill.label(),
                action: a,
                job_id: &st.inv.job_id,
                input: &st.target.params,
                output: data,
                resources,
            };
            Some(run_rollback(rollbacks, request).await)
        }
        None => None,
    };
    let step = match failed {
        CheckFailed::Rule(_) => Stage::ValidationRules,
        _ => Stage::Postconditions,
    };
    st.step(step, StageOutcome::Failed, None);
    check_error_with(skill, failed, rollback, Some(data))
}

async fn run_rollback(
    rollbacks: &HashMap<String, Arc<dyn Rollback>>,
    request: RollbackRequest<'_>,
) -> Result<(), RollbackError> {
    let action = request.action;
    let Some(handler) = rollbacks.get(action) else {
        // `build` refuses to start without it.
        return Err(RollbackError::new(format_args!(
            "no handler for rollback action `{action}`"
        )));
    };
    match CatchUnwind(handler.rollback(request)).await {
        Ok(r) => r,
        Err(panic) => Err(RollbackError::new(format_args!(
            "the rollback action panicked: {panic}"
        ))),
    }
}

/// The result of a job that passed every step.
pub(crate) fn result(
    skill: &RegisteredSkill,
    data: Data,
    report: Report,
    notes: Vec<RuleNote>,
    st: &State,
) -> SkillResult {
    SkillResult {
        success: true,
        job_id: st.inv.job_id.clone(),
        trace_id: st.inv.trace_id.clone(),
        skill: skill.shared_label(),
        data,
        artifacts: report.artifacts,
        metrics: Metrics {
            // Set by `finish`, which reads the clock once for the record too.
            duration_ms: 0,
            items_processed: report.items,
            tokens_used: report.tokens,
            docs_retrieved: report.docs,
            cost: report.cost,
            attempts: st.attempts.len() as u32,
        },
        next_action: report.next_action.unwrap_or(NextAction::Complete),
        notes,
        started_at: st.started_at,
        replayed: false,
        pipeline_steps: if st.pipeline_steps.is_empty() {
            Vec::new()
        } else {
            st.pipeline_steps.clone()
        },
        approval: st.approval.clone(),
    }
}
