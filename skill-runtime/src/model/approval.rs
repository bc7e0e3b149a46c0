//! A person's decision on a job that waits for approval, given outside the
//! job: by an MCP client's user (elicitation), or with `approve` / `deny` on
//! the queue. The runtime records it in the job's approval step.

use std::fmt;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::model::time::{deserialize_time, format_time, serialize_time};

/// What a person decided, or that nobody did in time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run the job.
    Approved {
        /// Who approved.
        by: String,
        /// When.
        #[serde(
            serialize_with = "serialize_time",
            deserialize_with = "deserialize_time"
        )]
        at: SystemTime,
    },
    /// Do not run it.
    Denied {
        /// Who denied it.
        by: String,
        /// When.
        #[serde(
            serialize_with = "serialize_time",
            deserialize_with = "deserialize_time"
        )]
        at: SystemTime,
        /// Why, in their words.
        reason: String,
    },
    /// Nobody decided before the deadline: the job fails `approval_expired`.
    Expired {
        /// The deadline that passed.
        #[serde(
            serialize_with = "serialize_time",
            deserialize_with = "deserialize_time"
        )]
        deadline: SystemTime,
    },
}

impl Decision {
    /// Approved by `by`, now.
    pub fn approved(by: impl Into<String>) -> Decision {
        Decision::Approved {
            by: by.into(),
            at: SystemTime::now(),
        }
    }

    /// Denied by `by`, now, for `reason`.
    pub fn denied(by: impl Into<String>, reason: impl Into<String>) -> Decision {
        Decision::Denied {
            by: by.into(),
            at: SystemTime::now(),
            reason: reason.into(),
        }
    }
}

/// As the run record's approval step says it: `approved by alice at
/// 2026-11-25T22:10:00Z`.
/// A decision as a shared store holds it: the JSON of a [`Decision`], or
/// what a store's own step writes when a deadline passes (a Lua script or
/// an SQL function, which have no RFC 3339 clock): `{"decision": "expired",
/// "deadline_ms": ...}`.
#[cfg(any(feature = "redis", feature = "postgres"))]
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Decision(Decision),
    Expired { deadline_ms: u64 },
}

#[cfg(any(feature = "redis", feature = "postgres"))]
impl Decision {
    /// A decision as a shared store holds it (see [`Stored`]).
    pub(crate) fn read_stored(stored: &str) -> Result<Decision, serde_json::Error> {
        Ok(match serde_json::from_str::<Stored>(stored)? {
            Stored::Decision(d) => d,
            Stored::Expired { deadline_ms } => Decision::Expired {
                deadline: std::time::UNIX_EPOCH + std::time::Duration::from_millis(deadline_ms),
            },
        })
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Approved { by, at } => write!(f, "approved by {by} at {}", format_time(*at)),
            Decision::Denied { by, at, reason } => {
                write!(f, "denied by {by} at {}: {reason}", format_time(*at))
            }
            Decision::Expired { deadline } => {
                write!(f, "nobody decided before {}", format_time(*deadline))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_decision_reads_back_as_written_and_names_who_and_when() {
        let at = UNIX_EPOCH + Duration::from_secs(1_764_108_600);
        for d in [
            Decision::Approved {
                by: "alice".into(),
                at,
            },
            Decision::Denied {
                by: "bob".into(),
                at,
                reason: "not today".into(),
            },
            Decision::Expired { deadline: at },
        ] {
            let text = serde_json::to_string(&d).unwrap();
            assert_eq!(
                serde_json::from_str::<Decision>(&text).unwrap(),
                d,
                "{text}"
            );
        }
        let approved = Decision::Approved {
            by: "alice".into(),
            at,
        };
        assert_eq!(
            approved.to_string(),
            "approved by alice at 2025-11-25T22:10:00.000Z"
        );
    }
}
