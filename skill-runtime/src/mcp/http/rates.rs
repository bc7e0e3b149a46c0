//! Requests per minute per caller ([`HttpLimits::caller_rate`]): each caller
//! (by its user id, the subject its credentials name) gets its own exact
//! sliding window, in this process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::{Response, StatusCode};
use serde_json::Value;

use super::reply::{Body, rpc_error};
use crate::exec::policy::rate::RateLimiter;
use crate::model::caller::Caller;
use crate::sync::lock;

/// The most callers whose windows are kept at once: past it, windows with
/// nothing left in them are dropped, then (a flood of distinct callers) all.
const MAX_CALLERS: usize = 100_000;

/// One window per caller.
pub(super) struct CallerRates {
    per_minute: u32,
    windows: Mutex<HashMap<String, Arc<RateLimiter>>>,
}

impl CallerRates {
    pub(super) fn new(per_minute: u32) -> CallerRates {
        CallerRates {
            per_minute,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Admit one request of `caller` (`None`), or the 429 it gets:
    /// `Retry-After` says when a place frees up. The caller is named by its
    /// user id (never by its credential).
    pub(super) fn refusal(&self, caller: Option<&Caller>) -> Option<Response<Body>> {
        let who = caller
            .and_then(|c| c.user_id.as_deref())
            .unwrap_or("(this server's own caller)");
        let window = {
            let mut windows = lock(&self.windows);
            if !windows.contains_key(who) && windows.len() >= MAX_CALLERS {
                // Windows nobody else holds and with no admission left in
                // the last minute are free to go; a new one starts empty.
                let now = Instant::now();
                windows.retain(|_, w| Arc::strong_count(w) > 1 || w.holds_any(now));
                if windows.len() >= MAX_CALLERS {
                    windows.clear();
                }
            }
            windows
                .entry(who.to_owned())
                .or_insert_with(|| Arc::new(RateLimiter::new(self.per_minute)))
                .clone()
        };
        window
            .admit(Instant::now())
            .err()
            .map(|wait| too_many(who, self.per_minute, wait))
    }
}

/// 429 for `who`, with `Retry-After` in whole seconds (at least one).
fn too_many(who: &str, per_minute: u32, wait: Duration) -> Response<Body> {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let mut answer = rpc_error(
        StatusCode::TOO_MANY_REQUESTS,
        Value::Null,
        -32000,
        format!(
            "caller `{who}` has sent {per_minute} requests in the last minute, its limit; retry in {secs} s"
        ),
    );
    answer.headers_mut().insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from(secs.max(1)),
    );
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(id: &str) -> Caller {
        Caller {
            user_id: Some(id.to_owned()),
            ..Caller::default()
        }
    }

    #[test]
    fn each_caller_has_its_own_window() {
        let rates = CallerRates::new(2);
        let (ann, bob) = (caller("ann"), caller("bob"));
        assert!(rates.refusal(Some(&ann)).is_none());
        assert!(rates.refusal(Some(&ann)).is_none());
        let refused = rates.refusal(Some(&ann)).unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let retry: u64 = refused.headers()[hyper::header::RETRY_AFTER]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
        // Another caller is not held back by the first.
        assert!(rates.refusal(Some(&bob)).is_none());
    }
}
