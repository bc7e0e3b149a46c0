//! A call watched for its request: the handler's progress reports become
//! `notifications/progress`, the client's cancellation cancels the job.

use std::future::Future;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::{RequestContext, RoleServer};

use crate::contract::watch::{Cancel, Watch};
use crate::model::record::Progress;

/// Run `call` watched for the request of `context`: the handler's progress
/// reports become `notifications/progress` when the request carried a
/// progress token (sent in order, before the result), and the client's
/// cancellation (`notifications/cancelled`, or the request's stream closed)
/// cancels the job.
pub(crate) async fn watched<F, Fut>(
    context: &RequestContext<RoleServer>,
    call: F,
) -> Result<CallToolResult, ErrorData>
where
    F: FnOnce(Watch) -> Fut,
    Fut: Future<Output = Result<CallToolResult, ErrorData>>,
{
    let cancel = Cancel::new();
    let mut watch = Watch::new().cancel_with(cancel.clone());
    let token = context.meta.get_progress_token();
    // Only a request that asked for progress gets a channel for it. Reports
    // are coalesced by the runtime (one per PROGRESS_EVERY at most), so the
    // channel stays short.
    let mut reports = token.as_ref().map(|_| {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        watch = std::mem::take(&mut watch).on_progress(move |p| {
            let _ = tx.send(p.clone());
        });
        rx
    });
    let notify = |p: Progress| {
        let peer = context.peer.clone();
        let token = token.clone();
        async move {
            let Some(token) = token else { return };
            let mut param = ProgressNotificationParam::new(token, p.done as f64);
            param.total = p.total.map(|t| t as f64);
            param.message = p.message;
            // A client gone is the call's end, seen there.
            let _ = peer.notify_progress(param).await;
        }
    };
    let mut call = std::pin::pin!(call(watch));
    let mut cancelled = std::pin::pin!(context.ct.cancelled());
    loop {
        let report = async {
            match reports.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            // Boxed: only a call with progress reports sends them, and the
            // notification's future (1.2 KB) would widen every call's.
            Some(p) = report => Box::pin(notify(p)).await,
            result = &mut call => {
                while let Some(p) = reports.as_mut().and_then(|rx| rx.try_recv().ok()) {
                    Box::pin(notify(p)).await;
                }
                return result;
            }
            () = &mut cancelled, if !cancel.is_cancelled() => cancel.cancel(),
        }
    }
}
