//! Expiry: a job past its `expiresAt` is not run; its record says `expired`.

use std::time::SystemTime;

use crate::exec::state::State;
use crate::model::error::InvokeError;
use crate::model::record::{Stage, StageOutcome};
use crate::model::time::format_time;

/// Refuse the job when its `expiresAt` has passed. A job without one has no
/// expiry step in its record.
#[inline]
pub(crate) fn check(skill: &str, st: &mut State) -> Result<(), InvokeError> {
    let Some(at) = st.target.expires_at else {
        return Ok(());
    };
    if at > SystemTime::now() {
        st.step(Stage::Expiry, StageOutcome::Passed, None);
        return Ok(());
    }
    let expired_at = format_time(at);
    st.step(
        Stage::Expiry,
        StageOutcome::Failed,
        Some(format!("expired at {expired_at}")),
    );
    Err(InvokeError::Expired {
        skill: skill.to_owned(),
        expired_at,
    })
}
