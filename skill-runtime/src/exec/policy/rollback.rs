//! Rollback actions: what undoes a skill's work when its postcondition fails.

use serde_json::Value;

use crate::contract::invocation::Resources;
use crate::exec::policy::BoxFuture;

/// Undoes what a skill did when its postcondition fails (the AI-COS
/// `rollback_action`). Registered by action name with
/// [`RuntimeBuilder::rollback`](crate::exec::runtime::RuntimeBuilder::rollback).
pub trait Rollback: Send + Sync + 'static {
    fn rollback<'a>(&'a self, request: RollbackRequest<'a>) -> BoxFuture<'a, Result<(), String>>;
}

/// What a rollback action is given.
pub struct RollbackRequest<'a> {
    /// `name@version` of the skill whose postcondition failed.
    pub skill: &'a str,
    pub action: &'a str,
    pub job_id: &'a str,
    pub input: &'a Value,
    pub output: &'a Value,
    pub resources: &'a Resources,
}

impl<F> Rollback for F
where
    F: for<'a> Fn(RollbackRequest<'a>) -> Result<(), String> + Send + Sync + 'static,
{
    fn rollback<'a>(&'a self, request: RollbackRequest<'a>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(self(request)))
    }
}
