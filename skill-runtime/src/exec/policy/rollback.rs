//! Rollback actions: what undoes a skill's work when its postcondition fails.

use serde_json::Value;

use crate::contract::invocation::Resources;
use crate::exec::policy::BoxFuture;
use crate::model::error::RollbackError;

/// Undoes what a skill did when its postcondition fails (the AI-COS
/// `rollback_action`). Registered by action name with
/// [`RuntimeBuilder::rollback`](crate::exec::runtime::RuntimeBuilder::rollback).
/// A plain function `fn(RollbackRequest) -> Result<(), RollbackError>` is one.
pub trait Rollback: Send + Sync + 'static {
    /// Undo what the job in `request` did.
    fn rollback<'a>(
        &'a self,
        request: RollbackRequest<'a>,
    ) -> BoxFuture<'a, Result<(), RollbackError>>;
}

/// What a rollback action is given.
pub struct RollbackRequest<'a> {
    /// `name@version` of the skill whose postcondition failed.
    pub skill: &'a str,
    /// The postcondition's rollback action.
    pub action: &'a str,
    /// The job whose output was rejected.
    pub job_id: &'a str,
    /// Its input.
    pub input: &'a Value,
    /// The rejected output.
    pub output: &'a Value,
    /// The runtime's resources.
    pub resources: &'a Resources,
}

impl<F> Rollback for F
where
    F: for<'a> Fn(RollbackRequest<'a>) -> Result<(), RollbackError> + Send + Sync + 'static,
{
    fn rollback<'a>(
        &'a self,
        request: RollbackRequest<'a>,
    ) -> BoxFuture<'a, Result<(), RollbackError>> {
        Box::pin(std::future::ready(self(request)))
    }
}
