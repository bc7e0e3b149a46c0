//! Agents: the AI-COS agent model's contract (seed 002) as a compile-time
//! checked manifest. `#[agent]` expands to [`contract`]'s trait and data;
//! [`registry`] collects agents across crates; [`export`] writes
//! `agent-registry.json` and checks its rules; [`run`] runs an agent with the
//! agent as the caller of its skills; [`kpi`] computes KPIs from run records.
//!
//! A layer above `exec`: an agent's skill calls are ordinary jobs.

pub(crate) mod artifacts;
pub(crate) mod audit;
pub(crate) mod contract;
pub(crate) mod escalate;
pub(crate) mod export;
pub(crate) mod handler;
pub(crate) mod kpi;
pub(crate) mod outcome;
pub(crate) mod registry;
pub(crate) mod run;
pub(crate) mod runner;
