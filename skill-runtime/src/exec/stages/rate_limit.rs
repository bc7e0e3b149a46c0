//! Rate limit: the skill's rate limit has room, counted in this process or
//! across a fleet.

use std::time::Duration;

use skill_core::manifest::Manifest;

use crate::exec::policy::rate::{RateLimitStore, RateLimiter, Refusal};
use crate::exec::state::State;
use crate::model::error::InvokeError;
use crate::model::record::{Stage, StageOutcome};

/// A place in the skill's own rate limiter, in this process; skipped for a
/// skill without a rate limit.
#[inline]
pub(crate) fn local_rate(
    m: &Manifest,
    limiter: Option<&RateLimiter>,
    st: &mut State,
) -> Result<(), InvokeError> {
    let admitted = match limiter {
        None => {
            st.skip(Stage::RateLimit);
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
            st.step(
                Stage::RateLimit,
                StageOutcome::Failed,
                Some(message.clone()),
            );
            Err(InvokeError::Unavailable {
                skill: m.name.to_owned(),
                store,
                message,
            })
        }
    }
}

fn rated(m: &Manifest, admitted: Result<(), Duration>, st: &mut State) -> Result<(), InvokeError> {
    let admitted = admitted.map_err(|wait| InvokeError::RateLimited {
        skill: m.name.to_owned(),
        max_per_minute: m.rate_limit.map_or(0, |r| r.max_per_minute),
        retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1),
    });
    st.settle(Stage::RateLimit, admitted)
}
