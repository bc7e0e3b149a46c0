//! Asking the job's caller while the handler runs: a form for its user to
//! fill ([`Ctx::elicit`](crate::Ctx::elicit)), or a completion from its
//! model ([`Ctx::sample`](crate::Ctx::sample)). Only an MCP client that
//! declared elicitation or sampling, calling on a session (2025-06-18 or
//! 2025-11-25), can be asked; every other caller answers
//! [`AskError::Unsupported`].

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

/// What the handler is waiting for.
pub(crate) type Asked<'a, T> = Pin<Box<dyn Future<Output = Result<T, AskError>> + Send + 'a>>;

/// The job's caller, askable while the job runs.
pub(crate) trait Ask: Send + Sync {
    /// Ask its user to fill the form `schema` (a flat JSON Schema object
    /// of primitive properties), saying `message`.
    fn elicit(&self, message: String, schema: Value) -> Asked<'_, Elicited>;
    /// Ask its model for a completion: `request` is MCP's
    /// `sampling/createMessage` params; the answer its result.
    fn sample(&self, request: Value) -> Asked<'_, Value>;
}

/// What the user did with a form.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited {
    /// Filled it in: the values, by property.
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

/// Why the caller could not be asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// No one to ask: the job was not called by an MCP client on a session
    /// that declared this capability (a queued job, a direct call, a
    /// 2026-07-28 stateless request, or a client that cannot).
    #[error(
        "the job's caller cannot be asked for {0}: only an MCP client on a session that declared \
         the `{0}` capability can"
    )]
    Unsupported(&'static str),
    /// The form or request is not one MCP carries (a form's properties
    /// must be strings, numbers, integers, booleans or enums).
    #[error("not a valid {what}: {why}")]
    Invalid {
        /// `elicitation schema` or `sampling request`.
        what: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The client failed to answer (its error, or the session closed).
    #[error("the client did not answer: {0}")]
    Failed(String),
}
