//! Approval: a skill that requires a human (`requires_hitl`) or is destructive
//! runs only when a person said yes: the one whose decision the job's watcher
//! carries, else the runtime's approver.

use crate::exec::policy::approval::{Approval, ApprovalRequest, Approver};
use crate::exec::redact::redacted;
use crate::exec::state::State;
use crate::model::approval::Decision;
use crate::model::error::InvokeError;
use crate::model::record::{Stage, StageOutcome};
use crate::registry::skill::RegisteredSkill;

/// Take the decision the job's watcher carries, else ask `approver`; a
/// denial is the job's error. `reason` says why approval is needed
/// (`requires_hitl`, `destructive`, or both).
pub(crate) async fn approval(
    approver: &dyn Approver,
    skill: &RegisteredSkill,
    reason: &'static str,
    st: &mut State,
) -> Result<(), InvokeError> {
    let m = skill.entry.manifest;
    if let Some(decision) = st.inv.watch.decision.clone() {
        return decided(decision, skill, reason, st);
    }
    // The person sees the params as a value (text that decoded is JSON).
    let _ = st.parse_params();
    let request = ApprovalRequest {
        skill: skill.label().to_owned(),
        job_id: st.inv.job_id.clone(),
        reason: reason.to_owned(),
        params: redacted(&st.target.params, m.redaction.inputs),
        dry_run: st.inv.constraints.dry_run,
        caller: st.inv.caller.clone(),
    };
    match approver.approve(&request).await {
        Approval::Approved { by } => {
            st.step(
                Stage::Approval,
                StageOutcome::Passed,
                Some(format!("approved by {by}")),
            );
            st.approval = Some(Box::new(Decision::approved(by)));
            Ok(())
        }
        Approval::Denied { reason: detail } => {
            st.step(Stage::Approval, StageOutcome::Failed, Some(detail.clone()));
            Err(InvokeError::NotApproved {
                skill: m.name.to_owned(),
                reason: reason.to_owned(),
                detail,
            })
        }
    }
}

/// Apply a decision made outside the job.
fn decided(
    decision: Decision,
    skill: &RegisteredSkill,
    reason: &'static str,
    st: &mut State,
) -> Result<(), InvokeError> {
    let detail = decision.to_string();
    let skill = skill.entry.manifest.name.to_owned();
    let reason = reason.to_owned();
    match decision {
        Decision::Approved { .. } => {
            st.step(Stage::Approval, StageOutcome::Passed, Some(detail));
            st.approval = Some(Box::new(decision));
            Ok(())
        }
        Decision::Denied { .. } => {
            st.step(Stage::Approval, StageOutcome::Failed, Some(detail.clone()));
            Err(InvokeError::NotApproved {
                skill,
                reason,
                detail,
            })
        }
        Decision::Expired { deadline } => {
            st.step(Stage::Approval, StageOutcome::Failed, Some(detail));
            Err(InvokeError::ApprovalExpired {
                skill,
                reason,
                deadline,
            })
        }
    }
}
