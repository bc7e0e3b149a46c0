//! Admit: the caller may run the skill (`reusable_by`, MCP permissions), and
//! the skill's rate limit has room, counted in this process or across a fleet.

use std::time::Duration;

use skill_core::manifest::Manifest;

use crate::exec::policy::authorize::authorize;
use crate::exec::policy::rate::{RateLimitStore, RateLimiter, Refusal};
use crate::exec::state::State;
use crate::model::error::InvokeError;
use crate::model::record::{Step, StepOutcome};

/// The job's caller may run the skill of manifest `m`.
pub(crate) fn caller(m: &Manifest, st: &mut State) -> Result<(), InvokeError> {
    if let Err(reason) = authorize(m, &st.inv.caller) {
        st.step(Step::Authorize, StepOutcome::Failed, Some(reason.clone()));
        return Err(InvokeError::Denied {
            skill: m.name.to_owned(),
            reason,
        });
    }
    st.step(Step::Authorize, StepOutcome::Passed, None);
    Ok(())
}

/// A place in the skill's own rate limiter, in this process; skipped for a
/// skill without a rate limit.
pub(crate) fn local_rate(
    m: &Manifest,
    limiter: Option<&RateLimiter>,
    st: &mut State,
) -> Result<(), InvokeError> {
    let admitted = match limiter {
        None => {
            st.step(Step::RateLimit, StepOutcome::Skipped, None);
            return Ok(());
        }
        Some(l) => l.admit(std::time::Instant::now()),
    };
    rated(m, admitted, st)
}

/// A place in the rate limit that a fleet shares (`label` is `name@version`).
pub(crate) async fn shared_rate(
    store: &dyn RateLimitStore,
    m: &Manifest,
    label: &str,
    st: &mut State,
) -> Result<(), InvokeError> {
    let max = m.rate_limit.map_or(0, |r| r.max_per_minute);
    match store.admit(label, max).await {
        Ok(()) => rated(m, Ok(()), st),
        Err(Refusal::Limited(wait)) => rated(m, Err(wait), st),
        Err(Refusal::Unavailable { store, message }) => {
            st.step(Step::RateLimit, StepOutcome::Failed, Some(message.clone()));
            Err(InvokeError::Unavailable {
                skill: m.name.to_owned(),
                store,
                message,
            })
        }
    }
}

fn rated(m: &Manifest, admitted: Result<(), Duration>, st: &mut State) -> Result<(), InvokeError> {
    match admitted {
        Ok(()) => {
            st.step(Step::RateLimit, StepOutcome::Passed, None);
            Ok(())
        }
        Err(wait) => {
            st.step(Step::RateLimit, StepOutcome::Failed, None);
            Err(InvokeError::RateLimited {
                skill: m.name.to_owned(),
                max_per_minute: m.rate_limit.map_or(0, |r| r.max_per_minute),
                retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1),
            })
        }
    }
}
