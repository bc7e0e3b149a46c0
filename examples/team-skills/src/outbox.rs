//! `notify`: deliver a notification through the team's outbox (one JSON line
//! per message in `outbox/<channel>.jsonl` under the data folder). A delivered
//! message cannot be recalled, so the skill is idempotent: a job's message is
//! delivered once, however many workers of a fleet see the job.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use skill_runtime::capability;
use skill_runtime::prelude::*;

/// Deliver messages to the team's outbox.
#[capability(id = "outbox.write", effect = "event", operation = "write", resource = Outbox)]
pub struct OutboxWrite;

/// The outbox: a folder of one JSON-lines file per channel, shared by every
/// process that is given the same folder.
#[derive(Debug)]
pub struct Outbox {
    dir: PathBuf,
    /// Appends of this process, one at a time (lines from other processes
    /// are whole: each is one `write` of less than a pipe buffer).
    write: Mutex<()>,
}

impl Outbox {
    pub fn new(dir: impl Into<PathBuf>) -> Outbox {
        Outbox {
            dir: dir.into(),
            write: Mutex::new(()),
        }
    }

    fn file(&self, channel: &str) -> PathBuf {
        self.dir.join(format!("{channel}.jsonl"))
    }

    /// Append `line` to `channel`'s outbox.
    #[expect(
        clippy::disallowed_methods,
        reason = "the outbox.write capability (OutboxWrite) covers writing the outbox"
    )]
    pub fn append(&self, channel: &str, line: &str) -> std::io::Result<()> {
        let _one = self.write.lock().unwrap_or_else(|p| p.into_inner());
        std::fs::create_dir_all(&self.dir)?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.file(channel))?;
        file.write_all(format!("{line}\n").as_bytes())
    }

    /// Every message delivered to `channel`, oldest first.
    #[expect(
        clippy::disallowed_methods,
        reason = "reading the outbox back is for its owner and tests, not a skill"
    )]
    pub fn delivered(&self, channel: &str) -> std::io::Result<Vec<String>> {
        match std::fs::File::open(self.file(channel)) {
            Ok(f) => BufReader::new(f).lines().collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NotifyInput {
    /// The channel: a lowercase word, which names the outbox file.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// Who the message is for.
    #[schemars(length(min = 1, max = 200))]
    pub to: String,
    #[schemars(length(min = 1, max = 2000))]
    pub message: String,
    /// How long the channel's transport takes to accept the message, in
    /// milliseconds (simulated; at most a minute).
    #[serde(default)]
    #[schemars(range(max = 60_000))]
    pub latency_ms: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NotifyOutput {
    /// False for a dry run: nothing was delivered.
    pub delivered: bool,
    pub channel: String,
    pub to: String,
    /// What the job did, or would have done in a dry run.
    pub summary: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum NotifyError {
    /// The outbox could not be written; trying again may work.
    #[error("the outbox cannot be written: {0}")]
    #[failure(retryable)]
    OutboxUnavailable(String),
}

/// Deliver a notification through the outbox, once per job.
#[skill(
    version = "1.0.0",
    domain = "core",
    owners("growth-team"),
    autonomy = "L2",
    intents("notify"),
    capabilities(OutboxWrite),
    side_effects(OutboxWrite(
        target = "outbox",
        reversible = false,
        description = "Appends the message to the channel's outbox; a delivered message cannot be recalled"
    )),
    idempotent,
    timeout_ms = 90_000,
    retries = 2,
    backoff = "exponential",
    mcp(permissions("notify:send"))
)]
pub async fn notify(ctx: Ctx, input: NotifyInput) -> Result<NotifyOutput, NotifyError> {
    tokio::time::sleep(Duration::from_millis(u64::from(input.latency_ms))).await;
    let summary = format!("one message to {} on `{}`", input.to, input.channel);
    if ctx.dry_run() {
        return Ok(NotifyOutput {
            delivered: false,
            channel: input.channel,
            to: input.to,
            summary: format!("dry run: would deliver {summary}"),
        });
    }
    let line = serde_json::json!({
        "job_id": ctx.job_id(),
        "trace_id": ctx.trace_id(),
        "to": input.to,
        "message": input.message,
    });
    ctx.resource::<OutboxWrite>()
        .append(&input.channel, &line.to_string())
        .map_err(|e| NotifyError::OutboxUnavailable(e.to_string()))?;
    ctx.report_items(1);
    ctx.add_artifact(Artifact {
        name: "outbox line".into(),
        kind: "application/json".into(),
        uri: Some(format!("outbox://{}/{}", input.channel, ctx.job_id())),
    });
    Ok(NotifyOutput {
        delivered: true,
        channel: input.channel,
        to: input.to,
        summary: format!("delivered {summary}"),
    })
}
