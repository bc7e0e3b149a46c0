//! The policies a manifest declares and the runtime enforces: who may call
//! (`reusable_by`, MCP permissions), how often (`rate_limit`), how large the
//! input may be, once per key (idempotency), with whose approval
//! (`requires_hitl`, destructive), and what undoes a broken postcondition
//! (rollback actions).

pub mod approval;
pub mod authorize;
pub mod idempotency;
pub mod limits;
pub mod rate;
pub mod rollback;
pub mod runs;

pub use crate::sync::BoxFuture;
