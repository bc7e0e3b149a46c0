//! A skill's input or output behind the erased table: a heap value whose type
//! is known at run time by its [`TypeId`], with no code compiled per type but
//! its drop glue.
//!
//! `Box<dyn Any>` would do the same job with more code per skill: its vtable
//! compiles a `type_id` method for each type, every `downcast_ref` and
//! `downcast_mut` is a generic function of its own, and an input that the
//! handler takes out needs an `Option` around it (with that `Option`'s drop
//! glue and `take`). Here the type check is a comparison with a `TypeId`
//! computed at compile time, the pointer handed out is untyped, and taking the
//! value out only marks the box empty. The one generic function is
//! [`Boxed::new`]; reading a value out is the typed caller's `ptr::read`.

use std::alloc::{Layout, dealloc};
use std::any::TypeId;

/// What the box needs to know of its value's type: its identity, its layout
/// and its drop glue (absent for types without any).
pub(crate) struct Kind {
    pub(crate) id: TypeId,
    layout: Layout,
    drop: Option<unsafe fn(*mut u8)>,
}

impl Kind {
    /// The kind of `T`, a constant.
    pub(crate) const fn of<T: 'static>() -> &'static Kind {
        const {
            &Kind {
                id: TypeId::of::<T>(),
                layout: Layout::new::<T>(),
                drop: if std::mem::needs_drop::<T>() {
                    // SAFETY: `*mut T` and `*mut u8` are ABI-compatible (both
                    // thin pointers), so `drop_in_place::<T>` may be called
                    // through this type; it is only ever called with a pointer
                    // to a live `T` (see `Boxed::drop`).
                    Some(unsafe {
                        std::mem::transmute::<unsafe fn(*mut T), unsafe fn(*mut u8)>(
                            std::ptr::drop_in_place::<T>,
                        )
                    })
                } else {
                    None
                },
            }
        }
    }
}

/// An owned value of a type known at run time, on the heap.
pub(crate) struct Boxed {
    /// The allocation (dangling for a zero-sized type). A raw pointer, not a
    /// `NonNull`: `NonNull`'s methods are generic, compiled once per type.
    ptr: *mut u8,
    kind: &'static Kind,
    /// Whether the value is still there: a handler takes its input out.
    full: bool,
}

// SAFETY: `Boxed::new` only boxes `Send` values; the box owns its value.
unsafe impl Send for Boxed {}

impl Boxed {
    /// Box `value`.
    pub(crate) fn new<T: Send + 'static>(value: T) -> Boxed {
        // A constant, not a call: `Kind::of` would be one more function per type.
        let kind = const { Kind::of::<T>() };
        // SAFETY: a type's layout.
        let ptr = unsafe { allocate(kind.layout.size(), kind.layout.align()) };
        // SAFETY: `ptr` is a fresh allocation of `T`'s layout (or, for a
        // zero-sized `T`, a dangling pointer with its alignment).
        unsafe { std::ptr::write(ptr as *mut T, value) };
        Boxed {
            ptr,
            kind,
            full: true,
        }
    }

    /// A pointer to the value, if it is there and of type `id`. The pointer
    /// is valid as long as the box is borrowed.
    pub(crate) fn get(&self, id: TypeId) -> Option<*mut u8> {
        (self.full && self.kind.id == id).then_some(self.ptr)
    }

    /// The value's pointer, if it is there and of type `id`, with the box
    /// marked empty: the caller must read the value out (`ptr::read`), which
    /// it then owns. The allocation is freed with the box.
    pub(crate) fn take(&mut self, id: TypeId) -> Option<*mut u8> {
        let ptr = self.get(id)?;
        self.full = false;
        Some(ptr)
    }

    /// The value, if it is of type `T` (typed calls get their output so).
    pub(crate) fn downcast<T: 'static>(mut self) -> Option<T> {
        let ptr = self.take(TypeId::of::<T>())?;
        // SAFETY: the box held a live `T` (same `TypeId`), now marked taken.
        Some(unsafe { std::ptr::read(ptr as *const T) })
    }
}

/// An allocation of `size` bytes aligned to `align` (a valid layout), or a
/// dangling, aligned pointer when `size` is zero; out of memory, the process
/// aborts, as `Box::new` would.
///
/// Not generic, and `extern "C"` so that it cannot unwind: a call to it needs
/// no unwinding path, which in [`Boxed::new`] would drop the value being
/// boxed (one more block of code per boxed type).
///
/// # Safety
/// `size` and `align` are a valid layout's (`Layout::from_size_align` would
/// accept them).
unsafe extern "C" fn allocate(size: usize, align: usize) -> *mut u8 {
    if size == 0 {
        return std::ptr::without_provenance_mut(align);
    }
    // SAFETY: as the caller promised.
    let layout = unsafe { Layout::from_size_align_unchecked(size, align) };
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    ptr
}

impl Drop for Boxed {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated for the kind's type by `allocate`: if
        // `full`, it holds a live value of that type, dropped once; the
        // allocation, when the type has a size, has the kind's layout.
        unsafe {
            if self.full
                && let Some(drop) = self.kind.drop
            {
                drop(self.ptr);
            }
            if self.kind.layout.size() != 0 {
                dealloc(self.ptr, self.kind.layout);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_value_is_dropped_once_whether_taken_or_not() {
        let drops = Arc::new(AtomicUsize::new(0));
        drop(Boxed::new(Counted(drops.clone())));
        assert_eq!(drops.load(Ordering::SeqCst), 1);

        let b = Boxed::new(Counted(drops.clone()));
        let taken = b.downcast::<Counted>().expect("same type");
        assert_eq!(drops.load(Ordering::SeqCst), 1, "taken, not dropped");
        drop(taken);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_type_is_checked() {
        let mut b = Boxed::new(String::from("x"));
        assert!(b.get(TypeId::of::<u32>()).is_none());
        assert!(b.take(TypeId::of::<u32>()).is_none());
        assert!(b.get(TypeId::of::<String>()).is_some());
        assert!(b.take(TypeId::of::<String>()).is_some());
        // Taken: nothing left to hand out (the caller owned the read value;
        // here it was never read, so it leaks, as `mem::forget` would).
        assert!(b.get(TypeId::of::<String>()).is_none());
        assert!(Boxed::new(7u8).downcast::<u16>().is_none());
        assert_eq!(Boxed::new(()).downcast::<()>(), Some(()));
        assert_eq!(Boxed::new(7u64).downcast::<u64>(), Some(7));
    }
}
