//! A team's own skills, built on the seed skills of another crate: a profile
//! card (calling the seed's `normalize_handle`), and notifications delivered
//! through an outbox, once per job across a fleet of workers; and an agent,
//! `agent.team.digest`, whose skill is the seed crate's `summarize_text`;
//! `durable_tally`, a five-step pipeline whose runs survive their worker;
//! and `tally_route`, one that branches, retries a step and handles its
//! failure.

mod digest;
mod durable;
mod outbox;
mod profile;
mod routing;

pub use digest::*;
pub use durable::*;
pub use outbox::*;
pub use profile::*;
pub use routing::*;

use std::path::Path;
use std::sync::Arc;

use skill_runtime::{Registry, RuntimeBuilder};

/// A runtime for the seed skills and the team's: the seed's resources and
/// rollback actions over the data in `dir`, and the team's outbox in
/// `dir/outbox`.
pub fn runtime_builder(registry: Arc<Registry>, dir: &Path) -> std::io::Result<RuntimeBuilder> {
    Ok(seed_skills::runtime_builder(registry, dir)?.resource(Outbox::new(dir.join("outbox"))))
}
