//! Execute: run the handler, each attempt bounded by the skill's timeout and
//! the job's deadline, panics caught, retryable failures retried with the
//! declared backoff.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use skill_core::manifest::Backoff;
use tracing::Instrument;

use crate::contract::boxed::Boxed;
use crate::contract::de::Input;
use crate::contract::entry::HandlerFailure;
use crate::contract::invocation::{InHandler, Stop, StopReason};
use crate::exec::clock::{self, micros};
use crate::exec::stages::errors::{mismatch, over_budget};
use crate::exec::state::State;
use crate::model::error::InvokeError;
use crate::model::record::{AttemptOutcome, AttemptRecord};
use crate::registry::skill::RegisteredSkill;
use crate::sync::lock;

/// No wait between attempts is longer than this.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Run the handler: each attempt bounded by the skill's timeout and the job's
/// deadline, panics caught, retryable failures retried with the declared
/// backoff. Timeouts are retried only for idempotent skills, since a
/// timed-out attempt may have done its work.
pub(crate) async fn execute(
    retry_base: Duration,
    skill: &RegisteredSkill,
    input: &mut Boxed,
    st: &mut State,
) -> Result<Boxed, InvokeError> {
    let m = skill.entry.manifest;
    // No later than the clock can say (a deadline past it is none).
    let deadline = st
        .t0
        .checked_add(Duration::from_millis(st.inv.constraints.timeout_ms));
    let max_attempts = m.execution.retries.saturating_add(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        // Another attempt: the first took the input, which is decoded again,
        // from the params as a value, into the same box.
        if attempt > 1 {
            let params = st.parse_params().map_err(|_| mismatch(m.name))?;
            *input = skill
                .decode(Input::Value(params))
                .map_err(|_| mismatch(m.name))?;
        }
        // Cancelled before this attempt (or before the job reached its
        // handler): the handler does not start.
        if st.inv.stop.reason() == Some(StopReason::Cancelled) {
            return Err(InvokeError::Cancelled {
                skill: m.name.to_owned(),
            });
        }
        st.inv.begin_attempt(attempt);
        // The first attempt starts where the last timed step ended.
        let now = if attempt == 1 { st.last } else { clock::now() };
        let per_attempt = Duration::from_millis(m.execution.timeout_ms);
        let budget = match deadline {
            Some(d) => per_attempt.min(d.saturating_duration_since(now)),
            None => per_attempt,
        };
        // Empty after: the handler owns the input.
        let handler = skill.entry.erased.run(&st.inv, input, &mut st.room);
        let stoppable = Stoppable {
            run: CatchUnwind(handler),
            stop: &st.inv.stop,
        };
        let mut run = std::pin::pin!(stoppable.instrument(st.span.clone()));
        // A handler that is done at its first poll needs no timer (setting
        // one up reaches for the runtime's handle and its timer wheel); one
        // that is not gets the deadline counted from the attempt's start, as
        // before. Either way a handler is only ever interrupted between polls.
        // (The first poll's answer is a temporary of the `if let`, gone
        // before the timer's await: held across it, it would widen the
        // job's future by the size of an output.)
        let outcome = 'outcome: {
            if let Poll::Ready(done) =
                std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await
            {
                break 'outcome Ok(done);
            }
            // Still counted from the attempt's start: tokio's clock now, less
            // the time the attempt has taken so far.
            // A deadline past what the clock can hold is no deadline (the
            // doors bound timeouts to 30 days; code may build any).
            match tokio::time::Instant::now()
                .checked_add(budget.saturating_sub(clock::now().saturating_duration_since(now)))
            {
                Some(until) => tokio::time::timeout_at(until, run).await,
                None => Ok(run.await),
            }
        };
        let end = clock::now();
        let took = micros(end.saturating_duration_since(now));
        // A handler that blocked its thread past the deadline could not be
        // interrupted (tokio's timer fires only between polls): it finished,
        // but late, and a late answer is a timeout, never a success.
        let late = outcome.is_ok() && end.saturating_duration_since(now) > budget;
        let timed_out = || {
            (
                (
                    AttemptOutcome::TimedOut,
                    format!("no answer within {} ms", budget.as_millis()),
                ),
                m.execution.idempotent,
                InvokeError::TimedOut {
                    skill: m.name.to_owned(),
                    timeout_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
                    attempts: attempt,
                },
            )
        };
        let (record, retry, error) = match outcome {
            Ok(Err(Stopped(StopReason::Budget))) => {
                let report = lock(&st.inv.report);
                let over = st.inv.over_budget(&report);
                drop(report);
                let error = match over {
                    Some(over) => over_budget(skill, over),
                    None => InvokeError::Internal {
                        skill: m.name.to_owned(),
                        message: "stopped for a budget the report is within".to_owned(),
                    },
                };
                ((AttemptOutcome::Stopped, error.to_string()), false, error)
            }
            Ok(Err(Stopped(StopReason::Cancelled))) => {
                let error = InvokeError::Cancelled {
                    skill: m.name.to_owned(),
                };
                ((AttemptOutcome::Stopped, error.to_string()), false, error)
            }
            Ok(_) if late => timed_out(),
            Ok(Ok(Ok(Ok(output)))) => {
                st.executed = Some(end);
                st.attempts.push(AttemptRecord {
                    attempt,
                    outcome: AttemptOutcome::Succeeded,
                    duration_us: took,
                    error: None,
                    backoff_ms: None,
                });
                return Ok(output);
            }
            Ok(Ok(Ok(Err(HandlerFailure { mode, message })))) => (
                (AttemptOutcome::Failed, format!("{}: {message}", mode.code)),
                mode.retryable,
                InvokeError::Failed {
                    skill: m.name.to_owned(),
                    code: mode.code.to_owned(),
                    retryable: mode.retryable,
                    message,
                    attempts: attempt,
                },
            ),
            Ok(Ok(Err(panic))) => (
                (AttemptOutcome::Panicked, panic.clone()),
                false,
                InvokeError::Panicked {
                    skill: m.name.to_owned(),
                    message: panic,
                },
            ),
            Err(_) => timed_out(),
        };
        let wait = jitter(backoff(m.execution.backoff, retry_base, attempt));
        let time_left =
            deadline.is_none_or(|d| clock::now().checked_add(wait).is_some_and(|t| t < d));
        let again = retry && attempt < max_attempts && time_left;
        st.attempts.push(AttemptRecord {
            attempt,
            outcome: record.0,
            duration_us: took,
            error: Some(record.1),
            backoff_ms: again.then(|| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
        });
        if !again {
            return Err(error);
        }
        tokio::time::sleep(wait).await;
    }
}

/// A handler stopped by the runtime before it returned.
struct Stopped(StopReason);

/// The handler, dropped at its next await once the job's stop is asked for
/// (a report crossed a budget): a stop from the handler's own task is seen
/// when its poll returns (even the last one: the output is then dropped), one
/// from another task wakes it.
struct Stoppable<'a, F> {
    run: F,
    stop: &'a Stop,
}

impl<F: Future + Unpin> Future for Stoppable<'_, F> {
    type Output = Result<F::Output, Stopped>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(why) = self.stop.reason() {
            return Poll::Ready(Err(Stopped(why)));
        }
        let polled = {
            let _inside = InHandler::enter();
            Pin::new(&mut self.run).poll(cx)
        };
        match polled {
            // A stop asked for during the poll that finished wins: what the
            // handler returned after crossing a budget is not its result.
            Poll::Ready(_) if let Some(why) = self.stop.reason() => Poll::Ready(Err(Stopped(why))),
            Poll::Ready(v) => Poll::Ready(Ok(v)),
            Poll::Pending => {
                self.stop.register(cx.waker());
                match self.stop.reason() {
                    Some(why) => Poll::Ready(Err(Stopped(why))),
                    None => Poll::Pending,
                }
            }
        }
    }
}

/// The wait before attempt `attempt + 1`, after `attempt` failed (from 1):
/// the one backoff rule, for a skill's retries and a worker's patience with
/// its stores.
pub(crate) fn backoff(kind: Backoff, base: Duration, attempt: u32) -> Duration {
    let wait = match kind {
        Backoff::None => Duration::ZERO,
        Backoff::Linear => base.saturating_mul(attempt),
        Backoff::Exponential => base.saturating_mul(1u32 << (attempt - 1).min(20)),
    };
    wait.min(MAX_BACKOFF)
}

/// "Equal jitter": a wait drawn uniformly between half the declared backoff
/// and all of it, so workers that failed together (a dependency restarting,
/// a rate limit reached by a fleet) do not all retry in the same instant,
/// while a skill still waits at least half of what its manifest declares.
fn jitter(wait: Duration) -> Duration {
    let half = wait / 2;
    half + half.mul_f64(rand::random::<f64>())
}

/// Turns a panic inside the wrapped future into an error carrying its message.
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(panic_message(&*payload))),
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_follows_the_declared_shape() {
        let base = Duration::from_millis(100);
        let ms = |k, n| backoff(k, base, n).as_millis();
        assert_eq!([1, 2, 3].map(|n| ms(Backoff::None, n)), [0, 0, 0]);
        assert_eq!([1, 2, 3].map(|n| ms(Backoff::Linear, n)), [100, 200, 300]);
        assert_eq!(
            [1, 2, 3, 4].map(|n| ms(Backoff::Exponential, n)),
            [100, 200, 400, 800]
        );
        assert_eq!(backoff(Backoff::Exponential, base, 40), MAX_BACKOFF);
    }

    #[test]
    fn jitter_keeps_half_to_all_of_the_wait_and_spreads_it() {
        let wait = Duration::from_millis(800);
        let draws: Vec<Duration> = (0..200).map(|_| jitter(wait)).collect();
        assert!(draws.iter().all(|d| (wait / 2..=wait).contains(d)));
        let distinct: std::collections::HashSet<_> = draws.iter().collect();
        assert!(distinct.len() > 150, "{} distinct waits", distinct.len());
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }
}
