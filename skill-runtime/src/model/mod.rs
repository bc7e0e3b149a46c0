//! The data of one job, from request to record: ids, the envelope a caller
//! sends, the result or the error it gets back, and the run record the job
//! leaves. Plain data with serde; nothing here runs a job.

pub mod approval;
pub mod caller;
pub mod constraints;
pub mod content;
pub mod data;
pub mod envelope;
pub mod error;
pub mod graph;
pub mod handover;
pub mod hash;
pub mod id;
pub mod record;
pub mod recorded;
pub mod result;
pub mod time;
pub mod trace;
