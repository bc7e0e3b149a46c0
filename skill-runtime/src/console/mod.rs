//! A front door for people (feature `console`, with a fleet: `redis` or
//! `postgres`): the fleet in web pages, rendered on the server. The queue
//! (depth, running jobs with their progress, jobs parked for a person with
//! Approve and Deny, workers, schedules), the runs (records by skill,
//! status and caller; one run's stages, steps, output and error), latency
//! and failures per skill, and the registry (each skill's manifest and
//! schemas).
//!
//! Without an authenticator the console is its operator's, on loopback
//! only (`Host` checked); with one (the MCP endpoint's: JWT, API keys) a
//! person signs in with their token or key, which the console keeps in a
//! cookie the browser sends to it alone (`HttpOnly`, `SameSite=Strict`).
//! Every form carries a token sealed with the fleet's secret and bound to
//! the credential, and a post from another origin is refused. Who may
//! decide on a parked job: a caller of level `admin`, or one holding the
//! permission [`DECIDE_PERMISSION`]; the others see no buttons and get 403
//! for a forged post. A caller other than an admin sees only its own runs.

mod builder;
mod html;
mod pages;
mod pipelines;
mod runs;
mod service;
mod skills;
mod stats;

pub use self::builder::{Console, DECIDE_PERMISSION};
pub use self::service::ConsoleService;
