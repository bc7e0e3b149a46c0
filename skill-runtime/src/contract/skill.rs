//! The `Skill` trait: what `#[skill]` generates, and what a hand-written skill
//! implements; its typed conditions; and the context its handler runs in.

use std::fmt::Display;
use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use skill_core::failure::FailureModes;
use skill_core::manifest::{Manifest, Severity};

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use crate::contract::capability::{Calls, Capability, Declares};
use crate::contract::invocation::{Fence, Invocation, cents_down, cents_up};
use crate::model::caller::Caller;
use crate::model::envelope::{JobConstraints, RagContext, Scope};
use crate::model::error::OverBudget;
use crate::model::result::{Artifact, NextAction};
use crate::sync::lock;

/// A handler with a manifest.
///
/// `#[skill]` implements this trait on a zero-sized marker type named like the
/// function (a braced struct, so it lives in the type namespace only). Implement it
/// by hand for dynamic or generated skills and submit it with
/// [`register_skill!`](crate::register_skill).
///
/// # Safety
///
/// The handler reaches no ambient authority (files, network, processes, the
/// environment, a database) that its manifest does not declare, and runs no
/// skill it does not list in its call targets. `#[skill]` checks this where
/// the type checker and its scan can (the declared capabilities, the calls,
/// the body's ambient uses); an implementation written by hand promises it,
/// and `skill-registry audit` checks its compiled code as it checks the
/// macro's.
///
/// ```
/// use skill_runtime::prelude::*;
/// use skill_runtime::manifest::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// pub struct In { pub n: u32 }
/// #[derive(Serialize, JsonSchema)]
/// pub struct Out { pub doubled: u32 }
///
/// pub struct Double;
///
/// // SAFETY: the handler doubles a number: it reaches nothing outside.
/// unsafe impl Skill for Double {
///     type Input = In;
///     type Output = Out;
///     type Error = Never;
///     const MANIFEST: &'static Manifest = &Manifest {
///         name: "double",
///         version: "1.0.0",
///         description: "Double a number.",
///         entrypoint: Entrypoint { module: module_path!(), handler: "Double" },
///         location: Location { file: file!(), line: line!(), column: column!() },
///         ..Manifest::DEFAULT
///     };
///     async fn run(_ctx: Ctx<'_, Self>, input: In) -> Result<Out, Never> {
///         Ok(Out { doubled: input.n * 2 })
///     }
/// }
/// skill_runtime::register_skill!(Double);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a skill",
    label = "not a skill",
    note = "name a skill by its function, the marker type `#[skill]` defines (`calls(my_skill)`, `Ctx<my_skill>`); ops are named the same way"
)]
pub unsafe trait Skill: Sized + Send + Sync + 'static {
    /// What the skill takes.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// What it returns.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// Its failure modes.
    type Error: FailureModes + Display + Send + 'static;

    /// The manifest `#[skill]` declared.
    const MANIFEST: &'static Manifest;
    /// Checks of the input before the handler runs.
    const PRECONDITIONS: &'static [Precondition<Self>] = &[];
    /// Checks of the output after it.
    const POSTCONDITIONS: &'static [Postcondition<Self>] = &[];
    /// Rules on the output, with a severity.
    const VALIDATION_RULES: &'static [ValidationRule<Self>] = &[];

    /// Run the handler. Policies (schemas, conditions, timeouts) are applied by the
    /// caller of this method, never inside it. The context lives as long as
    /// the call, and the handler's future no longer ([`Ctx`]).
    fn run(
        ctx: Ctx<'_, Self>,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

/// A condition checked before the handler runs (AI-COS `preconditions`).
///
/// `#[repr(C)]`: the runtime reads the conditions of every skill through one
/// untyped view of this layout, so that checking them compiles no code per skill.
#[repr(C)]
pub struct Precondition<S: Skill> {
    /// Error code returned when the check fails, for example `EMPTY_INPUT`.
    pub error_code: &'static str,
    /// The message a refused input reports.
    pub message: &'static str,
    /// Rust source of the check, exported as the condition's text.
    pub condition: &'static str,
    /// The check.
    pub check: InputCheck<S::Input>,
}

/// A precondition's check: over the input, or over the input and the caller.
#[repr(C)]
pub enum InputCheck<I> {
    /// A check of the input.
    Input(fn(&I) -> bool),
    /// A check of the input and the caller.
    InputCaller(fn(&I, &Caller) -> bool),
}

impl<I> InputCheck<I> {
    /// Whether the check passes.
    pub fn holds(&self, input: &I, caller: &Caller) -> bool {
        match self {
            InputCheck::Input(f) => f(input),
            InputCheck::InputCaller(f) => f(input, caller),
        }
    }
}

/// A postcondition's or validation rule's check: over the output, or over the
/// input and the output.
#[repr(C)]
pub enum OutputCheck<I, O> {
    /// A check of the output.
    Output(fn(&O) -> bool),
    /// A check of the input and the output.
    InputOutput(fn(&I, &O) -> bool),
}

impl<I, O> OutputCheck<I, O> {
    /// Whether the check passes.
    pub fn holds(&self, input: &I, output: &O) -> bool {
        match self {
            OutputCheck::Output(f) => f(output),
            OutputCheck::InputOutput(f) => f(input, output),
        }
    }
}

/// An assertion checked after the handler succeeded (AI-COS `postconditions`).
///
/// `#[repr(C)]`: the runtime reads the conditions of every skill through one
/// untyped view of this layout, so that checking them compiles no code per skill.
#[repr(C)]
pub struct Postcondition<S: Skill> {
    /// Its Rust source.
    pub assertion: &'static str,
    /// The action to take when the assertion fails.
    pub rollback_action: Option<&'static str>,
    /// The check.
    pub check: OutputCheck<S::Input, S::Output>,
}

/// A rule over input and output; `error` fails the call, the others are recorded.
///
/// `#[repr(C)]`: the runtime reads the conditions of every skill through one
/// untyped view of this layout, so that checking them compiles no code per skill.
#[repr(C)]
pub struct ValidationRule<S: Skill> {
    /// Its id.
    pub rule_id: &'static str,
    /// Its Rust source.
    pub expression: &'static str,
    /// `error` rejects the output; `warning` notes it.
    pub severity: Severity,
    /// What a failed rule reports.
    pub message: &'static str,
    /// The check.
    pub check: OutputCheck<S::Input, S::Output>,
}

/// The context of skill `S` in one call. It hands out a capability's resource
/// only when `S` declares that capability, and calls only the skills `S`
/// declares as call targets.
///
/// It is bound to the call it was handed to: `'call` is a lifetime the
/// runtime chooses for each call (the handler is generic over it), invariant,
/// so nothing that outlives the call can hold the context or what it hands
/// out. A `static`, a `OnceLock`, a `thread_local!`, `Box::leak`,
/// `tokio::spawn` and `std::thread::spawn` all ask for `'static`, which no
/// context is: keeping one is a compile error, whatever the syntax, and the
/// authority a skill was given ends with its call. Concurrent work inside a
/// call runs within it: `join!`, `select!`, or [`Ctx::all`], which the call
/// awaits before it returns.
pub struct Ctx<'call, S> {
    pub(crate) inv: Arc<Invocation>,
    pub(crate) _skill: PhantomData<fn() -> S>,
    pub(crate) _call: PhantomData<fn(&'call ()) -> &'call ()>,
}

impl<S> Clone for Ctx<'_, S> {
    fn clone(&self) -> Self {
        Ctx {
            inv: self.inv.clone(),
            _skill: PhantomData,
            _call: PhantomData,
        }
    }
}

impl<S> fmt::Debug for Ctx<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("skill", &std::any::type_name::<S>())
            .field("trace_id", &self.inv.trace_id)
            .field("job_id", &self.inv.job_id)
            .finish_non_exhaustive()
    }
}

impl<'call, S> Ctx<'call, S> {
    /// Only the runtime builds contexts, after checking that every resource the
    /// skill's capabilities grant is registered; `'call` is the call's.
    pub(crate) fn new(inv: Arc<Invocation>) -> Self {
        Ctx {
            inv,
            _skill: PhantomData,
            _call: PhantomData,
        }
    }

    pub(crate) fn invocation(&self) -> &Invocation {
        &self.inv
    }

    /// The resource granted by capability `C`, which `S` must declare.
    pub fn resource<C: Capability>(&self) -> &C::Resource
    where
        S: Declares<C>,
    {
        match self.inv.resources.get::<C::Resource>() {
            Some(r) => r,
            // The runtime refuses to start when a declared capability's resource is
            // missing (`Runtime::new`), so this is a bug in the runtime, not input.
            None => unreachable!(
                "resource `{}` of capability `{}` checked at runtime start",
                std::any::type_name::<C::Resource>(),
                C::INFO.id
            ),
        }
    }

    /// Call skill `T`, which `S` must declare in `calls(...)`. The callee runs
    /// within this invocation: same job, same limits, its reports added to this
    /// job's; the caller's policies (timeout, retries) cover it. `#[skill]` checks
    /// there that `S` declares every capability of `T` ([`CallableBy`]), so the
    /// rule is reported once, at the declaration.
    ///
    /// [`CallableBy`]: crate::contract::capability::CallableBy
    ///
    /// The future is boxed: its type does not carry the bound, so a call of
    /// a skill `S` does not list is one error, at the call.
    #[allow(clippy::type_complexity)]
    pub fn call<T: Skill>(
        &self,
        input: T::Input,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<T::Output, T::Error>> + Send + 'call>>
    where
        S: Calls<T>,
    {
        Box::pin(T::run(Ctx::<'call, T>::new(self.inv.clone()), input))
    }

    /// Run `futures` at once, within this call: the call waits for all of
    /// them before it goes on, in the order given. The scoped form of
    /// parallel work in a handler (`tokio::spawn` cannot take a context: a
    /// task may outlive the call). For work bound to threads, hand owned
    /// data (never the context) to `tokio::task::spawn_blocking`.
    pub async fn all<F>(&self, futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
    where
        F: Future + Send,
        F::Output: Send,
    {
        crate::contract::scoped::all(futures).await
    }

    /// Who started the job.
    pub fn caller(&self) -> &Caller {
        &self.inv.caller
    }

    /// The job that started this one, if any.
    pub fn parent_job_id(&self) -> Option<&str> {
        self.inv.parent_job_id.as_deref()
    }

    /// The caller's limits for this job.
    pub fn constraints(&self) -> &JobConstraints {
        &self.inv.constraints
    }

    /// What the job is for (the seed's `intent`), when the caller said.
    pub fn intent(&self) -> Option<&str> {
        self.inv.intent.as_deref()
    }

    /// What the job processes (the seed's `scope`: entity type, ids, filters,
    /// limit), when the caller said; the input says how.
    pub fn scope(&self) -> Option<&Scope> {
        self.inv.scope.as_deref()
    }

    /// What retrieval found for the job (the seed's `ragContext`: documents,
    /// citations, truth level, confidence), when the caller sent it.
    pub fn rag_context(&self) -> Option<&RagContext> {
        self.inv.rag_context.as_deref()
    }

    /// True when the caller asked for a dry run: read, compute, report, but
    /// change nothing. A skill with side effects must ask: on a dry run of one
    /// that did not, the result and the record carry a warning note
    /// (`dry_run_not_read`).
    pub fn dry_run(&self) -> bool {
        let dry = self.inv.constraints.dry_run;
        if dry {
            self.inv.dry_run_read.store(true, Ordering::Relaxed);
        }
        dry
    }

    /// 1 for the first attempt, 2 for the first retry, ...
    pub fn attempt(&self) -> u32 {
        self.inv.attempt.load(Ordering::Relaxed)
    }

    /// Count `n` more items processed (the result's `metrics.items_processed`,
    /// the seed's `items_processed`: URLs audited, documents indexed, routes
    /// compared). Not a budget.
    pub fn report_items(&self, n: u64) {
        let mut r = lock(&self.inv.report);
        r.items = r.items.saturating_add(n);
    }

    /// Report how far the job has come: `done` of `total` (when known), and
    /// what it is doing. The run record keeps the last report; the job's
    /// watcher (an MCP client that sent a progress token) receives reports
    /// at most every [`PROGRESS_EVERY`](crate::PROGRESS_EVERY), and always
    /// the last. Cheap enough to call per item.
    pub fn report_progress(&self, done: u64, total: Option<u64>, message: Option<&str>) {
        self.inv.progress(crate::model::record::Progress {
            done,
            total,
            message: message.map(str::to_owned),
        });
    }

    /// Log `message` at `level` for whoever watches the job: an MCP client
    /// that asked for log messages at `level` or above (`logging/setLevel`,
    /// or the request's `_meta` on 2026-07-28) receives it as
    /// `notifications/message`, its logger the tool's name, with the values
    /// of the skill's redacted inputs scrubbed out. Nobody listening, it
    /// costs a branch.
    pub fn log(&self, level: crate::contract::watch::LogLevel, message: impl Into<String>) {
        if let Some(hook) = &self.inv.watch.log {
            hook(&crate::contract::watch::LogLine {
                level,
                message: message.into(),
            });
        }
    }

    /// Ask the user of the job's MCP client to fill a form: `message` says
    /// why, `schema` is the form, a flat JSON Schema object whose
    /// properties are strings, numbers, integers, booleans or enums (MCP's
    /// `elicitation/create`, `requestedSchema`). Waits for the user, within
    /// the job's timeout.
    ///
    /// Only a client on a session (2025-06-18, 2025-11-25) that declared
    /// elicitation can be asked; any other caller (a queue, a direct call,
    /// a 2026-07-28 stateless request) answers [`AskError::Unsupported`],
    /// so a skill that can run without the answer should go on without it.
    ///
    /// [`AskError::Unsupported`]: crate::ask::AskError::Unsupported
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        schema: serde_json::Value,
    ) -> Result<crate::contract::ask::Elicited, crate::contract::ask::AskError> {
        match &self.inv.watch.ask {
            Some(ask) => ask.elicit(message.into(), schema).await,
            None => Err(crate::contract::ask::AskError::Unsupported("elicitation")),
        }
    }

    /// Ask the model of the job's MCP client for a completion: `request`
    /// is MCP's `sampling/createMessage` params (`messages`, `maxTokens`,
    /// optionally `systemPrompt`, `modelPreferences`, ...), the answer its
    /// result (`role`, `content`, `model`, `stopReason`). The client's user
    /// may review both. Who can be asked: as [`Ctx::elicit`] says, for
    /// sampling.
    pub async fn sample(
        &self,
        request: serde_json::Value,
    ) -> Result<serde_json::Value, crate::contract::ask::AskError> {
        match &self.inv.watch.ask {
            Some(ask) => ask.sample(request).await,
            None => Err(crate::contract::ask::AskError::Unsupported("sampling")),
        }
    }

    /// Whether the job's caller cancelled it. The runtime stops the handler
    /// at its next await in any case; a loop that does not await between
    /// items checks this to stop sooner.
    pub fn is_cancelled(&self) -> bool {
        self.inv.stop.reason() == Some(crate::contract::invocation::StopReason::Cancelled)
    }

    /// Completes when the job's caller cancels it (never, for a job nobody
    /// can cancel). The handler itself is dropped at its next await; this is
    /// for work it hands to tasks of its own, which should stop too.
    pub async fn cancelled(&self) {
        match &self.inv.watch.cancel {
            Some(cancel) => cancel.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Count `n` more tokens used (the result's `metrics.tokens_used`). Past
    /// the job's `maxTokens` the job fails `budget_exceeded`: this returns
    /// the error, and the runtime stops the handler at its next await
    /// whatever it does with it.
    pub fn report_tokens(&self, n: u64) -> Result<(), OverBudget> {
        let used = {
            let mut r = lock(&self.inv.report);
            let used = r.tokens.unwrap_or(0).saturating_add(n);
            r.tokens = Some(used);
            used
        };
        self.inv
            .within("tokens", used, self.inv.constraints.max_tokens)
    }

    /// Count `n` more documents retrieved (the result's
    /// `metrics.docs_retrieved`). Past the job's `maxDocs` the job fails
    /// `budget_exceeded`, as [`Ctx::report_tokens`] says.
    pub fn report_docs(&self, n: u64) -> Result<(), OverBudget> {
        let used = {
            let mut r = lock(&self.inv.report);
            let used = r.docs.unwrap_or(0).saturating_add(n);
            r.docs = Some(used);
            used
        };
        self.inv
            .within("documents", used, self.inv.constraints.max_docs)
    }

    /// Count `dollars` more spent (the result's `metrics.cost`). Past the
    /// job's `budget` the job fails `budget_exceeded`, as
    /// [`Ctx::report_tokens`] says. A negative or non-finite amount counts
    /// as nothing.
    pub fn report_cost(&self, dollars: f64) -> Result<(), OverBudget> {
        let dollars = if dollars.is_finite() && dollars > 0.0 {
            dollars
        } else {
            0.0
        };
        let spent = {
            let mut r = lock(&self.inv.report);
            let spent = r.cost.unwrap_or(0.0) + dollars;
            r.cost = Some(spent);
            spent
        };
        match self.inv.constraints.budget {
            Some(b) => self.inv.within("cents", cents_up(spent), cents_down(b)),
            None => Ok(()),
        }
    }

    /// Attach an artifact to the result.
    pub fn add_artifact(&self, artifact: Artifact) {
        lock(&self.inv.report).artifacts.push(artifact);
    }

    /// What the caller should do after a success (default: `complete`).
    pub fn set_next_action(&self, next: NextAction) {
        lock(&self.inv.report).next_action = Some(next);
    }

    /// The trace this job belongs to.
    pub fn trace_id(&self) -> &str {
        &self.inv.trace_id
    }

    /// This job's id.
    pub fn job_id(&self) -> &str {
        &self.inv.job_id
    }

    /// The job's hold on its idempotency key, when it has one (a keyed job:
    /// the caller's key, the skill's strategy, an intent, or a queued job of
    /// an effectful skill). An effect that must happen once per key is
    /// recorded with [`Fence::key`] and checked against it; see [`Fence`].
    pub fn fence(&self) -> Option<&Fence> {
        self.inv.fence.get()
    }

    /// When the runtime started this invocation; handlers never compute it.
    pub fn started_at(&self) -> SystemTime {
        self.inv.started_at
    }
}
