//! Admit: the caller may run the skill (`reusable_by`, MCP permissions), and
//! the skill's rate limit has room.

use skill_core::manifest::Manifest;

use crate::exec::policy::authorize::authorize;
use crate::exec::policy::rate::RateLimiter;
use crate::exec::state::State;
use crate::model::error::InvokeError;
use crate::model::record::{Step, StepOutcome};

/// Authorize the job's caller, then take a place in the rate limit.
pub(crate) fn admit(
    m: &Manifest,
    limiter: Option<&RateLimiter>,
    st: &mut State,
) -> Result<(), InvokeError> {
    let name = m.name;
    if let Err(reason) = authorize(m, &st.inv.caller) {
        st.step(Step::Authorize, StepOutcome::Failed, Some(reason.clone()));
        return Err(InvokeError::Denied {
            skill: name.to_owned(),
            reason,
        });
    }
    st.step(Step::Authorize, StepOutcome::Passed, None);

    match limiter {
        None => st.step(Step::RateLimit, StepOutcome::Skipped, None),
        Some(l) => match l.admit(std::time::Instant::now()) {
            Ok(()) => st.step(Step::RateLimit, StepOutcome::Passed, None),
            Err(wait) => {
                let max = m.rate_limit.map_or(0, |r| r.max_per_minute);
                st.step(Step::RateLimit, StepOutcome::Failed, None);
                return Err(InvokeError::RateLimited {
                    skill: name.to_owned(),
                    max_per_minute: max,
                    retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1),
                });
            }
        },
    }
    Ok(())
}
