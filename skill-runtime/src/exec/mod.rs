//! Execution: the runtime ([`runtime`]) and the path of one job through it
//! ([`job`], stage by stage in [`stages`]), the policies it enforces
//! ([`policy`]), where its record goes ([`sink`], [`stats`]), and the handlers
//! of skills that are not Rust functions: pipelines ([`pipeline`]) and ops
//! that run elsewhere ([`op`]).

pub mod clock;
pub mod finish;
pub mod ground;
pub mod job;
pub(crate) mod lend;
pub mod op;
pub mod pipeline;
pub mod policy;
pub mod provided;
pub mod redact;
pub mod runtime;
pub mod sink;
pub(crate) mod spare;
pub mod stages;
pub mod state;
pub mod stats;
pub(crate) mod trace;
