//! Concurrent work inside one call ([`Ctx::all`]): futures polled by the
//! call's own task, so none outlives the call or needs `'static`.
//!
//! [`Ctx::all`]: crate::contract::skill::Ctx::all

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

enum Slot<F: Future> {
    Running(Pin<Box<F>>),
    Done(F::Output),
}

/// Every future of `futures`, polled together until all are done; their
/// outputs in the order given.
pub(crate) async fn all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut slots: Vec<Slot<F>> = futures
        .into_iter()
        .map(|f| Slot::Running(Box::pin(f)))
        .collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for slot in slots.iter_mut() {
            if let Slot::Running(f) = slot {
                match f.as_mut().poll(cx) {
                    Poll::Ready(out) => *slot = Slot::Done(out),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    slots
        .into_iter()
        .filter_map(|s| match s {
            Slot::Done(out) => Some(out),
            Slot::Running(_) => None,
        })
        .collect()
}
