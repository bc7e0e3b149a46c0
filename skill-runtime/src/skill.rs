//! The `Skill` trait: what `#[skill]` generates, and what a hand-written skill implements.

use std::fmt::Display;
use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ctx::Ctx;
use crate::envelope::Caller;
use crate::failure::FailureModes;
use crate::manifest::Manifest;

/// A handler with a manifest.
///
/// `#[skill]` implements this trait on a zero-sized marker type named like the
/// function (a braced struct, so it lives in the type namespace only). Implement it
/// by hand for dynamic or generated skills and submit it with
/// [`register_skill!`](crate::register_skill).
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
/// impl Skill for Double {
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
///     async fn run(_ctx: Ctx<Self>, input: In) -> Result<Out, Never> {
///         Ok(Out { doubled: input.n * 2 })
///     }
/// }
/// skill_runtime::register_skill!(Double);
/// ```
pub trait Skill: Sized + Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    type Output: Serialize + JsonSchema + Send + 'static;
    type Error: FailureModes + Display + Send + 'static;

    const MANIFEST: &'static Manifest;
    const PRECONDITIONS: &'static [Precondition<Self>] = &[];
    const POSTCONDITIONS: &'static [Postcondition<Self>] = &[];
    const VALIDATION_RULES: &'static [ValidationRule<Self>] = &[];

    /// Run the handler. Policies (schemas, conditions, timeouts) are applied by the
    /// caller of this method, never inside it.
    fn run(
        ctx: Ctx<Self>,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

impl Manifest {
    /// A starting point for hand-written manifests: fill in `name`, `version`,
    /// `description`, `entrypoint` and `location` with struct update syntax.
    pub const DEFAULT: Manifest = Manifest {
        name: "",
        title: None,
        version: "",
        description: "",
        domain: None,
        owners: &[],
        status: crate::manifest::Status::Enabled,
        deprecation: None,
        kind: crate::manifest::Kind::Logic,
        autonomy: crate::manifest::Autonomy::L0,
        policy_tags: &[],
        rate_limit: None,
        redaction: crate::manifest::Redaction {
            inputs: &[],
            outputs: &[],
        },
        execution: crate::manifest::Execution::DEFAULT,
        constraints: crate::manifest::Constraints::DEFAULT,
        mcp: crate::manifest::Mcp::HIDDEN,
        reusable_by: &[],
        capabilities: &[],
        side_effects: &[],
        call_targets: &[],
        steps: &[],
        op: None,
        ambient_allowances: &[],
        entrypoint: crate::manifest::Entrypoint {
            module: "",
            handler: "",
        },
        location: crate::manifest::Location {
            file: "",
            line: 0,
            column: 0,
        },
    };
}

/// A condition checked before the handler runs (AI-COS `preconditions`).
pub struct Precondition<S: Skill> {
    /// Error code returned when the check fails, for example `EMPTY_INPUT`.
    pub error_code: &'static str,
    pub message: &'static str,
    /// Rust source of the check, exported as the condition's text.
    pub condition: &'static str,
    pub check: InputCheck<S::Input>,
}

/// A precondition's check: over the input, or over the input and the caller.
pub enum InputCheck<I> {
    Input(fn(&I) -> bool),
    InputCaller(fn(&I, &Caller) -> bool),
}

impl<I> InputCheck<I> {
    pub fn holds(&self, input: &I, caller: &Caller) -> bool {
        match self {
            InputCheck::Input(f) => f(input),
            InputCheck::InputCaller(f) => f(input, caller),
        }
    }
}

/// A postcondition's or validation rule's check: over the output, or over the
/// input and the output.
pub enum OutputCheck<I, O> {
    Output(fn(&O) -> bool),
    InputOutput(fn(&I, &O) -> bool),
}

impl<I, O> OutputCheck<I, O> {
    pub fn holds(&self, input: &I, output: &O) -> bool {
        match self {
            OutputCheck::Output(f) => f(output),
            OutputCheck::InputOutput(f) => f(input, output),
        }
    }
}

/// An assertion checked after the handler succeeded (AI-COS `postconditions`).
pub struct Postcondition<S: Skill> {
    pub assertion: &'static str,
    /// The action to take when the assertion fails.
    pub rollback_action: Option<&'static str>,
    pub check: OutputCheck<S::Input, S::Output>,
}

/// A rule over input and output; `error` fails the call, the others are recorded.
pub struct ValidationRule<S: Skill> {
    pub rule_id: &'static str,
    pub expression: &'static str,
    pub severity: Severity,
    pub message: &'static str,
    pub check: OutputCheck<S::Input, S::Output>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}
