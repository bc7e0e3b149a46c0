//! What the code that starts a job hears from it while it runs (progress,
//! log lines) and how it stops it (cancellation): a [`Watch`] given to
//! [`Runtime::invoke_watched`](crate::Runtime::invoke_watched).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::contract::ask::Ask;
use crate::model::approval::Decision;
use crate::model::record::{Progress, RunRecord};
use crate::sync::lock;

/// The least time between two reports passed on to a watcher: a handler
/// reporting in a tight loop reaches its client at most this often (the last
/// report of a job, and one that says the work is done, always pass).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// A cancellation handle: [`Cancel::cancel`] stops every job watched with it
/// (and the skills they call) at the handler's next await. A job cancelled
/// before its handler starts never runs it. Cheap to clone; clones are the
/// same handle.
#[derive(Clone, Default)]
pub struct Cancel {
    inner: Arc<CancelInner>,
}

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    /// The jobs to stop; weak, so a finished job is not kept.
    jobs: Mutex<Vec<Weak<dyn Halt>>>,
    notify: tokio::sync::Notify,
}

/// A job a [`Cancel`] can stop.
pub(crate) trait Halt: Send + Sync + 'static {
    /// Stop at the handler's next await (or before it starts).
    fn halt(&self);
}

impl Cancel {
    /// A handle nothing has cancelled yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Cancel: every job watched with this handle is stopped (now, or when
    /// it starts).
    pub fn cancel(&self) {
        if self.inner.cancelled.swap(true, Ordering::AcqRel) {
            return;
        }
        let jobs = std::mem::take(&mut *lock(&self.inner.jobs));
        for job in jobs.iter().filter_map(Weak::upgrade) {
            job.halt();
        }
        self.inner.notify.notify_waiters();
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Completes once the handle is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// Stop `job` when this handle is cancelled (at once if it already is).
    pub(crate) fn attach(&self, job: Arc<dyn Halt>) {
        let mut jobs = lock(&self.inner.jobs);
        if self.is_cancelled() {
            drop(jobs);
            job.halt();
            return;
        }
        jobs.retain(|j| j.strong_count() > 0);
        jobs.push(Arc::downgrade(&job));
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Where a job's progress reports go.
pub(crate) type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where a job's log lines go.
pub(crate) type LogHook = Arc<dyn Fn(&LogLine) + Send + Sync>;

/// Where a watched job's run record goes when it ends, beside the sink.
pub(crate) type RecordHook = Arc<dyn Fn(&Arc<RunRecord>) + Send + Sync>;

/// How much a log line matters, least first: syslog's levels (RFC 5424),
/// which MCP's `notifications/message` carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for whoever debugs the skill.
    Debug,
    /// What the skill is doing.
    Info,
    /// Normal but worth noticing.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Someone must act now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Its name in syslog and MCP: `debug`, `info`, `notice`, `warning`,
    /// `error`, `critical`, `alert`, `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// A line a handler logged with [`Ctx::log`](crate::Ctx::log), as it wrote
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// How much it matters.
    pub level: LogLevel,
    /// What the handler wrote.
    pub message: String,
}

/// A job's watcher: where its progress goes, the handle that cancels it, and
/// a person's decision on it when it needs approval.
#[derive(Clone, Default)]
pub struct Watch {
    pub(crate) progress: Option<ProgressHook>,
    pub(crate) log: Option<LogHook>,
    pub(crate) record: Option<RecordHook>,
    pub(crate) cancel: Option<Cancel>,
    pub(crate) decision: Option<Decision>,
    /// The caller, when it can be asked while the job runs.
    pub(crate) ask: Option<Arc<dyn Ask>>,
}

impl Watch {
    /// A watcher that hears nothing and cancels nothing.
    pub fn new() -> Watch {
        Watch::default()
    }

    /// Pass the job's progress reports to `f` (at most one per
    /// [`PROGRESS_EVERY`], from the handler's task: `f` must not block).
    pub fn on_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Watch {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Pass the job's log lines ([`Ctx::log`](crate::Ctx::log)) to `f`, as
    /// the handler wrote them (from the handler's task: `f` must not block).
    /// A watcher that shows them to someone the job's records would not
    /// show its redacted inputs to scrubs them first, as the MCP server does.
    pub fn on_log(mut self, f: impl Fn(&LogLine) + Send + Sync + 'static) -> Watch {
        self.log = Some(Arc::new(f));
        self
    }

    /// Pass the job's run record to `f` when it ends (as the sink gets it,
    /// redacted; from the job's task: `f` must not block). Each job started
    /// with this watcher, a pipeline's steps included, hands on its own.
    pub fn on_record(mut self, f: impl Fn(&Arc<RunRecord>) + Send + Sync + 'static) -> Watch {
        self.record = Some(Arc::new(f));
        self
    }

    /// Stop the job when `cancel` is cancelled.
    pub fn cancel_with(mut self, cancel: Cancel) -> Watch {
        self.cancel = Some(cancel);
        self
    }

    /// A person decided on the job already (an MCP client's user, or
    /// `approve` / `deny` on the queue): a job that needs approval takes
    /// `decision` instead of asking the runtime's approver, and its record
    /// says who decided and when. A job that needs no approval ignores it.
    pub fn decided(mut self, decision: Decision) -> Watch {
        self.decision = Some(decision);
        self
    }

    /// The handler's questions ([`Ctx::elicit`](crate::Ctx::elicit),
    /// [`Ctx::sample`](crate::Ctx::sample)) go to `ask`.
    #[cfg_attr(
        not(feature = "mcp"),
        expect(dead_code, reason = "only an MCP session's client can be asked")
    )]
    pub(crate) fn asking(mut self, ask: Arc<dyn Ask>) -> Watch {
        self.ask = Some(ask);
        self
    }
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.is_some())
            .field("record", &self.record.is_some())
            .field("cancel", &self.cancel)
            .field("decision", &self.decision)
            .field("ask", &self.ask.is_some())
            .finish()
    }
}

/// What an invocation keeps of its progress: the last report, and when one
/// was last passed on.
#[derive(Default)]
pub(crate) struct ProgressState {
    pub(crate) last: Option<Progress>,
    passed_at: Option<Instant>,
    /// The last report was held back by the coalescing.
    held: bool,
}

impl ProgressState {
    /// Keep `p`; whether to pass it on now: unless one was passed less than
    /// [`PROGRESS_EVERY`] ago (a report of work done always passes).
    pub(crate) fn offer(&mut self, p: &Progress, now: Instant) -> bool {
        let finished = p.total.is_some_and(|t| p.done >= t);
        let pass = finished
            || self
                .passed_at
                .is_none_or(|at| now.saturating_duration_since(at) >= PROGRESS_EVERY);
        if pass {
            self.passed_at = Some(now);
        }
        self.held = !pass;
        self.last = Some(p.clone());
        pass
    }

    /// The last report, and whether it was held back (and is still to pass).
    pub(crate) fn take_last(&mut self) -> (Option<Progress>, bool) {
        (self.last.clone(), std::mem::take(&mut self.held))
    }
}
