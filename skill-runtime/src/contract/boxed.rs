//! A skill's input or output behind the erased table: a value whose type is
//! known at run time by its [`TypeId`], with no code compiled per type but its
//! drop glue. A value of up to [`INLINE`] bytes is held in the box itself, a
//! larger one on the heap: most inputs and outputs are a few strings and
//! numbers, and a job makes two boxes (its input, its output), each of which
//! would otherwise be an allocation and a free.
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
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;

/// The largest value held in the box itself (two `String`s), if its alignment
/// is at most 8.
pub(crate) const INLINE: usize = 48;

/// Room for a value held in the box itself.
type Room = UnsafeCell<MaybeUninit<[u64; INLINE / 8]>>;

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

/// An owned value of a type known at run time, in the box or on the heap.
pub(crate) struct Boxed {
    /// The allocation (dangling for a zero-sized type), or null when the
    /// value is in `room`. A raw pointer, not a `NonNull`: `NonNull`'s
    /// methods are generic, compiled once per type.
    ptr: *mut u8,
    kind: &'static Kind,
    /// Whether the value is still there: a handler takes its input out.
    full: bool,
    /// The value, when it is held inline. In an `UnsafeCell`: a value with
    /// interior mutability may be changed through the `&T` a shared borrow
    /// of the box hands out.
    room: Room,
}

// SAFETY: `Boxed::new` only boxes `Send` values; the box owns its value.
unsafe impl Send for Boxed {}

impl Boxed {
    /// Box `value`.
    pub(crate) fn new<T: Send + 'static>(value: T) -> Boxed {
        // A constant, not a call: `Kind::of` would be one more function per type.
        let kind = const { Kind::of::<T>() };
        // A constant block, so that even an unoptimized build compiles only
        // one of the two branches for each type.
        if const { fits::<T>(INLINE, align_of::<Room>()) } {
            let room = UnsafeCell::new(MaybeUninit::uninit());
            // SAFETY: `T` fits in the room, aligned (the constant above).
            unsafe { std::ptr::write(room.get() as *mut T, value) };
            return Boxed {
                ptr: std::ptr::null_mut(),
                kind,
                full: true,
                room,
            };
        }
        // SAFETY: a type's layout.
        let ptr = unsafe { allocate(kind.layout.size(), kind.layout.align()) };
        // SAFETY: `ptr` is a fresh allocation of `T`'s layout (or, for a
        // zero-sized `T`, a dangling pointer with its alignment).
        unsafe { std::ptr::write(ptr as *mut T, value) };
        Boxed {
            ptr,
            kind,
            full: true,
            room: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Where the value is: valid while the box is borrowed and not moved.
    fn at(&self) -> *mut u8 {
        match self.ptr.is_null() {
            true => self.room.get() as *mut u8,
            false => self.ptr,
        }
    }

    /// A pointer to the value, if it is there and of type `id`. The pointer
    /// is valid as long as the box is borrowed.
    pub(crate) fn get(&self, id: TypeId) -> Option<*mut u8> {
        (self.full && self.kind.id == id).then(|| self.at())
    }

    /// The value's pointer, if it is there and of type `id`, with the box
    /// marked empty: the caller must read the value out (`ptr::read`), which
    /// it then owns, before the box moves. The allocation is freed with the box.
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
pub(crate) unsafe extern "C" fn allocate(size: usize, align: usize) -> *mut u8 {
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

/// Whether a `T` fits in `size` bytes aligned to `align`.
pub(crate) const fn fits<T>(size: usize, align: usize) -> bool {
    size_of::<T>() <= size && align_of::<T>() <= align
}

impl Drop for Boxed {
    fn drop(&mut self) {
        // SAFETY: if `full`, the box holds a live value of the kind's type
        // (in its room, or at `ptr`), dropped once; a non-null `ptr` was
        // allocated for that type by `allocate`, with the kind's layout when
        // the type has a size.
        unsafe {
            if self.full
                && let Some(drop) = self.kind.drop
            {
                drop(self.at());
            }
            if !self.ptr.is_null() && self.kind.layout.size() != 0 {
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

    #[test]
    fn small_values_are_held_inline_and_large_ones_on_the_heap() {
        let drops = Arc::new(AtomicUsize::new(0));
        let small = Boxed::new((Counted(drops.clone()), String::from("in the box")));
        assert!(small.ptr.is_null());
        let large = Boxed::new((Counted(drops.clone()), [7u64; 8]));
        assert!(!large.ptr.is_null());
        // Moved, and read from where it now is.
        let moved = [small, large];
        let [small, large] = moved;
        let (counted, text) = small.downcast::<(Counted, String)>().expect("same type");
        assert_eq!(text, "in the box");
        drop(counted);
        drop(large);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        // Over-aligned values go to the heap.
        let aligned = Boxed::new(7u128);
        assert!(!aligned.ptr.is_null());
        assert_eq!(aligned.downcast::<u128>(), Some(7));
    }
}
