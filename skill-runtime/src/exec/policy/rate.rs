//! Rate limits: at most `max_per_minute` jobs of a skill in any 60 seconds,
//! counted in this process ([`RateLimiter`], one per skill) or across a fleet
//! ([`RateLimitStore`]).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::exec::policy::BoxFuture;
use crate::sync::lock;

/// Rate limits shared by a fleet of workers (the Redis store of
/// `skill_runtime::queue`, feature `redis`): exact across every process that
/// uses the same store.
pub trait RateLimitStore: Send + Sync + 'static {
    /// Admit one job of `skill` (`name@version`) under a limit of
    /// `max_per_minute` in any 60 seconds, or say why not.
    fn admit<'a>(
        &'a self,
        skill: &'a str,
        max_per_minute: u32,
    ) -> BoxFuture<'a, Result<(), Refusal>>;
}

/// Why a shared rate limit did not admit a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The window is full; one place frees up after this long.
    Limited(Duration),
    /// The store that counts could not be asked (`store`, why); the job is
    /// refused rather than let past a limit nobody counted.
    Unavailable {
        /// The store.
        store: String,
        /// Why it could not answer.
        message: String,
    },
}

/// An exact sliding-window limit: at most `max` admissions in any 60 seconds.
pub(crate) struct RateLimiter {
    max: u32,
    admitted: Mutex<VecDeque<Instant>>,
}

const WINDOW: Duration = Duration::from_secs(60);

impl RateLimiter {
    pub(crate) fn new(max_per_minute: u32) -> RateLimiter {
        RateLimiter {
            max: max_per_minute,
            admitted: Mutex::new(VecDeque::with_capacity(max_per_minute.min(4096) as usize)),
        }
    }

    /// Whether any admission of the last minute is still counted at `now`.
    #[cfg_attr(
        not(feature = "mcp-http"),
        expect(dead_code, reason = "read by the per-caller limits of mcp-http")
    )]
    pub(crate) fn holds_any(&self, now: Instant) -> bool {
        lock(&self.admitted)
            .back()
            .is_some_and(|last| now.duration_since(*last) < WINDOW)
    }

    /// Admit one call now, or say how long until one would be admitted.
    pub(crate) fn admit(&self, now: Instant) -> Result<(), Duration> {
        let mut admitted = lock(&self.admitted);
        while let Some(first) = admitted.front() {
            if now.duration_since(*first) >= WINDOW {
                admitted.pop_front();
            } else {
                break;
            }
        }
        if (admitted.len() as u64) < u64::from(self.max) {
            admitted.push_back(now);
            return Ok(());
        }
        let wait = match admitted.front() {
            Some(first) => WINDOW.saturating_sub(now.duration_since(*first)),
            None => WINDOW,
        };
        Err(wait)
    }
}
