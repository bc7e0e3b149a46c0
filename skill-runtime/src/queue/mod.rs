//! A front door, public API: job queues. Callers enqueue job envelopes (the
//! job model's, docs/sources.md) and read their outcomes ([`api`]); workers take
//! jobs and run each through every stage of a job ([`worker`]). Backends: in
//! this process ([`memory`]), and Redis Streams for a fleet of workers
//! (`redis`, feature `redis`), where idempotency, rate limits and run records
//! are shared too.

mod agents;
pub mod api;
pub mod memory;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
pub mod source;
mod url;
pub mod worker;

pub use self::url::SecretUrl;
