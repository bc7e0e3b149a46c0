//! An agent's typed run: its input decoded, its pre-conditions, its body
//! with the agent as the caller of every skill, its post-conditions.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use skill_core::failure::FailureModes;
use skill_core::manifest::PermissionLevel;

use crate::agent::contract::PostCheck;
use crate::agent::handler::{Agent, AgentCtx};
use crate::contract::invocation::Handler;
use crate::exec::runtime::Runtime;
use crate::model::caller::Caller;
use crate::model::graph::GraphState;
use crate::model::id::Id;

/// One agent run, as handed to the agent's typed code.
pub(crate) struct Started {
    pub params: Value,
    pub job_id: Id,
    pub trace_id: Id,
    pub dry_run: bool,
    /// The run's state: each skill call is noted in it, as a node.
    pub graph: Arc<Mutex<GraphState>>,
    /// Whether the run is a job's, which a worker may take up again: then
    /// the state is saved after each call, and each call keyed by the run.
    pub durable: bool,
    /// The job's cancellation, which each skill call carries.
    pub cancel: Option<crate::contract::watch::Cancel>,
}

/// What the typed code gives back.
pub(crate) struct Finished {
    pub output: Result<Value, AgentFailure>,
    pub errors: u32,
    pub calls: u32,
}

/// The escalation a run calls for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EscalationDecision {
    /// The agent to hand over to.
    pub target_agent: &'static str,
    /// Whether a human must take over.
    pub human_required: bool,
    /// How long the target has to answer.
    pub timeout_hours: u32,
    /// Each trigger that held, as text (`confidence 0.62 < 0.7`).
    pub reasons: Vec<String>,
}

/// Why a run failed: a code (a pre- or post-condition's `error_code`, the
/// agent's failure mode, `invalid_input`) and a message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentFailure {
    /// The contract's error code.
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// The input was refused (its schema or a pre-condition): the body never
    /// ran, and the caller is the one to fix it.
    pub input_error: bool,
    /// Running again may succeed: the failure mode the body returned says so.
    pub retryable: bool,
}

/// A run that failed after its input was accepted, not worth retrying as is.
pub(crate) fn failed(code: &str, message: String) -> Result<Value, AgentFailure> {
    Err(AgentFailure {
        code: code.to_owned(),
        message,
        input_error: false,
        retryable: false,
    })
}

/// A run whose input was refused.
pub(crate) fn refused(code: &str, message: String) -> Result<Value, AgentFailure> {
    Err(AgentFailure {
        code: code.to_owned(),
        message,
        input_error: true,
        retryable: false,
    })
}

pub(crate) async fn run_typed<A: Agent>(runtime: &Runtime, s: Started) -> Finished {
    let errors = Arc::new(AtomicU32::new(0));
    let calls = Arc::new(AtomicU32::new(0));
    let output = run_checked::<A>(runtime, s, &errors, &calls).await;
    Finished {
        output,
        errors: errors.load(Ordering::Relaxed),
        calls: calls.load(Ordering::Relaxed),
    }
}

async fn run_checked<A: Agent>(
    runtime: &Runtime,
    s: Started,
    errors: &Arc<AtomicU32>,
    calls: &Arc<AtomicU32>,
) -> Result<Value, AgentFailure> {
    let c = A::CONTRACT;
    let decode = |params: &Value| serde_json::from_value::<A::Input>(params.clone());
    let input = match decode(&s.params) {
        Ok(i) => i,
        Err(e) => {
            return refused(
                "invalid_input",
                format!("input for agent `{}` does not decode: {e}", c.id),
            );
        }
    };
    for pre in A::PRE_CONDITIONS {
        if !(pre.check)(&input) {
            return refused(
                pre.error_code,
                format!(
                    "agent `{}` refused the input: pre-condition `{}` does not hold",
                    c.id, pre.expression
                ),
            );
        }
    }
    // A post-condition over the input reads it again: the body consumed it.
    let kept = A::POST_CONDITIONS
        .iter()
        .any(|p| matches!(p.check, PostCheck::Both(_)))
        .then(|| decode(&s.params).ok())
        .flatten();
    let ctx = AgentCtx::<A> {
        runtime: runtime.clone(),
        caller: Caller::agent(c.role, PermissionLevel::Execute),
        job_id: s.job_id,
        trace_id: s.trace_id,
        dry_run: s.dry_run,
        errors: errors.clone(),
        calls: calls.clone(),
        graph: s.graph,
        durable: s.durable,
        cancel: s.cancel,
        _agent: PhantomData,
        _call: PhantomData,
    };
    let out = match Handler(Box::pin(A::execute(ctx, input))).await {
        Ok(out) => out,
        Err(e) => {
            let mode = e.failure_mode();
            return Err(AgentFailure {
                code: mode.code.to_owned(),
                message: format!("agent `{}` failed: {e}", c.id),
                input_error: false,
                retryable: mode.retryable,
            });
        }
    };
    for post in A::POST_CONDITIONS {
        let holds = match (&post.check, &kept) {
            (PostCheck::Output(f), _) => f(&out),
            (PostCheck::Both(f), Some(input)) => f(input, &out),
            (PostCheck::Both(_), None) => false,
        };
        if !holds {
            return failed(
                post.error_code,
                format!(
                    "agent `{}` broke post-condition `{}`",
                    c.id, post.expression
                ),
            );
        }
    }
    serde_json::to_value(&out).or_else(|e| {
        failed(
            "invalid_output",
            format!("the output of agent `{}` does not serialize: {e}", c.id),
        )
    })
}
