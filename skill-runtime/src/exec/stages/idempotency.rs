//! Idempotency: a job with a key (the caller's, or the default key of an
//! effectful skill) runs once; jobs with the same key get its result.

use std::sync::Arc;

use crate::exec::policy::idempotency::{Claim, Claimed, IdempotencyStore, idempotency_key};
use crate::exec::state::{Done, State};
use crate::model::error::InvokeError;
use crate::model::record::{Step, StepOutcome};
use crate::model::result::SkillResult;

/// The job's slot in the idempotency store: its key (the caller's, else the
/// default key when the skill is `effectful`), kept in the record, and marked
/// for a dry run. `None` (and the step skipped) when the job has no key.
pub(crate) fn slot(effectful: bool, name: &str, st: &mut State) -> Option<String> {
    let key = match &st.job.idempotency_key {
        Some(k) => k.clone(),
        None if effectful => idempotency_key(name, &st.job.params, st.inv.constraints.dry_run),
        None => {
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
    Run(Claimed),
    /// An earlier or concurrent job with the same key produced this.
    Replayed(Result<Done, InvokeError>),
}

/// Claim `slot` of skill `i` in `store`: the right to run it, or the result of
/// the job that ran it.
pub(crate) async fn claim(
    store: &Arc<IdempotencyStore>,
    i: usize,
    slot: &str,
    name: &str,
    st: &mut State,
) -> Keyed {
    match store.claim(i, slot, name).await {
        Claim::Replay(shared) => {
            st.replayed = true;
            st.step(Step::Idempotency, StepOutcome::Replayed, None);
            Keyed::Replayed(match &*shared {
                Ok(result) => Ok(Done {
                    result: SkillResult {
                        replayed: true,
                        ..result.clone()
                    },
                    typed: None,
                }),
                Err(e) => Err(e.clone()),
            })
        }
        Claim::Run(claimed) => {
            st.step(Step::Idempotency, StepOutcome::Passed, None);
            Keyed::Run(claimed)
        }
    }
}

/// Publish the job's outcome to the jobs waiting on its key, and store it.
pub(crate) fn publish(claimed: Claimed, done: &Result<Done, InvokeError>) {
    let shared = match done {
        Ok(d) => Ok(d.result.clone()),
        Err(e) => Err(e.clone()),
    };
    claimed.finish(Arc::new(shared));
}
