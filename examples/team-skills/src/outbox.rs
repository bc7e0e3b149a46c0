//! `notify`: deliver a notification through the team's outbox (one JSON line
//! per message in `outbox/<channel>.jsonl` under the data folder). A delivered
//! message cannot be recalled, so the skill is idempotent: a job's message is
//! delivered once, however many workers of a fleet see the job.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use skill_runtime::prelude::*;
use skill_runtime::{Fence, capability};

/// Deliver messages to the team's outbox.
#[capability(
    id = "outbox.write",
    effect = "event",
    operation = "write",
    resource = Outbox,
    ambient(
        file_write = "the outbox is a folder of JSON-lines files, one per channel",
        file_read = "a delivery is looked up in its channel's file before it is made again"
    )
)]
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

    /// Append `line` (a JSON object) to `channel`'s outbox, once per
    /// idempotency key when the job holds one: under an exclusive lock of the
    /// channel's file (across processes), a line is not appended when one
    /// with the same key is there already, whichever holder of the key wrote
    /// it (a worker paused past its lock, then resumed, finds its successor's
    /// line). The line records the key and the holder's fencing token.
    /// Whether the line was appended.
    #[expect(
        clippy::disallowed_methods,
        reason = "the outbox.write capability (OutboxWrite) covers writing the outbox"
    )]
    pub fn append(
        &self,
        channel: &str,
        line: serde_json::Value,
        fence: Option<&Fence>,
    ) -> std::io::Result<bool> {
        let _one = self.write.lock().unwrap_or_else(|p| p.into_inner());
        std::fs::create_dir_all(&self.dir)?;
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(self.file(channel))?;
        // Released when `file` closes, at the end of this call.
        file.lock()?;
        let mut line = line;
        if let Some(fence) = fence {
            let mut text = String::new();
            file.read_to_string(&mut text)?;
            let delivered = text.lines().any(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .is_ok_and(|v| v.get("key").and_then(|k| k.as_str()) == Some(fence.key()))
            });
            if delivered {
                return Ok(false);
            }
            line["key"] = fence.key().into();
            line["fence"] = fence.token().into();
        }
        file.write_all(format!("{line}\n").as_bytes())?;
        Ok(true)
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
    // Once per key: a second holder of the job's key (a worker that took the
    // job over from one that stopped answering, or the one that stopped,
    // resumed) finds the line there and appends none.
    let appended = ctx
        .resource::<OutboxWrite>()
        .append(&input.channel, line, ctx.fence())
        .map_err(|e| NotifyError::OutboxUnavailable(e.to_string()))?;
    if !appended {
        return Ok(NotifyOutput {
            delivered: true,
            channel: input.channel,
            to: input.to,
            summary: format!("{summary}: delivered already, by an earlier run of this job"),
        });
    }
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
