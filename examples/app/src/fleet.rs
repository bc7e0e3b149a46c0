//! The fleet's commands, over a queue on Redis: `worker`, `enqueue`, `result`
//! and `queue status`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use skill_runtime::queue::api::{Bound, Outcome, Queue, QueueError};
use skill_runtime::queue::fleet::{Fleet, FleetConfig, worker_name};
use skill_runtime::queue::schedule::Schedules;
use skill_runtime::queue::worker::{Worker, WorkerOptions};
use skill_runtime::record::RunStatus;
use skill_runtime::{JobEnvelope, Registry, envelope::Priority, envelope::Scope};

use crate::progress::Spinner;
use crate::redis_args::RedisArgs;
use crate::run::{
    JobArgs, RuntimeArgs, async_runtime, build_runtime, print_error, print_result, read_input,
};

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Jobs run at once.
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=4096))]
    concurrency: u16,
    /// How long a job this worker holds may go unsigned (the worker signs
    /// every third of it) before another worker takes it over.
    #[arg(long, default_value = "30s", value_parser = within(Bound::VISIBILITY), value_name = "DURATION")]
    visibility: Duration,
    /// Deliveries after which a job no worker acknowledged goes to the dead letters.
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_deliveries: u32,
    /// On SIGTERM or Ctrl-C, how long running jobs may take to finish before
    /// they are handed back to the queue.
    #[arg(long, default_value = "30s", value_parser = within(Bound::GRACE), value_name = "DURATION")]
    grace: Duration,
    /// How long outcomes are kept for `result JOB_ID` (and idempotent
    /// results for later jobs with the same key: the seed's resultTTL).
    #[arg(long, default_value = "1h", value_parser = within(Bound::RESULT_TTL), value_name = "DURATION")]
    result_ttl: Duration,
    /// How long an idempotency key stays locked by a job that runs it (the
    /// seed's lockTTL): a worker that dies holding it blocks the key this long.
    #[arg(long, default_value = "5m", value_parser = within(Bound::LOCK_TTL), value_name = "DURATION")]
    lock_ttl: Duration,
    /// Cron schedules to queue jobs by (`{"schedules": [{"id", "cron",
    /// "skill", "input", "priority"}]}`; see docs/long-running.md): give
    /// every worker the same file, each tick is queued once.
    #[arg(long, value_name = "FILE")]
    schedules: Option<PathBuf>,
    /// How long a job that needs a person's approval (`requires_hitl`, or a
    /// destructive skill) waits parked for `approve` or `deny` before it
    /// fails `approval_expired`. It holds no slot while it waits. With
    /// --approve, such jobs run at once instead.
    #[arg(long, default_value = "24h", value_parser = within(Bound::APPROVAL), value_name = "DURATION")]
    approval_timeout: Duration,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

/// `worker`: serve the queue until SIGTERM or Ctrl-C (listened for before
/// anything else is done, so that a worker stopped while it starts reports
/// its stop too).
pub fn worker(args: WorkerArgs) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_multi_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let stop = rt.block_on(async { listen_for_stop() });
    let registry = match Registry::from_inventory() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Log lines on standard error; with --otel the subscriber is set
    // already, with the same lines.
    {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let _ = tracing_subscriber::registry()
            .with(crate::telemetry::logs())
            .try_init();
    }
    let schedules = match &args.schedules {
        None => Schedules::default(),
        Some(path) => match Schedules::load(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: --schedules {e}");
                return ExitCode::from(2);
            }
        },
    };
    for s in schedules.iter() {
        let Some(skill) = registry.get(&s.skill) else {
            eprintln!(
                "error: schedule `{}` runs skill `{}`, which this worker does not have (`list` shows its skills)",
                s.id, s.skill
            );
            return ExitCode::from(2);
        };
        let wrong = skill.input_violations(&s.input);
        if !wrong.is_empty() {
            eprintln!(
                "error: schedule `{}`: its input does not fit `{}`:",
                s.id, s.skill
            );
            for v in wrong {
                eprintln!("  at `{}`: {}", v.instance_path, v.message);
            }
            return ExitCode::from(2);
        }
    }
    rt.block_on(async move {
        let redis = &args.runtime.redis;
        let Some(url) = redis.url() else {
            eprintln!("error: `worker` works on a queue on Redis or PostgreSQL: give --redis URL, or set SKILL_REDIS_URL");
            return ExitCode::from(2);
        };
        let mut config = FleetConfig {
            visibility: args.visibility,
            max_deliveries: args.max_deliveries,
            result_ttl: args.result_ttl,
            ..redis.config(url)
        };
        config.idempotency.lock_ttl = args.lock_ttl;
        config.idempotency.result_ttl = args.result_ttl;
        let backend = match redis.connect_with(config).await {
            Ok(b) => b,
            Err(code) => return code,
        };
        let runtime = match build_runtime(registry, &args.runtime, None, Some(&backend)) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let name = worker_name();
        let source = match backend.work_source(name.clone()).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let options = WorkerOptions {
            concurrency: usize::from(args.concurrency),
            visibility: args.visibility,
            grace: args.grace,
            approvals: (!args.runtime.approve).then_some(args.approval_timeout),
            ..WorkerOptions::default()
        };
        eprintln!(
            "worker {name}: serving queue `{}` at {url} ({} at once); SIGTERM or Ctrl-C stops it",
            backend.queue_name(),
            options.concurrency
        );
        // With --otel, the queue's depth and the rest as gauges.
        skill_runtime::otel::observe_queue(Arc::new(backend.clone()), Duration::from_secs(5));
        // The agents too: an agent's job (an `enqueue` of its id, or a
        // hand-over another run enqueued) runs here, its own hand-overs
        // enqueued in turn.
        let agents = match crate::agents::registry() {
            Ok(a) => Arc::new(a),
            Err(code) => return code,
        };
        let runner = skill_runtime::agents::AgentRunner::new(runtime.clone(), agents)
            .with_queue(Arc::new(backend.clone()))
            .with_artifact_store(backend.artifact_store());
        let worker = match Worker::new(runtime, source, options) {
            Ok(w) => w.with_agents(runner),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let (report, ()) = tokio::join!(
            worker.run(shutdown(stop.clone())),
            backend.run_schedules(&schedules, shutdown(stop))
        );
        eprintln!(
            "worker {name}: stopped: {} jobs completed, {} dead-lettered, {} handed back; {} requests to {}",
            report.completed,
            report.dead_lettered,
            report.handed_back,
            backend.round_trips(),
            backend.kind()
        );
        ExitCode::SUCCESS
    })
}

/// Listen for SIGTERM and Ctrl-C from now on (within a runtime): a signal
/// that comes while the worker is still starting is kept, and stops it as
/// soon as it serves, with its report, instead of killing it unreported.
fn listen_for_stop() -> tokio::sync::watch::Receiver<bool> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        )
    };
    tokio::spawn(async move {
        #[cfg(unix)]
        match signals {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        let _ = tx.send(true);
    });
    rx
}

/// Completes once `stop` says so (SIGTERM or Ctrl-C came).
async fn shutdown(mut stop: tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

#[derive(clap::Args)]
pub struct EnqueueArgs {
    /// Skill name, or name@version.
    #[arg(required_unless_present = "envelope")]
    name: Option<String>,
    /// Input JSON: the text itself, @FILE, or - for standard input.
    #[arg(required_unless_present = "envelope")]
    input: Option<String>,
    /// A whole job envelope instead (the AI-COS JobEnvelope as its TypeScript
    /// writes it, camelCase; or this runtime's snake_case): a file, or - for
    /// standard input. Without `skill`, its `intent` picks the skill.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["name", "input"])]
    envelope: Option<PathBuf>,
    /// What the job is for (the seed's JobIntent, e.g. seo_audit).
    #[arg(long)]
    intent: Option<String>,
    /// What the job processes (the seed's JobScope), as JSON: {"entityType": "page", "entityIds": [...], "limit": 100}.
    #[arg(long, value_name = "JSON")]
    scope: Option<String>,
    /// critical, high, normal or low: workers take higher priorities first.
    #[arg(long, value_parser = parse_priority)]
    priority: Option<Priority>,
    /// Not run if no worker takes it within this long (e.g. 30s, 10m, 1h).
    #[arg(long, value_parser = within(Bound::EXPIRES_IN), value_name = "DURATION")]
    expires_in: Option<Duration>,
    /// Run it this long from now, not before (e.g. 10s, 10m, 1h; at most 30
    /// days): it waits apart until then, and moves to its line once.
    #[arg(long, value_parser = within(Bound::DELAY), value_name = "DURATION", conflicts_with = "at")]
    delay: Option<Duration>,
    /// Run it at this time, not before (RFC 3339, e.g.
    /// 2026-12-01T09:00:00Z; at most 30 days ahead).
    #[arg(long, value_parser = parse_at, value_name = "TIME")]
    at: Option<SystemTime>,
    /// Wait for the outcome and print it, as `invoke` does (and exit as it does).
    #[arg(long)]
    wait: bool,
    /// With --wait, give up waiting after this long (the job stays queued).
    #[arg(long, value_parser = within(Bound::WAIT), value_name = "DURATION", requires = "wait")]
    wait_limit: Option<Duration>,
    #[command(flatten)]
    job: JobArgs,
    #[command(flatten)]
    redis: RedisArgs,
}

/// `enqueue`: put a job on the queue; print its id, or with --wait its outcome.
pub fn enqueue(args: EnqueueArgs) -> ExitCode {
    let job = match envelope_of(&args) {
        Ok(j) => j,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match args.redis.require("enqueue").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        let due = args
            .at
            .or_else(|| args.delay.map(|d| SystemTime::now() + d));
        if let Some(due) = due {
            let id = match backend.enqueue_at(job, due).await {
                Ok(id) => id,
                Err(e) => return refused(&e),
            };
            if !args.wait {
                outln!("{id}");
                return ExitCode::SUCCESS;
            }
            return match backend.outcome(&id, Duration::ZERO).await {
                Ok(Some(o)) => print_outcome(o),
                Ok(None) => wait_for(&backend, &id, args.wait_limit).await,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        if !args.wait {
            return match backend.enqueue(job).await {
                Ok(id) => {
                    outln!("{id}");
                    ExitCode::SUCCESS
                }
                Err(e) => refused(&e),
            };
        }
        // The first wait is pipelined with the enqueue: one round trip.
        let first = Duration::from_millis(250);
        let (id, outcome) = match backend.enqueue_and_wait(job, first).await {
            Ok(done) => done,
            Err(e) => return refused(&e),
        };
        match outcome {
            Some(o) => print_outcome(o),
            None => wait_for(&backend, &id, args.wait_limit).await,
        }
    })
}

/// `--at TIME`: RFC 3339, within 30 days from now.
fn parse_at(s: &str) -> Result<SystemTime, String> {
    let at = skill_runtime::envelope::parse_time(s)?;
    skill_runtime::queue::api::delay_until(at).map_err(|e| e.to_string())?;
    Ok(at)
}

/// A queue that did not take the job: 2 when the caller's envelope was at
/// fault (an id another job holds), 1 otherwise.
fn refused(e: &QueueError) -> ExitCode {
    eprintln!("error: {e}");
    match e {
        QueueError::JobIdTaken { .. } | QueueError::Invalid(_) => ExitCode::from(2),
        _ => ExitCode::FAILURE,
    }
}

/// The job `enqueue` was asked to queue.
fn envelope_of(args: &EnqueueArgs) -> Result<JobEnvelope, String> {
    let mut job = match (&args.envelope, &args.name, &args.input) {
        (Some(path), _, _) => {
            let text = read_input(&if path.as_os_str() == "-" {
                "-".to_owned()
            } else {
                format!("@{}", path.display())
            })
            .map_err(|e| e.to_string())?;
            serde_json::from_str::<JobEnvelope>(&text)
                .map_err(|e| format!("{} is not a job envelope: {e}", path.display()))?
        }
        (None, Some(name), Some(input)) => {
            let text = read_input(input).map_err(|e| format!("cannot read input {input}: {e}"))?;
            let params =
                serde_json::from_str(&text).map_err(|e| format!("the input is not JSON: {e}"))?;
            JobEnvelope::for_reference(name, params)
        }
        _ => return Err("give NAME and INPUT, or --envelope FILE".to_owned()),
    };
    if let Some(intent) = &args.intent {
        job.intent = Some(intent.clone());
    }
    if let Some(scope) = &args.scope {
        job.scope = Some(
            serde_json::from_str::<Box<Scope>>(scope)
                .map_err(|e| format!("--scope is not a job scope: {e}"))?,
        );
    }
    if let Some(p) = args.priority {
        job.caller.priority = p;
    }
    if let Some(d) = args.expires_in {
        job.expires_at = Some(SystemTime::now() + d);
    }
    Ok(args.job.apply(job))
}

#[derive(clap::Args)]
pub struct ResultArgs {
    /// The job id `enqueue` printed.
    job_id: String,
    /// Wait for the outcome when the job has not run yet.
    #[arg(long)]
    wait: bool,
    /// With --wait, give up waiting after this long.
    #[arg(long, value_parser = within(Bound::WAIT), value_name = "DURATION", requires = "wait")]
    wait_limit: Option<Duration>,
    #[command(flatten)]
    redis: RedisArgs,
}

/// `result JOB_ID`: the outcome, as `invoke` prints it; exit status 3 when
/// there is none yet.
pub fn result(args: ResultArgs) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match args.redis.require("result").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        if args.wait {
            return wait_for(&backend, &args.job_id, args.wait_limit).await;
        }
        match backend.outcome(&args.job_id, Duration::ZERO).await {
            Ok(Some(o)) => print_outcome(o),
            Ok(None) => not_yet(&args.job_id),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Wait for job `id`'s outcome (at most `limit`), showing progress on a
/// terminal.
async fn wait_for(backend: &Fleet, id: &str, limit: Option<Duration>) -> ExitCode {
    let mut spinner = Spinner::new(format!("waiting for job {id}"));
    let start = tokio::time::Instant::now();
    // Short waits redraw the spinner; without a terminal, longer ones.
    let step = if spinner.is_on() {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(5)
    };
    loop {
        let left = limit.map(|l| l.saturating_sub(start.elapsed()));
        if left.is_some_and(|l| l.is_zero()) {
            spinner.clear();
            return not_yet(id);
        }
        let wait = left.map_or(step, |l| l.min(step));
        match backend.outcome(id, wait).await {
            Ok(Some(o)) => {
                spinner.clear();
                return print_outcome(o);
            }
            Ok(None) => {
                // How far it has come, when it reports it.
                if spinner.is_on()
                    && let Ok(Some(p)) = backend.progress(id).await
                {
                    spinner.say(format!("job {id}: {} on {}", p.progress, p.worker));
                }
                spinner.tick();
            }
            Err(e) => {
                spinner.clear();
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
}

fn not_yet(id: &str) -> ExitCode {
    eprintln!("job {id} has no outcome yet: it waits, or runs, or its outcome is no longer kept");
    ExitCode::from(3)
}

/// An outcome as `invoke` prints a result or an error, with its exit status.
fn print_outcome(o: Outcome) -> ExitCode {
    match (o.status, o.result, o.error) {
        (RunStatus::Succeeded, Some(result), _) => print_result(Ok(result)),
        (_, _, Some(e)) => print_error(&e.message, e.next_action, e.input_error),
        _ => {
            eprintln!(
                "error: job {} ended ({}) without a result or an error",
                o.job_id, o.status
            );
            ExitCode::FAILURE
        }
    }
}

fn parse_priority(s: &str) -> Result<Priority, String> {
    Priority::SERVED
        .into_iter()
        .find(|p| p.as_str() == s)
        .ok_or_else(|| format!("unknown priority `{s}`: critical, high, normal or low"))
}

/// A parser of durations within `bound`: beyond it, the command refuses the
/// value before it does anything, naming the bound.
pub(crate) fn within(
    bound: Bound,
) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync {
    move |s| {
        let d = parse_duration(s)?;
        bound.check(d).map_err(|e| e.to_string())
    }
}

/// `500ms`, `30s`, `10m`, `2h`, `1d`, or a number of seconds. A number too
/// large for any clock is read as the longest duration, which every bound
/// refuses by name.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration like 30s, 10m or 1h"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        _ => return Err(format!("`{s}`: the unit is ms, s, m, h or d")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("`{s}` is not a duration"));
    }
    Ok(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

#[cfg(test)]
mod tests {
    use super::{Bound, parse_duration, within};
    use std::time::Duration;

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5y").is_err());
    }

    #[test]
    fn durations_past_their_bound_are_refused_by_name() {
        let visibility = within(Bound::VISIBILITY);
        assert_eq!(visibility("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(
            visibility("0s").unwrap_err(),
            "`visibility` of 0ms is outside 1s to 1d"
        );
        let huge = visibility("5000000000000h").unwrap_err();
        assert!(huge.starts_with("`visibility` of "), "{huge}");
        assert!(huge.ends_with(" is outside 1s to 1d"), "{huge}");
        let expires = within(Bound::EXPIRES_IN);
        assert!(expires("5000000000000h").is_err());
        assert!(expires("1e400").is_err());
        assert_eq!(expires("3650d"), Ok(Duration::from_secs(3650 * 86_400)));
        assert!(expires("3651d").is_err());
    }
}
