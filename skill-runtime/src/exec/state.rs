//! Everything known about one job while it runs, turned into its record at
//! the end, and what a job that succeeded produced.

use std::borrow::Cow;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::time::SystemTime;

// The step clock (see `State::t0`).
use quanta::Instant;
use serde_json::Value;
use skill_core::manifest::TargetKind;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32};

use crate::contract::boxed::Boxed;
use crate::contract::entry::HandlerRoom;
use crate::contract::invocation::{Invocation, Resources};
use crate::exec::clock::wall_clock;
use crate::exec::clock::{self, micros};
use crate::exec::{spare, trace};
use crate::model::envelope::{JobEnvelope, reference};
use crate::model::error::InvokeError;
use crate::model::record::{Attempts, Stage, StageOutcome, Stages, StepRun};
use crate::model::result::SkillResult;
use crate::spare::{BoxSlot, box_block, let_go_box, room};

/// What the stages produced for a job that succeeded.
pub(crate) struct Done {
    pub(crate) result: SkillResult,
    /// The typed output, for typed calls (absent when replayed).
    pub(crate) typed: Option<Boxed>,
}

/// Everything known about a job while it runs, turned into its record at the end.
pub(crate) struct State {
    /// What the job asks to run, and on what.
    pub(crate) target: Target,
    /// The job's ids, caller and constraints, taken out of the envelope when
    /// the job starts and shared with the handler's context from then on.
    /// Let go by the state's `Drop`, which keeps its block for the next job
    /// when nothing else holds it (`exec/spare.rs`).
    pub(crate) inv: ManuallyDrop<Arc<Invocation>>,
    /// Carries the job and trace ids to the handler's events and the outcome's.
    pub(crate) span: tracing::Span,
    pub(crate) started_at: SystemTime,
    /// Readings of the step clock (`quanta`: the time-stamp counter where it
    /// is invariant, scaled to the OS clock; the OS clock elsewhere). Timeouts
    /// that tokio waits on read tokio's clock.
    pub(crate) t0: Instant,
    pub(crate) last: Instant,
    pub(crate) skill: Option<usize>,
    pub(crate) typed_input: Option<Boxed>,
    /// Why the input was refused before the job started (its validation
    /// stage fails with it, after the cheaper stages).
    pub(crate) refused: Option<Refused>,
    /// The size of the params' text, when it came as text.
    pub(crate) text_len: Option<usize>,
    /// The params' text while no stage has needed them parsed: the input is
    /// decoded from it, and the record keeps it (`target.params` is `null`
    /// until [`State::parse_params`]).
    pub(crate) text: Option<String>,
    pub(crate) steps: Stages,
    pub(crate) attempts: Attempts,
    pub(crate) key: Option<String>,
    pub(crate) replayed: bool,
    /// When the successful attempt ended, read once for the attempt and the step.
    pub(crate) executed: Option<Instant>,
    /// A pipeline's steps as they ran.
    pub(crate) pipeline_steps: Vec<StepRun>,
    /// The decision that let the job run, when it needed one.
    pub(crate) approval: Option<Box<crate::model::approval::Decision>>,
    /// The job was started through the runtime's own entry points while a
    /// handler ran on this thread: refused when it resolves.
    pub(crate) from_handler: bool,
    /// Where the handler's future runs, when it fits: the state is a heap
    /// block already, which the job's future cannot widen for it (see
    /// `Runtime::run`).
    pub(crate) room: HandlerRoom,
}

thread_local! {
    /// The thread's spare block for a job's state (`crate::spare`).
    static SPARE: BoxSlot<State> = const { Cell::new(None) };
}

impl State {
    /// Let the state go (its invocation with it, see `Drop`); its block is
    /// kept for the next job on this thread (`crate::spare`).
    #[inline]
    pub(crate) fn let_go(self: Box<State>) {
        let_go_box(&SPARE, self);
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: taken once, here, and the field is not used after.
        spare::let_go_invocation(unsafe { ManuallyDrop::take(&mut self.inv) });
    }
}

/// An input refused before the job started, at its entry point: reported by
/// the validation stage, so that the job's record, stages and error are those
/// of any other bad input.
pub(crate) enum Refused {
    /// A typed input that does not serialize: the serializer's message.
    Unserializable(String),
    /// Params text over the size limit, not parsed.
    TooLarge,
}

/// The envelope's fields that stay with the job's state; the rest (ids, caller,
/// constraints) go to its invocation. Kept apart so that the state does not
/// carry an emptied copy of them into every job's box.
pub(crate) struct Target {
    pub(crate) skill: Cow<'static, str>,
    pub(crate) kind: TargetKind,
    pub(crate) version: Option<Cow<'static, str>>,
    pub(crate) params: Value,
    pub(crate) idempotency_key: Option<String>,
    /// A queue delivered it, and may deliver it again.
    pub(crate) delivered: bool,
    /// When the caller made the envelope, and after when it is not run.
    pub(crate) created_at: Option<SystemTime>,
    pub(crate) expires_at: Option<SystemTime>,
}

impl Target {
    /// `name` or `name@version`, or `intent ...` for a job named by its intent,
    /// as [`JobEnvelope::reference`] writes it.
    pub(crate) fn reference(&self, intent: Option<&str>) -> String {
        match (intent, self.skill.is_empty()) {
            (Some(intent), true) => format!("intent `{intent}`"),
            _ => reference(&self.skill, self.version.as_deref()),
        }
    }
}

impl State {
    /// The job's envelope, put back together from its state and its
    /// invocation (its params parsed, when they came as text).
    pub(crate) fn envelope(&mut self) -> JobEnvelope {
        let _ = self.parse_params();
        let inv = &self.inv;
        let t = &self.target;
        JobEnvelope {
            job_id: inv.job_id.clone(),
            trace_id: inv.trace_id.clone(),
            parent_job_id: inv.parent_job_id.clone(),
            intent: inv.intent.clone(),
            scope: inv.scope.clone(),
            skill: t.skill.clone(),
            kind: t.kind,
            version: t.version.clone(),
            params: t.params.clone(),
            constraints: inv.constraints.clone(),
            caller: inv.caller.clone(),
            idempotency_key: t.idempotency_key.clone(),
            created_at: t.created_at,
            expires_at: t.expires_at,
            rag_context: inv.rag_context.clone(),
            traceparent: None,
            escalated_from: None,
            minted: false,
            delivered: t.delivered,
        }
    }

    /// The job's state, on the heap: the job's future holds a pointer to it,
    /// not the state itself (see [`Runtime::run`](crate::exec::runtime::Runtime)).
    pub(crate) fn new(
        resources: &Arc<Resources>,
        job: JobEnvelope,
        typed: Option<Boxed>,
        text: Option<String>,
    ) -> Box<State> {
        // The block first (the thread's spare, if it has one), then the state
        // written into it: built on the stack and then boxed, it would be
        // copied whole.
        let block = box_block(&SPARE);
        let now = clock::now();
        let started_at = wall_clock(now);
        let JobEnvelope {
            job_id,
            trace_id,
            parent_job_id,
            intent,
            scope,
            skill,
            kind,
            version,
            params,
            constraints,
            caller,
            idempotency_key,
            created_at,
            expires_at,
            rag_context,
            traceparent,
            // Read by the agent runner, which runs such jobs.
            escalated_from: _,
            minted: _,
            delivered,
        } = job;
        // A traceparent names the trace; the span the job runs under, if
        // any, has the last word (see `exec/trace.rs`).
        let trace_id = match &traceparent {
            Some(tp) => tp.trace_id(),
            None => trace_id,
        };
        let (span, joined) = trace::job_span(&skill, &job_id, &trace_id, traceparent.as_ref());
        let trace_id = joined.unwrap_or(trace_id);
        if let Some(i) = &intent {
            span.record("intent", i.as_str());
        }
        if let Some(role) = caller.agent_role {
            span.record("caller.role", role.as_str());
        }
        // Written once, here, into its block (the thread's spare, if it has
        // one: `exec/spare.rs`), and taken out again into the record
        // (`finish`).
        let mut inv = spare::invocation_block();
        room(&mut inv).write(Invocation {
            resources: resources.clone(),
            caller,
            trace_id,
            job_id,
            parent_job_id,
            started_at,
            constraints,
            intent,
            scope,
            rag_context,
            attempt: AtomicU32::new(0),
            dry_run_read: AtomicBool::new(false),
            report: Default::default(),
            stop: Default::default(),
            pipeline: OnceLock::new(),
            fence: OnceLock::new(),
            watch: Default::default(),
            progress: Default::default(),
        });
        // SAFETY: written just above, in place (an `Arc::new` of the
        // invocation would build it on the stack and copy it whole).
        let inv = unsafe { inv.assume_init() };
        Box::write(
            block,
            State {
                span,
                target: Target {
                    skill,
                    kind,
                    version,
                    params,
                    idempotency_key,
                    delivered,
                    created_at,
                    expires_at,
                },
                inv: ManuallyDrop::new(inv),
                started_at,
                t0: now,
                last: now,
                skill: None,
                refused: None,
                typed_input: typed,
                // Set by the entry point that took text (refused text included).
                text_len: None,
                text,
                steps: Stages::new(),
                attempts: Attempts::default(),
                key: None,
                replayed: false,
                executed: None,
                pipeline_steps: Vec::new(),
                approval: None,
                from_handler: false,
                room: HandlerRoom::new(),
            },
        )
    }

    /// The params as a value, parsed from their text if they came as text
    /// and no stage has parsed them yet (most text jobs never need it).
    /// Inlined: a job whose params came as a value pays one test.
    #[inline]
    pub(crate) fn parse_params(&mut self) -> Result<&serde_json::Value, serde_json::Error> {
        if self.text.is_some() {
            self.parse_text()?;
        }
        Ok(&self.target.params)
    }

    #[cold]
    fn parse_text(&mut self) -> Result<(), serde_json::Error> {
        if let Some(text) = self.text.take() {
            self.target.params = serde_json::from_str(&text)?;
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn step(&mut self, step: Stage, outcome: StageOutcome, detail: Option<String>) {
        // Stages that only consult the manifest take well under a microsecond;
        // they are not timed (a clock reading costs as much as the step), and
        // their time counts toward the next timed step.
        let untimed = matches!(
            step,
            Stage::Resolve | Stage::Expiry | Stage::Authorize | Stage::RateLimit | Stage::Budget
        );
        if outcome == StageOutcome::Skipped || untimed {
            self.steps.set(step, outcome, 0, detail);
            return;
        }
        self.step_at(step, outcome, detail, clock::now());
    }

    /// Record `stage` as skipped: nothing to do for this skill.
    #[inline]
    pub(crate) fn skip(&mut self, stage: Stage) {
        self.step(stage, StageOutcome::Skipped, None);
    }

    /// Record `stage` as passed or failed, as `result` went, and hand the
    /// result on: how a stage whose failure needs no detail ends.
    pub(crate) fn settle<T>(
        &mut self,
        stage: Stage,
        result: Result<T, InvokeError>,
    ) -> Result<T, InvokeError> {
        let outcome = match result {
            Ok(_) => StageOutcome::Passed,
            Err(_) => StageOutcome::Failed,
        };
        self.step(stage, outcome, None);
        result
    }

    /// A timed step that ended at `now`.
    #[inline]
    pub(crate) fn step_at(
        &mut self,
        step: Stage,
        outcome: StageOutcome,
        detail: Option<String>,
        now: Instant,
    ) {
        let took = micros(now.saturating_duration_since(self.last));
        self.steps.set(step, outcome, took, detail);
        self.last = now;
    }
}
