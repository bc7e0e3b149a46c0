//! The stages of one job, in the order [`job`](crate::exec::job) runs them:
//! resolve, expiry, authorize, rate limit, input (validate, preconditions),
//! idempotency, approval, execute (timeout, retries, panics), output (budget,
//! validate, postconditions and rollback, validation rules). Each records its
//! step in the job's state, with its outcome and duration.

pub mod approval;
pub mod authorize;
pub mod errors;
pub mod execute;
pub mod expiry;
pub mod idempotency;
pub mod input;
pub mod output;
pub mod rate_limit;
pub mod resolve;
