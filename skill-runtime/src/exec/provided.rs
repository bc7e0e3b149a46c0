//! The one failure type of the handlers the runtime provides (an external
//! op's, a pipeline's), told apart by the failure mode each declares.

use std::fmt;
use std::marker::PhantomData;

use skill_core::failure::{FailureMode, FailureModes};

/// Which provided handler failed, and its one failure mode.
pub trait Provided: Send + Sync + 'static {
    /// The failure mode of every failure of this kind of handler.
    const MODES: &'static [FailureMode];
}

/// Why a handler the runtime provides failed: an op's run (`op_failed`), a
/// pipeline's step (`pipeline_failed`). Its message says what, and where.
pub struct Failed<K: Provided> {
    message: String,
    kind: PhantomData<fn() -> K>,
}

impl<K: Provided> Failed<K> {
    pub(crate) fn new(message: String) -> Failed<K> {
        Failed {
            message,
            kind: PhantomData,
        }
    }
}

impl<K: Provided> Clone for Failed<K> {
    fn clone(&self) -> Self {
        Failed::new(self.message.clone())
    }
}

impl<K: Provided> PartialEq for Failed<K> {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl<K: Provided> Eq for Failed<K> {}

impl<K: Provided> fmt::Debug for Failed<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failed")
            .field("code", &K::MODES[0].code)
            .field("message", &self.message)
            .finish()
    }
}

impl<K: Provided> fmt::Display for Failed<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<K: Provided> std::error::Error for Failed<K> {}

impl<K: Provided> FailureModes for Failed<K> {
    const FAILURE_MODES: &'static [FailureMode] = K::MODES;

    fn failure_mode(&self) -> &'static FailureMode {
        &K::MODES[0]
    }
}

/// An external op (`runtime = "mcp" | "http" | "script"`).
pub enum Op {}

impl Provided for Op {
    const MODES: &'static [FailureMode] = &[FailureMode {
        code: "op_failed",
        description: "Op execution failed.",
        retryable: false,
    }];
}

/// A pipeline, failed at one of its steps.
pub enum Pipeline {}

impl Provided for Pipeline {
    const MODES: &'static [FailureMode] = &[FailureMode {
        code: "pipeline_failed",
        description: "Pipeline execution failed.",
        retryable: false,
    }];
}

/// Why an external op failed.
pub type OpFailed = Failed<Op>;

/// Why a pipeline stopped: the step that failed and its error.
pub type PipelineFailed = Failed<Pipeline>;
