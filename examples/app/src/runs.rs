//! `runs` and `run show RUN_ID`: pipeline runs' states (`GraphState`), as
//! the fleet's run store on Redis keeps them.

use std::process::ExitCode;

use skill_runtime::policy::RunStore;
use skill_runtime::record::{GraphState, GraphStatus};

use crate::redis_args::RedisArgs;
use crate::run::async_runtime;

#[derive(clap::Args)]
pub struct RunsArgs {
    /// How many of the latest runs.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Print the states as JSON, newest first.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    redis: RedisArgs,
}

#[derive(clap::Subcommand)]
pub enum RunCommand {
    /// Print one run's state (JSON): where it is, what it did, what it spent.
    Show {
        /// The run's id: its job's id, as `enqueue` printed it.
        run_id: String,
        #[command(flatten)]
        redis: RedisArgs,
    },
    /// Print an R3 file of an agent's run kept on the fleet (`audit.md`,
    /// `backlog.json`, `graph.json`), by the key its result lists.
    Artifact {
        /// The key, as the run's `artifacts` names it.
        key: String,
        #[command(flatten)]
        redis: RedisArgs,
    },
}

/// `runs`: the latest runs, one line each.
pub fn runs(args: RunsArgs) -> ExitCode {
    with_store(&args.redis, "runs", async |store| {
        let states = store.recent(args.limit).await.map_err(fail)?;
        if args.json {
            let json = serde_json::to_string_pretty(&states).map_err(|e| fail(e.to_string()))?;
            out!("{json}\n");
        } else {
            for s in &states {
                out!("{}\n", line(s));
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `run show RUN_ID`: exit status 2 when the store keeps no such run.
pub fn run(command: RunCommand) -> ExitCode {
    let (run_id, redis) = match command {
        RunCommand::Show { run_id, redis } => (run_id, redis),
        RunCommand::Artifact { key, redis } => return artifact(&key, &redis),
    };
    with_store(&redis, "run show", async |store| {
        match store.load(&run_id).await.map_err(fail)? {
            Some(state) => {
                let json = serde_json::to_string_pretty(&state).map_err(|e| fail(e.to_string()))?;
                out!("{json}\n");
                Ok(ExitCode::SUCCESS)
            }
            None => {
                eprintln!(
                    "error: no run {run_id} is kept (not a pipeline's job id, or its state expired after 7 days)"
                );
                Ok(ExitCode::from(2))
            }
        }
    })
}

/// `run artifact KEY`: exit status 2 when no such file is kept.
fn artifact(key: &str, redis: &RedisArgs) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match redis.require("run artifact").await {
            Ok(b) => b,
            Err(code) => return code,
        };
        match backend.artifact(key).await {
            Ok(Some(text)) => {
                out!("{text}");
                ExitCode::SUCCESS
            }
            Ok(None) => {
                eprintln!("error: no file {key} is kept (its run's result names the keys; they are kept 30 days)");
                ExitCode::from(2)
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        }
    })
}

/// `{run} {pipeline} {status} {visited}/{nodes} {current}`.
fn line(s: &GraphState) -> String {
    let status = match s.status {
        GraphStatus::Running => "running",
        GraphStatus::Succeeded => "succeeded",
        GraphStatus::Failed => "failed",
        GraphStatus::Skipped => "skipped",
    };
    format!(
        "{} {} {status} visited [{}]{}{}",
        s.job.job_id,
        s.job.reference(),
        s.visited_nodes.join(", "),
        s.current_node
            .as_ref()
            .map(|n| format!(" at {n}"))
            .unwrap_or_default(),
        match s.retry_count {
            0 => String::new(),
            1 => " (taken up again once)".to_owned(),
            n => format!(" (taken up again {n} times)"),
        }
    )
}

fn fail(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn with_store(
    redis: &RedisArgs,
    command: &str,
    body: impl AsyncFnOnce(&dyn RunStore) -> Result<ExitCode, ExitCode>,
) -> ExitCode {
    let rt = match async_runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let backend = match redis.require(command).await {
            Ok(b) => b,
            Err(code) => return code,
        };
        let store = backend.run_store();
        body(&*store).await.unwrap_or_else(|code| code)
    })
}
