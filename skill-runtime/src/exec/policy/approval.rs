//! Human approval of skills that require it (`requires_hitl`) or are
//! destructive: who is asked, and what they answer.

use serde_json::Value;

use crate::exec::policy::BoxFuture;
use crate::model::caller::Caller;
use crate::model::id::Id;

/// What asks a human before a skill that `requires_hitl` or is destructive runs.
///
/// The runtime's default, [`DenyApprovals`], refuses with a clear error; a server
/// that can reach a human plugs in its own. [`ApproveAll`] exists for operators
/// who approve by starting the run themselves (the CLI's `--approve`).
pub trait Approver: Send + Sync + 'static {
    /// Decide on `request`.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

/// What the approver is asked.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// `name@version`.
    pub skill: String,
    /// The job waiting for the decision.
    pub job_id: Id,
    /// `requires_hitl`, `destructive`, or both joined by `, `.
    pub reason: String,
    /// The input, redacted.
    pub params: Value,
    /// Whether the job is a dry run.
    pub dry_run: bool,
    /// Who asked for the job.
    pub caller: Caller,
}

/// An approver's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Run the job.
    Approved {
        /// Who approved.
        by: String,
    },
    /// Do not run it.
    Denied {
        /// Why.
        reason: String,
    },
}

/// Refuses every approval: the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyApprovals;

impl Approver for DenyApprovals {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::ready(Approval::Denied {
            reason: "no approver is configured; start the runtime with one (RuntimeBuilder::approver), or approve explicitly (the CLI's --approve)".to_owned(),
        }))
    }
}

/// Grants every approval, in the name of `by`.
#[derive(Clone, Debug)]
pub struct ApproveAll {
    /// Who approved.
    pub by: String,
}

impl Approver for ApproveAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::ready(Approval::Approved {
            by: self.by.clone(),
        }))
    }
}
