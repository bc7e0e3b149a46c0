//! Commands about jobs already queued: `cancel`, `approve`, `deny`, `queue
//! status`, `queue schedules`.

use std::process::ExitCode;

use skill_runtime::policy::Decision;
use skill_runtime::queue::api::{Cancelled, Decided, Queue};

use crate::redis_args::RedisArgs;
use crate::run::async_runtime;

#[derive(clap::Args)]
pub struct CancelArgs {
    /// The job id `enqueue` printed.
    job_id: String,
    #[command(flatten)]
    redis: RedisArgs,
}

/// `cancel JOB_ID`: exit status 0 when the job will end `cancelled`, 3 when
/// it has an outcome already, 2 when no such job is known.
pub fn cancel(args: CancelArgs) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match args.redis.require("cancel").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        let id = &args.job_id;
        match backend.cancel(id).await {
            Ok(Cancelled::Requested) => {
                eprintln!(
                    "job {id} is cancelled: it will not run, or stops at its next await; `result {id} --wait` shows it ended"
                );
                ExitCode::SUCCESS
            }
            Ok(Cancelled::AlreadyDone) => ended(id),
            Ok(Cancelled::Unknown) => unknown(id),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Job `id` has an outcome already: exit status 3.
fn ended(id: &str) -> ExitCode {
    eprintln!("job {id} has ended already: `result {id}` shows how");
    ExitCode::from(3)
}

/// No job `id` is known: exit status 2.
fn unknown(id: &str) -> ExitCode {
    eprintln!(
        "error: no job {id} is known to this queue (never queued here, or its outcome is no longer kept)"
    );
    ExitCode::from(2)
}

#[derive(clap::Args)]
pub struct DecideArgs {
    /// The job id `enqueue` printed (`queue status` lists the jobs awaiting
    /// approval).
    job_id: String,
    /// Who decides, as the job's record will name them (default: `$USER`).
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    #[command(flatten)]
    redis: RedisArgs,
}

#[derive(clap::Args)]
pub struct DenyArgs {
    #[command(flatten)]
    decide: DecideArgs,
    /// Why, for the job's record and its caller.
    #[arg(long, value_name = "TEXT")]
    reason: String,
}

/// `approve JOB_ID`: the job runs.
pub fn approve(args: DecideArgs) -> ExitCode {
    let by = decider(&args);
    decide(args, Decision::approved(by))
}

/// `deny JOB_ID --reason TEXT`: the job ends `not_approved`.
pub fn deny(args: DenyArgs) -> ExitCode {
    let by = decider(&args.decide);
    decide(args.decide, Decision::denied(by, args.reason))
}

fn decider(args: &DecideArgs) -> String {
    args.by
        .clone()
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "an operator".to_owned())
}

/// Record `decision`: exit status 0 when it is the job's, 3 when the job was
/// decided or has ended already, 2 when no such job is known.
fn decide(args: DecideArgs, decision: Decision) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match args.redis.require("approve").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        let id = &args.job_id;
        let what = match &decision {
            Decision::Approved { .. } => "approved: it runs",
            _ => "denied: it ends `not_approved`",
        };
        match backend.decide(id, decision).await {
            Ok(Decided::Released) => {
                eprintln!("job {id} is {what} now; `result {id} --wait` shows its outcome");
                ExitCode::SUCCESS
            }
            Ok(Decided::Recorded) => {
                eprintln!(
                    "job {id} is {what} when a worker takes it (it was not waiting yet); `result {id} --wait` shows its outcome"
                );
                ExitCode::SUCCESS
            }
            Ok(Decided::AlreadyDecided) => {
                eprintln!("job {id} was decided already; that decision stands");
                ExitCode::from(3)
            }
            Ok(Decided::AlreadyDone) => ended(id),
            Ok(Decided::Unknown) => unknown(id),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

#[derive(clap::Subcommand)]
pub enum QueueCommand {
    /// Jobs waiting per priority, delayed, in flight, dead letters, and
    /// workers seen.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        redis: RedisArgs,
    },
    /// The cron schedules workers registered: each one's next run and its
    /// last tick's job.
    Schedules {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        redis: RedisArgs,
    },
}

pub fn queue(command: QueueCommand) -> ExitCode {
    let (json, redis) = match command {
        QueueCommand::Schedules { json, redis } => return schedules(json, redis),
        QueueCommand::Status { json, redis } => (json, redis),
    };
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match redis.require("queue status").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        match backend.status().await {
            Ok(status) if json => {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&status).unwrap_or_default()
                );
                ExitCode::SUCCESS
            }
            Ok(status) => {
                outln!("{status}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `queue schedules`.
fn schedules(json: bool, redis: RedisArgs) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match redis.require("queue schedules").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        let list = match backend.schedules().await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        if json {
            outln!(
                "{}",
                serde_json::to_string_pretty(&list).unwrap_or_default()
            );
            return ExitCode::SUCCESS;
        }
        if list.is_empty() {
            outln!("no schedules: workers register theirs when started with --schedules FILE");
        }
        for s in list {
            outln!(
                "{}  `{}`  {}  next {}  last {}{}",
                s.schedule.id,
                s.schedule.cron,
                s.schedule.skill,
                s.next_run.as_deref().unwrap_or("never"),
                s.last_run.as_deref().unwrap_or("never"),
                s.last_job_id
                    .map(|j| format!(" (job {j})"))
                    .unwrap_or_default()
            );
        }
        ExitCode::SUCCESS
    })
}
