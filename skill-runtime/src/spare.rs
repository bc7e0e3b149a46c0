//! A thread's spare heap block for a type, kept when a value of it is let go
//! and written into by the next value made on that thread, instead of a
//! `free` and then a `malloc` of the same size.
//!
//! A job makes and lets go a few blocks of fixed types (its future, its
//! state, its invocation, its run record, its output's); glibc's per-thread
//! cache serves them, but through its bins and their checks, where taking
//! a spare is a load and a store (docs/performance.md has the figures). A
//! thread keeps at most one spare of each type, freed when the thread ends.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::Cell;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::pin::Pin;
use std::ptr::{self, NonNull};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread::LocalKey;

/// Where a thread keeps its spare block for an `Arc<T>`.
pub(crate) type ArcSlot<T> = Cell<Option<Arc<MaybeUninit<T>>>>;

/// Where a thread keeps its spare block for a `Box<T>`.
pub(crate) type BoxSlot<T> = Cell<Option<Box<MaybeUninit<T>>>>;

/// An empty block for an `Arc<T>`, held by no one else: the thread's spare,
/// or a new one.
#[inline]
pub(crate) fn arc_block<T>(slot: &'static LocalKey<ArcSlot<T>>) -> Arc<MaybeUninit<T>> {
    match slot.try_with(Cell::take) {
        Ok(Some(block)) => block,
        // None spare, or the thread is ending.
        _ => Arc::new_uninit(),
    }
}

/// The room for the value in an empty block that [`arc_block`] gave: written
/// there, in place (a value given to `Arc::new` is built on the stack and
/// copied whole).
#[inline]
pub(crate) fn room<T>(block: &mut Arc<MaybeUninit<T>>) -> &mut MaybeUninit<T> {
    match Arc::get_mut(block) {
        Some(room) => room,
        None => unreachable!("an empty block has no other holder"),
    }
}

/// An empty block for a `Box<T>`: the thread's spare, or a new one.
#[inline]
pub(crate) fn box_block<T>(slot: &'static LocalKey<BoxSlot<T>>) -> Box<MaybeUninit<T>> {
    match slot.try_with(Cell::take) {
        Ok(Some(block)) => block,
        _ => Box::new_uninit(),
    }
}

/// Let `value` go; its block becomes the thread's spare if no one else holds
/// it, strongly or weakly (else this is an ordinary drop).
#[inline]
pub(crate) fn let_go_arc<T>(slot: &'static LocalKey<ArcSlot<T>>, mut value: Arc<T>) {
    if Arc::get_mut(&mut value).is_none() {
        return;
    }
    let at = Arc::into_raw(value).cast_mut();
    // SAFETY: `at` is the value of an `Arc` that no one else holds (`get_mut`
    // above), so it is dropped here once and nothing reads it after. The
    // block is then owned again as an `Arc` of `MaybeUninit<T>`, which has
    // `T`'s size and alignment, as `Arc::from_raw` requires, and whose drop
    // frees the block without dropping a value.
    let empty = unsafe {
        ptr::drop_in_place(at);
        Arc::from_raw(at.cast_const().cast::<MaybeUninit<T>>())
    };
    keep(slot, empty);
}

/// Let `value` go; its block becomes the thread's spare.
#[inline]
pub(crate) fn let_go_box<T>(slot: &'static LocalKey<BoxSlot<T>>, value: Box<T>) {
    let at = Box::into_raw(value);
    // SAFETY: `at` is the block of a `Box<T>`, given up above: its value is
    // dropped here once and nothing reads it after, and the block is owned
    // again as a `Box` of `MaybeUninit<T>` (the same layout), whose drop
    // frees it without dropping a value.
    let empty = unsafe {
        ptr::drop_in_place(at);
        Box::from_raw(at.cast::<MaybeUninit<T>>())
    };
    keep(slot, empty);
}

/// `empty` as the thread's spare; freed if the thread has one already, or is
/// ending.
#[inline]
fn keep<B>(slot: &'static LocalKey<Cell<Option<B>>>, empty: B) {
    if let Ok(Some(extra)) = slot.try_with(|s| s.replace(Some(empty))) {
        drop(extra);
    }
}

/// A future in a heap block of its own, as `Pin<Box<F>>` holds it, the
/// block taken from and given back to the thread's spare future block. One
/// slot serves every future type: a spare of another layout is freed and a
/// block made.
pub(crate) struct Spared<F> {
    at: NonNull<F>,
    owns: PhantomData<F>,
}

/// A heap block, empty, and its layout: freed when dropped.
struct RawBlock {
    at: NonNull<u8>,
    layout: Layout,
}

impl Drop for RawBlock {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout (`Spared::new`), and empty.
        unsafe { dealloc(self.at.as_ptr(), self.layout) };
    }
}

thread_local! {
    static FUTURE: Cell<Option<RawBlock>> = const { Cell::new(None) };
}

impl<F> Spared<F> {
    /// `future`, written into the thread's spare block if it has one of
    /// this layout, else into a new one.
    #[inline]
    pub(crate) fn new(future: F) -> Spared<F> {
        let layout = const {
            assert!(size_of::<F>() > 0, "a job's future has a size");
            Layout::new::<F>()
        };
        let at = match FUTURE.try_with(Cell::take) {
            Ok(Some(block)) if block.layout == layout => ManuallyDrop::new(block).at,
            // (A spare of another layout is freed here.)
            _ => {
                // SAFETY: the layout has a size (asserted above).
                let at = unsafe { alloc(layout) };
                NonNull::new(at).unwrap_or_else(|| handle_alloc_error(layout))
            }
        };
        let at = at.cast::<F>();
        // SAFETY: an empty block of `F`'s layout, owned from here by this
        // `Spared`, which drops the value in place and never moves it.
        unsafe { at.as_ptr().write(future) };
        Spared {
            at,
            owns: PhantomData,
        }
    }

    /// The size of the future, as its block holds it.
    #[cfg(test)]
    pub(crate) fn size(&self) -> usize {
        size_of::<F>()
    }
}

impl<F> Drop for Spared<F> {
    fn drop(&mut self) {
        // SAFETY: the value written by `new`, dropped once, here; the block
        // is then empty and is owned by the `RawBlock` (the layout it was
        // allocated with).
        let empty = unsafe {
            ptr::drop_in_place(self.at.as_ptr());
            RawBlock {
                at: self.at.cast(),
                layout: Layout::new::<F>(),
            }
        };
        keep(&FUTURE, empty);
    }
}

impl<F: Future> Future for Spared<F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: the future stays where `new` wrote it until `drop` drops it
        // in place: it is pinned.
        unsafe { Pin::new_unchecked(&mut *self.at.as_ptr()) }.poll(cx)
    }
}

// The future is owned, and moved only as a pointer: as `Box<F>`.
impl<F> Unpin for Spared<F> {}
// SAFETY: as `Box<F>`: the `Spared` owns the `F`, and shares it only
// through `&self`.
unsafe impl<F: Send> Send for Spared<F> {}
// SAFETY: likewise.
unsafe impl<F: Sync> Sync for Spared<F> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DROPS: AtomicUsize = AtomicUsize::new(0);

    struct Counted(#[expect(dead_code, reason = "gives the block a size")] [u64; 8]);

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    thread_local! {
        static ARCS: ArcSlot<Counted> = const { Cell::new(None) };
        static BOXES: BoxSlot<Counted> = const { Cell::new(None) };
    }

    fn drops() -> usize {
        DROPS.load(Ordering::Relaxed)
    }

    fn arc_spare_is_empty() -> bool {
        ARCS.with(|s| {
            let spare = s.take();
            let empty = spare.is_none();
            s.set(spare);
            empty
        })
    }

    /// A block let go alone is reused, its value dropped once; one held
    /// elsewhere is dropped as usual, when its last holder lets it go.
    #[test]
    fn a_block_let_go_alone_is_reused_and_its_value_dropped_once() {
        let before = drops();
        let mut block = arc_block(&ARCS);
        Arc::get_mut(&mut block).unwrap().write(Counted([1; 8]));
        // SAFETY: written just above.
        let first = unsafe { block.assume_init() };
        let at = Arc::as_ptr(&first).addr();
        let_go_arc(&ARCS, first);
        assert_eq!(drops(), before + 1);
        assert!(!arc_spare_is_empty());
        assert_eq!(
            Arc::as_ptr(&arc_block(&ARCS)).addr(),
            at,
            "the spare is reused"
        );
        assert!(arc_spare_is_empty());

        let held = Arc::new(Counted([2; 8]));
        let other = Arc::clone(&held);
        let_go_arc(&ARCS, held);
        assert_eq!(drops(), before + 1, "still held");
        assert!(arc_spare_is_empty(), "a block held elsewhere is not kept");
        drop(other);
        assert_eq!(drops(), before + 2);

        let boxed = Box::new(Counted([3; 8]));
        let at = (&raw const *boxed).addr();
        let_go_box(&BOXES, boxed);
        assert_eq!(drops(), before + 3);
        assert_eq!(
            (&raw const *box_block(&BOXES)).addr(),
            at,
            "the spare is reused"
        );
    }
}
