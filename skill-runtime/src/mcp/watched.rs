//! A call watched for its request: the handler's progress reports become
//! `notifications/progress`, its log lines `notifications/message`, and the
//! client's cancellation cancels the job.
//!
//! MCP's logging is deprecated by SEP-2577 (2026-07-28), yet both revisions
//! served still carry it, and clients read it.
#![expect(
    deprecated,
    reason = "MCP logging, deprecated by SEP-2577, still served"
)]

use std::future::Future;

use rmcp::ErrorData;
use std::sync::Arc;

use rmcp::model::{
    CallToolResult, CreateMessageRequestParams, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;

use crate::contract::ask::{Ask, AskError, Asked, Elicited};
use crate::contract::watch::{Cancel, LogLevel, LogLine, Watch};
use crate::exec::redact::scrub;
use crate::model::record::Progress;

/// The log lines a request asked for: those at `min` or above, from the
/// logger `logger` (the tool's name), with `secrets` (the values of the
/// skill's redacted inputs) scrubbed out.
pub(crate) struct Logs {
    pub(crate) min: LogLevel,
    pub(crate) logger: String,
    pub(crate) secrets: Vec<String>,
}

/// What a running handler tells its request.
enum Note {
    Progress(Progress),
    Log(LogLine),
}

/// MCP's name of `level`.
pub(crate) fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// The level MCP's `level` names.
pub(crate) fn log_level(level: LoggingLevel) -> LogLevel {
    LogLevel::ALL
        .into_iter()
        .find(|l| mcp_level(*l) == level)
        .unwrap_or(LogLevel::Emergency)
}

/// Run `call` watched for the request of `context`: the handler's progress
/// reports become `notifications/progress` when the request carried a
/// progress token, its log lines `notifications/message` when the request
/// asked for them (`logs`), each sent in order, before the result; the
/// client's cancellation (`notifications/cancelled`, or the request's stream
/// closed) cancels the job.
pub(crate) async fn watched<F, Fut>(
    context: &RequestContext<RoleServer>,
    logs: Option<Logs>,
    call: F,
) -> Result<CallToolResult, ErrorData>
where
    F: FnOnce(Watch) -> Fut,
    Fut: Future<Output = Result<CallToolResult, ErrorData>>,
{
    let cancel = Cancel::new();
    let mut watch = Watch::new().cancel_with(cancel.clone());
    if let Some(ask) = PeerAsk::of(context) {
        watch = watch.asking(Arc::new(ask));
    }
    let token = context.meta.get_progress_token();
    // Only a request that asked for progress or log lines gets a channel
    // for them. Progress reports are coalesced by the runtime (one per
    // PROGRESS_EVERY at most), so the channel stays short.
    let mut notes = (token.is_some() || logs.is_some()).then(|| {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Note>();
        if token.is_some() {
            let tx = tx.clone();
            watch = std::mem::take(&mut watch).on_progress(move |p| {
                let _ = tx.send(Note::Progress(p.clone()));
            });
        }
        if let Some(min) = logs.as_ref().map(|l| l.min) {
            watch = std::mem::take(&mut watch).on_log(move |l| {
                if l.level >= min {
                    let _ = tx.send(Note::Log(l.clone()));
                }
            });
        }
        rx
    });
    let notify = |note: Note| {
        let peer = context.peer.clone();
        let token = token.clone();
        let logs = logs.as_ref();
        let log = match (&note, logs) {
            (Note::Log(l), Some(logs)) => Some(
                LoggingMessageNotificationParam::new(
                    mcp_level(l.level),
                    Value::String(scrub(l.message.clone(), &logs.secrets)),
                )
                .with_logger(logs.logger.clone()),
            ),
            _ => None,
        };
        async move {
            // A client gone is the call's end, seen there.
            match note {
                Note::Progress(p) => {
                    let Some(token) = token else { return };
                    let mut param = ProgressNotificationParam::new(token, p.done as f64);
                    param.total = p.total.map(|t| t as f64);
                    param.message = p.message;
                    let _ = peer.notify_progress(param).await;
                }
                Note::Log(_) => {
                    if let Some(param) = log {
                        let _ = peer.notify_logging_message(param).await;
                    }
                }
            }
        }
    };
    let mut call = std::pin::pin!(call(watch));
    let mut cancelled = std::pin::pin!(context.ct.cancelled());
    loop {
        let note = async {
            match notes.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            // Boxed: only a call with progress or log lines sends them, and
            // the notification's future would widen every call's.
            Some(n) = note => Box::pin(notify(n)).await,
            result = &mut call => {
                while let Some(n) = notes.as_mut().and_then(|rx| rx.try_recv().ok()) {
                    Box::pin(notify(n)).await;
                }
                return result;
            }
            () = &mut cancelled, if !cancel.is_cancelled() => cancel.cancel(),
        }
    }
}

/// The client of a session, asked for its handler by elicitation or
/// sampling: requests to the client during the call, which 2026-07-28
/// (stateless) forbids.
struct PeerAsk {
    peer: Peer<RoleServer>,
    elicits: bool,
    samples: bool,
}

impl PeerAsk {
    /// The client of `context`, when it declared elicitation (form mode)
    /// or sampling on a session.
    fn of(context: &RequestContext<RoleServer>) -> Option<PeerAsk> {
        let stateless = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let capabilities = context.client_capabilities()?;
        // A capability naming neither mode is the 2025-06-18 form one.
        let elicits = capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let samples = capabilities.sampling.is_some();
        (!stateless && (elicits || samples)).then(|| PeerAsk {
            peer: context.peer.clone(),
            elicits,
            samples,
        })
    }
}

impl Ask for PeerAsk {
    fn elicit(&self, message: String, schema: Value) -> Asked<'_, Elicited> {
        Box::pin(async move {
            if !self.elicits {
                return Err(AskError::Unsupported("elicitation"));
            }
            let requested_schema: ElicitationSchema =
                serde_json::from_value(schema).map_err(|e| AskError::Invalid {
                    what: "elicitation schema",
                    why: e.to_string(),
                })?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema,
            };
            let answer = self
                .peer
                .create_elicitation(params)
                .await
                .map_err(|e| AskError::Failed(e.to_string()))?;
            Ok(match answer.action {
                ElicitationAction::Accept => Elicited::Accept(match answer.content {
                    Some(Value::Object(values)) => values,
                    _ => serde_json::Map::new(),
                }),
                ElicitationAction::Decline => Elicited::Decline,
                _ => Elicited::Cancel,
            })
        })
    }

    fn sample(&self, request: Value) -> Asked<'_, Value> {
        Box::pin(async move {
            if !self.samples {
                return Err(AskError::Unsupported("sampling"));
            }
            let params: CreateMessageRequestParams =
                serde_json::from_value(request).map_err(|e| AskError::Invalid {
                    what: "sampling request",
                    why: e.to_string(),
                })?;
            let answer = self
                .peer
                .create_message(params)
                .await
                .map_err(|e| AskError::Failed(e.to_string()))?;
            serde_json::to_value(answer).map_err(|e| AskError::Failed(e.to_string()))
        })
    }
}
