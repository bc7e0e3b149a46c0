//! A worker's slot, lent back while its job waits on another job (an
//! idempotency key that job holds): a job that waits holds no slot, so jobs
//! stuck behind a slow or dead holder cannot starve unrelated ones. Also the
//! name the job's locks are held under, so that a worker finding a lock whose
//! holder died can take it over at once instead of waiting out its lifetime.
//!
//! A worker sets these for the task of each job it runs ([`scope`]); code
//! that runs outside a worker (a direct call, an MCP request) has none, and
//! waits as it always did.

use std::future::Future;
use std::sync::Arc;

use crate::exec::policy::BoxFuture;

/// What a worker lends the job it runs.
pub(crate) trait Lender: Send + Sync {
    /// Give the job's slot back while it waits.
    fn lend(&self);
    /// Take a slot again before the job goes on (waits for a free one).
    fn take_back(&self) -> BoxFuture<'_, ()>;
    /// The worker's name, under which the job's locks are held.
    fn holder(&self) -> &str;
}

tokio::task_local! {
    static LENDER: Arc<dyn Lender>;
}

/// Run `f` (a job) with `lender` as its worker.
pub(crate) async fn scope<F: Future>(lender: Arc<dyn Lender>, f: F) -> F::Output {
    LENDER.scope(lender, f).await
}

/// Wait for `f` without holding a worker's slot: given back before, taken
/// again after (outside a worker, just `f`).
pub(crate) async fn idle<F: Future>(f: F) -> F::Output {
    let Ok(lender) = LENDER.try_with(Arc::clone) else {
        return f.await;
    };
    lender.lend();
    let out = f.await;
    lender.take_back().await;
    out
}

/// The name the current job's locks are held under, inside a worker.
#[cfg_attr(
    not(any(feature = "redis", feature = "postgres")),
    expect(dead_code, reason = "read by the shared stores' idempotency")
)]
pub(crate) fn holder() -> Option<String> {
    LENDER.try_with(|l| l.holder().to_owned()).ok()
}
