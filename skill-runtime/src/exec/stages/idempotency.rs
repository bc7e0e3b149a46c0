//! Idempotency: a job with a key (the caller's, or the default key of an
//! effectful skill) runs once; jobs with the same key get its result.

use std::sync::Arc;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::{Claim, Claimed, IdempotencyStore, idempotency_key};
use crate::exec::state::{Done, State};
use crate::model::envelope::intent_key;
use crate::model::error::InvokeError;
use crate::model::record::{Step, StepOutcome};
use crate::model::result::SkillResult;

/// The job's slot in the idempotency store: its key (the caller's; else, for a
/// job with an intent, the seed's stable key of intent, scope and payload;
/// else, when the skill is `effectful`, the default key of skill, params and
/// dry run), kept in the record, and marked for a dry run. `None` (and the
/// step skipped) when the job has no key.
pub(crate) fn slot(effectful: bool, name: &str, st: &mut State) -> Option<String> {
    let key = match (&st.job.idempotency_key, &st.inv.intent) {
        (Some(k), _) => k.clone(),
        (None, Some(intent)) => intent_key(intent, st.inv.scope.as_deref(), &st.job.params),
        (None, None) if effectful => {
            idempotency_key(name, &st.job.params, st.inv.constraints.dry_run)
        }
        (None, None) => {
            st.step(Step::Idempotency, StepOutcome::Skipped, None);
            return None;
        }
    };
    st.key = Some(key.clone());
    // A dry run and a real run of the same params are different jobs.
    Some(if st.inv.constraints.dry_run {
        format!("dry:{key}")
    } else {
        key
    })
}

/// What the store said of a job's slot.
pub(crate) enum Keyed {
    /// Run the job, then [`Claimed::finish`] with its result.
    Run(Box<dyn Claimed>),
    /// An earlier or concurrent job with the same key produced this (boxed:
    /// rare, and large).
    Replayed(Box<Result<Done, InvokeError>>),
}

/// Claim `slot` of skill `skill` (`name@version`) in `store`: the right to run
/// it, or the result of the job that ran it.
pub(crate) async fn claim(
    store: &dyn IdempotencyStore,
    skill: &str,
    slot: &str,
    st: &mut State,
) -> Keyed {
    match store.claim(skill, slot).await {
        Claim::Replay(shared) => {
            st.replayed = true;
            st.step(Step::Idempotency, StepOutcome::Replayed, None);
            Keyed::Replayed(Box::new(match &*shared {
                Ok(result) => Ok(Done {
                    result: SkillResult {
                        replayed: true,
                        ..result.clone()
                    },
                    typed: None,
                }),
                Err(e) => Err(e.clone()),
            }))
        }
        Claim::Run(claimed) => {
            st.step(Step::Idempotency, StepOutcome::Passed, None);
            Keyed::Run(claimed)
        }
    }
}

/// Publish the job's outcome to the jobs waiting on its key, and store it.
pub(crate) fn publish(
    claimed: Box<dyn Claimed>,
    done: &Result<Done, InvokeError>,
) -> BoxFuture<'static, ()> {
    let shared = match done {
        Ok(d) => Ok(d.result.clone()),
        Err(e) => Err(e.clone()),
    };
    claimed.finish(Arc::new(shared))
}
