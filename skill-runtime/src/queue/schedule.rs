//! Cron schedules: jobs the fleet queues on a timetable. Every worker given
//! the schedules looks twice a second; a tick's job has an id derived from
//! the queue, the schedule and the tick, and the queue takes one job per id,
//! so each tick is queued once however many workers look, and a worker that
//! restarts does not queue a tick again. A tick is queued only within
//! [`FIRE_WINDOW`] of its time: a fleet that was down longer skips the ticks
//! it missed rather than run them all at once when it returns.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use croner::Cron;
use croner::parser::{CronParser, Seconds};
use serde::{Deserialize, Serialize};
use serde_json::Map;

use crate::exec::policy::BoxFuture;
use crate::model::caller::{Priority, Source};
use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::model::time::format_time;
use crate::queue::api::{Queue, QueueError};

/// How late a tick may still be queued (a fleet down for less than this
/// queues the tick it missed once it is back; longer, the tick is skipped).
pub const FIRE_WINDOW: Duration = Duration::from_secs(60);

/// How often a worker looks for ticks.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// One schedule of a schedules file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Its name: letters, digits, `-`, `_`, `.`.
    pub id: String,
    /// When: a cron pattern, five fields (minute hour day month weekday) or
    /// six with seconds first (`*/10 * * * * *`), in UTC.
    pub cron: String,
    /// The skill each tick runs (`name` or `name@version`).
    pub skill: String,
    /// Its input.
    #[serde(default = "empty_object")]
    pub input: serde_json::Value,
    /// The priority its jobs are queued with.
    #[serde(default)]
    pub priority: Priority,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(Map::new())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    schedules: Vec<Schedule>,
}

/// Schedules read and checked: every pattern parses, ids are unique.
#[derive(Clone, Debug, Default)]
pub struct Schedules {
    list: Vec<(Schedule, Cron)>,
}

/// `pattern` parsed: five fields, or six with seconds first.
fn parse(pattern: &str) -> Result<Cron, String> {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .build()
        .parse(pattern)
        .map_err(|e| format!("`{pattern}` is not a cron pattern: {e}"))
}

/// The first time `cron` matches after `after`.
pub fn next_run(cron: &str, after: SystemTime) -> Result<SystemTime, String> {
    let cron = parse(cron)?;
    next_of(&cron, after).ok_or_else(|| format!("`{cron}` never matches again"))
}

fn to_chrono(t: SystemTime) -> Option<chrono::DateTime<chrono::Utc>> {
    let d = t.duration_since(UNIX_EPOCH).ok()?;
    chrono::DateTime::from_timestamp(i64::try_from(d.as_secs()).ok()?, d.subsec_nanos())
}

fn from_chrono(t: chrono::DateTime<chrono::Utc>) -> Option<SystemTime> {
    let ms = u64::try_from(t.timestamp_millis()).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_millis(ms))
}

fn next_of(cron: &Cron, after: SystemTime) -> Option<SystemTime> {
    from_chrono(cron.find_next_occurrence(&to_chrono(after)?, false).ok()?)
}

fn last_of(cron: &Cron, at: SystemTime) -> Option<SystemTime> {
    from_chrono(cron.find_previous_occurrence(&to_chrono(at)?, true).ok()?)
}

impl Schedules {
    /// The schedules of file `path` (`{"schedules": [...]}`).
    pub fn load(path: &Path) -> Result<Schedules, String> {
        let doc = crate::files::read_json(path)?;
        Schedules::parse(&doc.to_string()).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The schedules of `text`, checked.
    pub fn parse(text: &str) -> Result<Schedules, String> {
        let file: File = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut list = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for s in file.schedules {
            let ok_id = !s.id.is_empty()
                && s.id.len() <= 64
                && s.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            if !ok_id {
                return Err(format!(
                    "schedule id `{}` must be 1 to 64 letters, digits, `-`, `_` or `.`",
                    s.id
                ));
            }
            if !seen.insert(s.id.clone()) {
                return Err(format!("schedule id `{}` is given twice", s.id));
            }
            if !s.input.is_object() {
                return Err(format!("schedule `{}`: `input` must be an object", s.id));
            }
            let cron = parse(&s.cron).map_err(|e| format!("schedule `{}`: {e}", s.id))?;
            list.push((s, cron));
        }
        Ok(Schedules { list })
    }

    /// The schedules, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &Schedule> {
        self.list.iter().map(|(s, _)| s)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// What `queue schedules` shows of one schedule: its definition, when it
/// runs next, and its last tick's job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScheduleState {
    /// The schedule as its workers were given it.
    pub schedule: Schedule,
    /// The next tick after now (RFC 3339), when the pattern has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run: Option<String>,
    /// The last tick queued (RFC 3339), and its job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<String>,
    /// The job the last tick queued (`result` and `cancel` take it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_job_id: Option<String>,
}

/// The job id of `schedule`'s tick at `tick` on `queue`: the same for every
/// worker.
fn tick_id(queue: &str, schedule: &str, tick: SystemTime) -> Id {
    let ms = tick.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Id::derived(&format!("{queue}\u{0}{schedule}\u{0}{ms}"))
}

/// Where a backend keeps the schedules its workers registered and each
/// one's last tick queued: what `queue schedules` lists.
pub(crate) trait Board: Queue {
    /// The queue's name, which a tick's job id is derived from.
    fn queue_name(&self) -> &str;

    /// Register schedule `id` (its state as JSON), replacing what was there.
    fn register<'a>(&'a self, id: &'a str, state: String) -> BoxFuture<'a, Result<(), QueueError>>;

    /// Note that schedule `id`'s tick `tick` was queued as job `job`.
    fn fired<'a>(
        &'a self,
        id: &'a str,
        tick: &'a str,
        job: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>>;

    /// Every schedule registered: its state as JSON, and its last tick and
    /// job when one was queued.
    #[expect(clippy::type_complexity, reason = "read once, by `states`")]
    fn registered(
        &self,
    ) -> BoxFuture<'_, Result<Vec<(String, Option<(String, String)>)>, QueueError>>;
}

/// The schedules registered on `board`, with their next and last ticks,
/// by id.
pub(crate) async fn states(board: &impl Board) -> Result<Vec<ScheduleState>, QueueError> {
    let now = SystemTime::now();
    let mut out: Vec<ScheduleState> = board
        .registered()
        .await?
        .into_iter()
        .filter_map(|(state, last)| {
            let mut s = serde_json::from_str::<ScheduleState>(&state).ok()?;
            s.next_run = next_run(&s.schedule.cron, now).ok().map(format_time);
            if let Some((tick, job)) = last {
                s.last_run = Some(tick);
                s.last_job_id = Some(job);
            }
            Some(s)
        })
        .collect();
    out.sort_by(|a, b| a.schedule.id.cmp(&b.schedule.id));
    Ok(out)
}

/// Queue the ticks of `schedules` on `board` until `stop` completes (see the
/// module's documentation). Every worker of a fleet may run this.
pub(crate) async fn run(board: &impl Board, schedules: &Schedules, stop: impl Future<Output = ()>) {
    if schedules.is_empty() {
        return;
    }
    for (s, _) in &schedules.list {
        let state = ScheduleState {
            schedule: s.clone(),
            next_run: None,
            last_run: None,
            last_job_id: None,
        };
        let json = serde_json::to_string(&state).unwrap_or_default();
        if let Err(e) = board.register(&s.id, json).await {
            tracing::warn!("cannot register schedule `{}`: {e}", s.id);
        }
    }
    // The last tick this worker saw queued, per schedule.
    let mut done: HashMap<&str, SystemTime> = HashMap::new();
    let mut look = tokio::time::interval(LOOK_EVERY);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            biased;
            () = &mut stop => return,
            _ = look.tick() => {}
        }
        let now = SystemTime::now();
        for (s, cron) in &schedules.list {
            let Some(tick) = last_of(cron, now) else {
                continue;
            };
            let late = now.duration_since(tick).unwrap_or_default();
            if late > FIRE_WINDOW || done.get(s.id.as_str()) == Some(&tick) {
                continue;
            }
            match fire(board, s, tick).await {
                Ok(()) => {
                    done.insert(&s.id, tick);
                }
                Err(e) => tracing::warn!("schedule `{}`: cannot queue its tick: {e}", s.id),
            }
        }
    }
}

/// Queue `s`'s job for `tick`, unless a worker did already.
async fn fire(board: &impl Board, s: &Schedule, tick: SystemTime) -> Result<(), QueueError> {
    let id = tick_id(board.queue_name(), &s.id, tick);
    let mut job = JobEnvelope::new(s.skill.clone(), s.input.clone());
    if let Some((name, version)) = s.skill.split_once('@') {
        job.skill = name.to_owned().into();
        job.version = Some(version.to_owned().into());
    }
    job.job_id = id.clone();
    job.minted = false;
    job.caller.source = Source::Cron;
    job.caller.priority = s.priority;
    let tick_text = format_time(tick);
    job.idempotency_key = Some(format!("schedule:{}@{tick_text}", s.id));
    match board.enqueue(job).await {
        // Queued here, or by another worker first: the tick is done.
        Ok(_) | Err(QueueError::JobIdTaken { .. }) => {}
        Err(e) => return Err(e),
    }
    board.fired(&s.id, &tick_text, id.as_str()).await
}

impl FromStr for Schedules {
    type Err = String;

    fn from_str(s: &str) -> Result<Schedules, String> {
        Schedules::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_checked_and_ticks_found() {
        let s = Schedules::parse(
            r#"{"schedules": [{"id": "every-2s", "cron": "*/2 * * * * *", "skill": "echo", "input": {"message": "tick"}}]}"#,
        )
        .unwrap();
        let (_, cron) = &s.list[0];
        let t = UNIX_EPOCH + Duration::from_millis(1_000_000_001_500);
        assert_eq!(
            last_of(cron, t),
            Some(UNIX_EPOCH + Duration::from_secs(1_000_000_000))
        );
        assert_eq!(
            next_of(cron, t),
            Some(UNIX_EPOCH + Duration::from_secs(1_000_000_002))
        );
        for bad in [
            r#"{"schedules": [{"id": "x", "cron": "61 * * * *", "skill": "echo"}]}"#,
            r#"{"schedules": [{"id": "a b", "cron": "* * * * *", "skill": "echo"}]}"#,
            r#"{"schedules": [{"id": "x", "cron": "* * * * *", "skill": "echo"}, {"id": "x", "cron": "* * * * *", "skill": "echo"}]}"#,
            r#"{"schedules": [{"id": "x", "cron": "* * * * *", "skill": "echo", "input": []}]}"#,
            r#"{"schedules": [{"id": "x", "cron": "* * * * *", "skill": "echo", "when": 1}]}"#,
        ] {
            assert!(Schedules::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_tick_has_one_id_whoever_computes_it() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let a = tick_id("default", "nightly", t);
        assert_eq!(a, tick_id("default", "nightly", t));
        assert_ne!(a, tick_id("default", "nightly", t + Duration::from_secs(1)));
        assert_ne!(a, tick_id("other", "nightly", t));
        assert!(Id::uuid(a.as_str()).is_ok(), "{a}");
    }
}
