//! The contract between a skill and the runtime: the `Skill` trait and its
//! typed conditions, the capability traits checked at compile time, the
//! context a handler runs in, and the type-erased entry `inventory` collects.
//! This is what `#[skill]` expands to; nothing here runs a job.

pub mod ask;
pub(crate) mod boxed;
pub mod capability;
pub mod conditions;
pub mod de;
pub mod direct;
pub mod entry;
pub(crate) mod evaluate;
pub(crate) mod field;
pub mod invocation;
pub(crate) mod ordered;
pub(crate) mod scoped;
pub mod skill;
pub mod watch;
