//! A job's place in its trace. Its span (`skill {name}`) joins, in this
//! order: the span it runs under (an MCP request's, a worker's `process`
//! span), the envelope's `traceparent` (a span of another process), or
//! starts the trace named by the job's `traceId`; so a job's record and its
//! spans name one trace. With feature `otel` the spans reach OpenTelemetry
//! (`crate::otel`); without it they are plain `tracing` spans and nothing
//! here costs anything.

use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::model::trace::TraceParent;

/// The span of job `job_id` of skill `skill`; and the trace id the job takes
/// instead of `trace_id` when it runs under a span of another trace.
pub(crate) fn job_span(
    skill: &str,
    job_id: &Id,
    trace_id: &Id,
    parent: Option<&TraceParent>,
) -> (tracing::Span, Option<Id>) {
    #[cfg(feature = "otel")]
    let local = current();
    let span = tracing::info_span!(
        "skill",
        otel.name = %format_args!("skill {skill}"),
        skill = %skill,
        job_id = %job_id,
        intent = tracing::field::Empty,
        caller.role = tracing::field::Empty,
        outcome = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    {
        let joined = otel::join(&span, trace_id, parent, local);
        (span, joined)
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = (trace_id, parent);
        (span, None)
    }
}

/// Record how job `skill` (`name@version`, when it resolved) ended, on its
/// span and, with feature `otel`, in the `skill.job.duration` metric.
pub(crate) fn ended(
    span: &tracing::Span,
    skill: Option<&str>,
    error_code: Option<&str>,
    duration: std::time::Duration,
) {
    // A span's status says success already (unset); only a failure is
    // recorded, which saves every successful job an attribute.
    if let Some(code) = error_code {
        span.record("outcome", "failed");
        span.record("error.type", code);
        span.record("otel.status_code", "ERROR");
    }
    #[cfg(feature = "otel")]
    otel::job_ended(skill, error_code, duration);
    #[cfg(not(feature = "otel"))]
    let _ = (skill, duration);
}

/// The trace context of the span now entered, to hand to what runs next
/// elsewhere (a job built by the MCP front door, a message put on a
/// queue); `None` without feature `otel` or outside any traced span.
#[cfg_attr(
    not(feature = "mcp"),
    expect(dead_code, reason = "used by the MCP front door")
)]
pub(crate) fn current_traceparent() -> Option<TraceParent> {
    #[cfg(feature = "otel")]
    return current();
    #[cfg(not(feature = "otel"))]
    None
}

/// The span now entered, when OpenTelemetry knows it: its context as a
/// traceparent.
#[cfg(feature = "otel")]
fn current() -> Option<TraceParent> {
    otel::traceparent_of(&tracing::Span::current())
}

/// A span of OpenTelemetry's messaging conventions: `{operation} {queue}`.
macro_rules! messaging_span {
    ($name:literal, $kind:literal, $operation:literal, $system:expr, $queue:expr, $job:expr) => {
        tracing::info_span!(
            $name,
            otel.name = %format_args!(concat!($operation, " {}"), $queue),
            otel.kind = $kind,
            messaging.system = $system,
            messaging.operation.type = $operation,
            messaging.operation.name = $operation,
            messaging.destination.name = %$queue,
            messaging.message.id = %$job.job_id,
        )
    };
}

/// The `publish` span of putting `job` on queue `queue` of messaging system
/// `system` (kind producer, OpenTelemetry's messaging conventions); `job`
/// then carries its context, so the worker's spans continue its trace.
pub(crate) fn publish(system: &'static str, queue: &str, job: &mut JobEnvelope) -> tracing::Span {
    let span = messaging_span!("publish", "producer", "send", system, queue, job);
    #[cfg(feature = "otel")]
    {
        if let Some(own) = otel::join(&span, &job.trace_id, job.traceparent.as_ref(), current()) {
            job.trace_id = own;
        }
        if let Some(tp) = otel::traceparent_of(&span) {
            job.trace_id = tp.trace_id();
            job.traceparent = Some(tp);
        }
    }
    span
}

/// The `process` span of a worker running `job`, taken from queue `queue`
/// (kind consumer), the child of the span that published it.
pub(crate) fn process(system: &'static str, queue: &str, job: &JobEnvelope) -> tracing::Span {
    let span = messaging_span!("process", "consumer", "process", system, queue, job);
    continue_from(&span, job.traceparent.as_ref());
    span
}

/// Make `span` a child of `parent` (a span of another process) unless it
/// runs under a traced span already.
pub(crate) fn continue_from(span: &tracing::Span, parent: Option<&TraceParent>) {
    #[cfg(feature = "otel")]
    if let Some(p) = parent
        && current().is_none()
    {
        otel::set_remote_parent(span, p);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, parent);
}

#[cfg(feature = "otel")]
pub(crate) mod otel {
    use std::cell::Cell;

    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    use crate::model::id::Id;
    use crate::model::trace::TraceParent;

    /// Whether export was started (`crate::otel::Otel::start`): until it
    /// is, a build with the feature does what one without does.
    pub(crate) static EXPORTING: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    pub(crate) fn exporting() -> bool {
        EXPORTING.load(std::sync::atomic::Ordering::Relaxed)
    }

    thread_local! {
        /// The trace id the next root span started on this thread takes
        /// (the job's `traceId`), read by `crate::otel`'s id generator.
        static ROOT: Cell<Option<[u8; 16]>> = const { Cell::new(None) };
    }

    /// Count job `skill`'s `duration` by skill and outcome.
    pub(crate) fn job_ended(
        skill: Option<&str>,
        error_code: Option<&str>,
        duration: std::time::Duration,
    ) {
        if !exporting() {
            return;
        }
        use opentelemetry::KeyValue;
        use opentelemetry::metrics::Histogram;
        static DURATION: std::sync::OnceLock<Histogram<f64>> = std::sync::OnceLock::new();
        let histogram = DURATION.get_or_init(|| {
            opentelemetry::global::meter("skill-runtime")
                .f64_histogram("skill.job.duration")
                .with_unit("s")
                .with_description("Duration of jobs, by skill and outcome")
                .build()
        });
        let mut attributes = vec![
            KeyValue::new("skill.name", skill.unwrap_or("unresolved").to_owned()),
            KeyValue::new(
                "skill.outcome",
                if error_code.is_some() {
                    "failed"
                } else {
                    "succeeded"
                },
            ),
        ];
        if let Some(code) = error_code {
            attributes.push(KeyValue::new("error.type", code.to_owned()));
        }
        histogram.record(duration.as_secs_f64(), &attributes);
    }

    /// The trace id set for the root span being started on this thread.
    pub(crate) fn take_root() -> Option<[u8; 16]> {
        ROOT.with(Cell::take)
    }

    /// `span`'s context as a traceparent, when it is a traced span.
    pub(crate) fn traceparent_of(span: &tracing::Span) -> Option<TraceParent> {
        if !exporting() || span.is_disabled() {
            return None;
        }
        let cx = span.context();
        let sc = cx.span().span_context().clone();
        sc.is_valid().then(|| TraceParent {
            trace_id: sc.trace_id().to_bytes(),
            span_id: sc.span_id().to_bytes(),
            flags: sc.trace_flags().to_u8(),
        })
    }

    /// Make `span` the child of `parent`, a span of another process.
    pub(crate) fn set_remote_parent(span: &tracing::Span, parent: &TraceParent) {
        let sc = SpanContext::new(
            TraceId::from_bytes(parent.trace_id),
            SpanId::from_bytes(parent.span_id),
            TraceFlags::new(parent.flags),
            true,
            TraceState::default(),
        );
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(sc));
    }

    /// Place the job's `span` in its trace (see the module); the trace id
    /// it took from the span it runs under, when that differs from
    /// `trace_id`.
    pub(crate) fn join(
        span: &tracing::Span,
        trace_id: &Id,
        parent: Option<&TraceParent>,
        local: Option<TraceParent>,
    ) -> Option<Id> {
        if !exporting() || span.is_disabled() {
            return None;
        }
        if let Some(tp) = local {
            let own = tp.trace_id();
            return (own != *trace_id).then_some(own);
        }
        if let Some(p) = parent {
            set_remote_parent(span, p);
            return None;
        }
        // A root: started now, on this thread, with the job's trace id.
        ROOT.with(|r| r.set(TraceParent::trace_bytes(trace_id)));
        let _ = span.context();
        ROOT.with(|r| r.set(None));
        None
    }
}
