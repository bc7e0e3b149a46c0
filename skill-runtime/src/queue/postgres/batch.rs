//! Requests of one kind made at the same time, sent as one statement: what
//! makes many callers enqueueing, or many jobs finishing, cost one
//! transaction (one commit) instead of one each. Nothing waits to fill a
//! batch: a request is sent at once when a connection is free, and what
//! comes while every connection is busy goes in the next batch. Under light
//! load a batch is one request; under heavy load batches grow, and commits
//! per job shrink.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::exec::policy::BoxFuture;
use crate::queue::api::QueueError;

/// The most requests in one batch.
const MAX: usize = 256;

type Reply<R> = oneshot::Sender<Result<R, QueueError>>;

/// A batcher of requests `T` answered `R`.
pub(super) struct Batcher<T, R> {
    tx: mpsc::UnboundedSender<(T, Reply<R>)>,
}

impl<T: Send + 'static, R: Send + 'static> Batcher<T, R> {
    /// A batcher whose batches `send` sends (one answer per request, in
    /// order), at most `at_once` batches in flight. Start it inside a tokio
    /// runtime; it stops when dropped.
    pub(super) fn start<F>(at_once: usize, send: F) -> Batcher<T, R>
    where
        F: Fn(Vec<T>) -> BoxFuture<'static, Result<Vec<R>, QueueError>> + Send + Sync + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<(T, Reply<R>)>();
        let send = Arc::new(send);
        let free = Arc::new(Semaphore::new(at_once.max(1)));
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                // A connection free first: what comes meanwhile joins.
                let Ok(permit) = free.clone().acquire_owned().await else {
                    return;
                };
                let mut batch = vec![first];
                while batch.len() < MAX {
                    match rx.try_recv() {
                        Ok(item) => batch.push(item),
                        Err(_) => break,
                    }
                }
                let send = send.clone();
                tokio::spawn(async move {
                    let (items, replies): (Vec<T>, Vec<Reply<R>>) = batch.into_iter().unzip();
                    match send(items).await {
                        Ok(answers) => {
                            for (reply, answer) in replies.into_iter().zip(answers) {
                                let _ = reply.send(Ok(answer));
                            }
                        }
                        Err(e) => {
                            for reply in replies {
                                let _ = reply.send(Err(e.clone()));
                            }
                        }
                    }
                    drop(permit);
                });
            }
        });
        Batcher { tx }
    }

    /// Send `item` with the next batch; its answer.
    pub(super) fn call(&self, item: T) -> impl Future<Output = Result<R, QueueError>> + use<T, R> {
        let (reply, answer) = oneshot::channel();
        let sent = self.tx.send((item, reply)).is_ok();
        async move {
            if !sent {
                return Err(QueueError::Invalid(
                    "the backend is shutting down".to_owned(),
                ));
            }
            answer.await.unwrap_or_else(|_| {
                Err(QueueError::Invalid(
                    "a batch of requests was dropped unanswered".to_owned(),
                ))
            })
        }
    }
}
