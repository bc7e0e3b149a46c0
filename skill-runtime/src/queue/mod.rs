//! A front door, public API: job queues. Callers enqueue job envelopes (the
//! job model's, docs/sources.md) and read their outcomes ([`api`]); workers take
//! jobs and run each through every stage of a job ([`worker`]). Backends: in
//! this process ([`memory`]), and Redis Streams for a fleet of workers
//! (`redis`, feature `redis`) or PostgreSQL (`postgres`, feature
//! `postgres`), where idempotency, rate limits and run records are shared too.

mod agents;
pub mod api;
#[cfg(any(feature = "redis", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "redis", feature = "postgres"))))]
pub mod fleet;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod locks;
pub mod memory;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub mod postgres;
#[cfg(any(feature = "redis", feature = "postgres"))]
pub mod records;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
#[cfg(any(feature = "redis", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "redis", feature = "postgres"))))]
pub mod schedule;
pub mod source;
mod url;
pub mod worker;

pub use self::url::SecretUrl;
