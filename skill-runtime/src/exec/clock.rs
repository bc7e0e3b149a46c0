//! The step clock and the wall clock of a job, read as few times as a job can.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

// The step clock (see `State::t0`); std's and tokio's `Instant` are written in
// full where they are used.
use quanta::Instant;

/// The step clock's first reading, which calibrates it against the OS clock (a
/// busy loop of about 0.6 ms, once per process): made when a runtime is built,
/// not in its first job. A function of its own so that instruction counts can
/// leave it out (`bench/invoke-instructions.sh`): its length varies from run to
/// run.
#[inline(never)]
pub(super) fn calibrate_step_clock() {
    now();
}

/// A reading of the step clock. `quanta::Instant::now` looks, on every
/// reading, for a clock set for its thread (`quanta::with_clock`, a
/// thread-local `RefCell`) before it reads the global one; nothing here sets
/// one, so the runtime reads its own handle of the same calibrated clock.
pub(crate) fn now() -> Instant {
    static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new).now()
}

/// The wall-clock time at `now`, without a second clock reading per job: each
/// thread reads the system clock at most once a second and adds the time the
/// step clock measured since. The two differ by the system clock's rate
/// correction (parts per million: microseconds over that second), and a step of
/// the system clock (`date -s`, an NTP step) shows in records within a second.
pub(super) fn wall_clock(now: Instant) -> SystemTime {
    const RESYNC: Duration = Duration::from_secs(1);
    thread_local! {
        static ANCHOR: Cell<Option<(Instant, SystemTime)>> = const { Cell::new(None) };
    }
    ANCHOR.with(|anchor| match anchor.get() {
        Some((at, wall)) if now >= at && now - at < RESYNC => wall + (now - at),
        _ => {
            let wall = SystemTime::now();
            anchor.set(Some((now, wall)));
            wall
        }
    })
}

pub(super) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived wall clock agrees with the system clock, on the reading that
    /// sets the anchor and on later ones.
    #[test]
    fn the_wall_clock_follows_the_system_clock() {
        for _ in 0..3 {
            let before = SystemTime::now();
            let wall = wall_clock(Instant::now());
            let after = SystemTime::now();
            let slack = Duration::from_millis(5);
            assert!(before <= wall + slack && wall <= after + slack);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
