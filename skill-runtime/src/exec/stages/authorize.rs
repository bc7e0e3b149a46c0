//! Authorize: the caller may run the skill (`reusable_by`, MCP permissions).

use skill_core::manifest::Manifest;

use crate::exec::policy::authorize::authorize;
use crate::exec::state::State;
use crate::model::error::InvokeError;
use crate::model::record::{Stage, StageOutcome};

/// The job's caller may run the skill of manifest `m`.
#[inline]
pub(crate) fn caller(m: &Manifest, st: &mut State) -> Result<(), InvokeError> {
    if let Err(reason) = authorize(m, &st.inv.caller) {
        st.step(Stage::Authorize, StageOutcome::Failed, Some(reason.clone()));
        return Err(InvokeError::Denied {
            skill: m.name.to_owned(),
            reason,
        });
    }
    st.step(Stage::Authorize, StageOutcome::Passed, None);
    Ok(())
}
