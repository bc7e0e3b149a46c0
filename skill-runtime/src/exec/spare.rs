//! The thread's spare blocks ([`crate::spare`]) for the blocks a job makes
//! and lets go itself: its invocation (made when the job starts, let go
//! when it ends), its run record (made when it ends, let go when the memory
//! sink lets its oldest record go, which a full sink does on every job), and
//! the record's copy of params text. The state's block is
//! kept by [`State`](crate::exec::state::State) and the output's by
//! [`Data`](crate::model::data::Data) in the same way.

use std::cell::Cell;
use std::mem::MaybeUninit;
use std::sync::Arc;

use crate::contract::invocation::Invocation;
use crate::model::record::RunRecord;
use crate::spare::{ArcSlot, arc_block, let_go_arc};

thread_local! {
    static INVOCATION: ArcSlot<Invocation> = const { Cell::new(None) };
    static RECORD: ArcSlot<RunRecord> = const { Cell::new(None) };
    static TEXT: Cell<String> = const { Cell::new(String::new()) };
}

/// The longest buffer kept for params text: a record keeps params text up
/// to its budget, and a buffer used again for shorter text must not hold
/// much more than that text in the sink.
const TEXT_KEPT: usize = 4096;

/// `text` in a buffer of its own: the thread's spare, when it is large
/// enough and not more than twice the size (so that a record does not keep
/// a large buffer for short text), else a new one.
#[inline]
pub(crate) fn params_text(text: &str) -> String {
    let spare = TEXT.try_with(Cell::take).unwrap_or_default();
    let fits = text.len() <= spare.capacity() && spare.capacity() <= 2 * text.len().max(32);
    let mut buffer = if fits {
        spare
    } else {
        String::with_capacity(text.len())
    };
    buffer.push_str(text);
    buffer
}

/// Let params text go: its buffer, emptied, becomes the thread's spare if it
/// is not large (else it is freed).
#[inline]
pub(crate) fn let_go_text(mut text: String) {
    if text.capacity() == 0 || text.capacity() > TEXT_KEPT {
        return;
    }
    text.clear();
    let _ = TEXT.try_with(|s| s.set(text));
}

/// An empty block for an invocation, held by no one else.
#[inline]
pub(crate) fn invocation_block() -> Arc<MaybeUninit<Invocation>> {
    arc_block(&INVOCATION)
}

/// Let an invocation go.
#[inline]
pub(crate) fn let_go_invocation(inv: Arc<Invocation>) {
    let_go_arc(&INVOCATION, inv);
}

/// An empty block for a run record, held by no one else.
#[inline]
pub(crate) fn record_block() -> Arc<MaybeUninit<RunRecord>> {
    arc_block(&RECORD)
}

/// Let a run record go, and its output and params text with it (see
/// [`Data::let_go`](crate::model::data::Data::let_go)).
#[inline]
pub(crate) fn let_go_record(mut record: Arc<RunRecord>) {
    if let Some(r) = Arc::get_mut(&mut record) {
        if let Some(output) = r.output.take() {
            output.let_go();
        }
        if let Some(text) = r.params.take_text() {
            let_go_text(text);
        }
    }
    let_go_arc(&RECORD, record);
}
