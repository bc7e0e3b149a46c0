//! A job's place in its trace. Its span (`skill {name}`) joins, in this
//! order: the span it runs under (an MCP request's, a worker's `process`
//! span), the envelope's `traceparent` (a span of another process), or
//! starts the trace named by the job's `traceId`; so a job's record and its
//! spans name one trace. With feature `otel` the spans reach OpenTelemetry
//! (`crate::otel`); without it they are plain `tracing` spans and nothing
//! here costs anything.

use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::model::record::{Attempts, Stages};
use crate::model::trace::TraceParent;

/// The span of job `job_id` of skill `skill`; and the trace id the job takes
/// instead of `trace_id` when it runs under a span of another trace.
#[inline]
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
        // As text, not `%` (Display): the OpenTelemetry bridge copies a
        // `str`, and formats a Display value through `fmt`. The id stays a
        // Display: made text only when a layer records it.
        skill = skill,
        job_id = %job_id,
        intent = tracing::field::Empty,
        caller.role = tracing::field::Empty,
        outcome = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        skill.arguments = tracing::field::Empty,
        skill.result = tracing::field::Empty,
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

/// The span of agent `id`'s run `job_id`: the parent of the jobs of its skill
/// calls; placed in its trace as a job's is (under the span it runs in, else
/// as the root of `trace_id`).
pub(crate) fn agent_span(id: &str, job_id: &Id, trace_id: &Id) -> tracing::Span {
    #[cfg(feature = "otel")]
    let local = current();
    let span = tracing::info_span!(
        "agent",
        otel.name = %format_args!("agent {id}"),
        agent = %id,
        job_id = %job_id,
    );
    #[cfg(feature = "otel")]
    otel::join(&span, trace_id, None, local);
    #[cfg(not(feature = "otel"))]
    let _ = trace_id;
    span
}

/// How a job ended, as its span and the metrics say it.
#[cfg_attr(
    not(feature = "otel"),
    expect(dead_code, reason = "read by the OpenTelemetry export")
)]
pub(crate) struct Ending<'a> {
    /// The skill, when it resolved.
    pub(crate) skill: Option<&'a crate::registry::skill::RegisteredSkill>,
    pub(crate) error_code: Option<&'a str>,
    pub(crate) started_at: std::time::SystemTime,
    pub(crate) duration: std::time::Duration,
    /// Its stages and its handler's attempts, details redacted.
    pub(crate) stages: &'a Stages,
    pub(crate) attempts: &'a Attempts,
    pub(crate) replayed: bool,
    /// Its params and output as its record keeps them (redacted, or their
    /// size past the record's budget).
    pub(crate) params: &'a crate::model::recorded::RecordedValue,
    pub(crate) output: Option<&'a crate::model::data::Data>,
}

/// Record how a job ended on its span and, with feature `otel`, in its
/// metrics (`skill.job.duration`, retries, replays, rate limits) and as
/// child spans of its stages that took time and of each attempt.
#[inline]
pub(crate) fn ended(span: &tracing::Span, e: &Ending<'_>) {
    // A span's status says success already (unset); only a failure is
    // recorded, which saves every successful job an attribute.
    if let Some(code) = e.error_code {
        span.record("outcome", "failed");
        span.record("error.type", code);
        span.record("otel.status_code", "ERROR");
    }
    #[cfg(feature = "otel")]
    {
        otel::job_ended(e);
        otel::job_attributes(span, e);
        otel::stage_spans(span, e);
    }
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
    // Asked first: while no span is made, the span now entered is not
    // looked up at all (a lookup in the subscriber's registry).
    if !otel::spans_made() {
        return None;
    }
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

    /// Whether the collector is known to be unreachable (`crate::otel`
    /// probes it): then no span is made, since it could only be dropped
    /// unsent; the layer's filter reads this, and counts what it refuses.
    pub(crate) static COLLECTOR_DOWN: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Whether the layer makes OpenTelemetry spans now: export started and
    /// the collector not known to be down.
    pub(crate) fn spans_made() -> bool {
        exporting() && !COLLECTOR_DOWN.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether `span` is one the layer made into an OpenTelemetry span:
    /// [`spans_made`], `span` enabled.
    fn traced(span: &tracing::Span) -> bool {
        spans_made() && !span.is_disabled()
    }

    /// Spans not made because the collector was down.
    pub(crate) static NOT_MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    /// Whether a span of the runtime's is made now: not while the collector
    /// is down (counted in [`NOT_MADE`]).
    pub(crate) fn spans_wanted() -> bool {
        if COLLECTOR_DOWN.load(std::sync::atomic::Ordering::Relaxed) {
            NOT_MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return false;
        }
        true
    }

    thread_local! {
        /// The trace id the next root span started on this thread takes
        /// (the job's `traceId`), read by `crate::otel`'s id generator.
        static ROOT: Cell<Option<[u8; 16]>> = const { Cell::new(None) };
    }

    /// The tracer of export started (`crate::otel::Otel::start`), for the
    /// spans made here rather than through the `tracing` layer.
    static TRACER: std::sync::RwLock<Option<opentelemetry_sdk::trace::SdkTracer>> =
        std::sync::RwLock::new(None);

    /// The shortest stage that gets a span, in microseconds.
    pub(crate) static STAGE_SPANS_FROM_US: std::sync::atomic::AtomicU64 =
        std::sync::atomic::AtomicU64::new(1_000);

    pub(crate) fn set_tracer(tracer: Option<opentelemetry_sdk::trace::SdkTracer>) {
        *TRACER
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tracer;
    }

    /// Whether a job's span carries its params and output (redacted as in
    /// its record): `OtelConfig::record_arguments`.
    pub(crate) static RECORD_ARGUMENTS: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// What the job's span says once the job ended, when the span is
    /// exported: the skill's version, the attempts when more than one, and,
    /// when asked for, its params and output.
    pub(crate) fn job_attributes(span: &tracing::Span, e: &super::Ending<'_>) {
        if !traced(span) {
            return;
        }
        // Set on the OpenTelemetry span directly: a `record` goes through
        // every layer and the bridge's field visitor, and copies the text
        // (the manifest's version is static).
        if let Some(s) = e.skill {
            span.set_attribute("skill.version", s.entry.manifest.version);
        }
        if e.attempts.len() > 1 {
            span.set_attribute("attempts", e.attempts.len() as i64);
        }
        if RECORD_ARGUMENTS.load(std::sync::atomic::Ordering::Relaxed) {
            span.record("skill.arguments", e.params.to_string());
            if let Some(output) = e.output {
                span.record("skill.result", output.text());
            }
        }
    }

    /// The job's metrics: its duration by skill and outcome; its retries,
    /// a replay and a refusal by the rate limit, counted by skill.
    pub(crate) fn job_ended(e: &super::Ending<'_>) {
        use opentelemetry::KeyValue;
        use opentelemetry::metrics::{Counter, Histogram, Meter};
        use std::sync::OnceLock;
        if !exporting() {
            return;
        }
        fn meter() -> Meter {
            opentelemetry::global::meter("skill-runtime")
        }
        static DURATION: OnceLock<Histogram<f64>> = OnceLock::new();
        static RETRIES: OnceLock<Counter<u64>> = OnceLock::new();
        static REPLAYED: OnceLock<Counter<u64>> = OnceLock::new();
        static RATE_LIMITED: OnceLock<Counter<u64>> = OnceLock::new();
        let counter =
            |cell: &'static OnceLock<Counter<u64>>, name: &'static str, what: &'static str| {
                cell.get_or_init(|| meter().u64_counter(name).with_description(what).build())
            };
        let histogram = DURATION.get_or_init(|| {
            meter()
                .f64_histogram("skill.job.duration")
                .with_unit("s")
                .with_description("Duration of jobs, by skill and outcome")
                .build()
        });
        let seconds = e.duration.as_secs_f64();
        // The skill's label is shared, not copied, into the attribute.
        let skill_name = || {
            KeyValue::new(
                "skill.name",
                match e.skill {
                    Some(s) => opentelemetry::Value::String(s.label.clone().into()),
                    None => opentelemetry::Value::from("unresolved"),
                },
            )
        };
        match (e.error_code, e.skill) {
            // The common case, on the histogram bound to the skill's
            // attributes at its first success.
            (None, Some(s)) => s
                .succeeded
                .get_or_init(|| {
                    histogram.bind(&[skill_name(), KeyValue::new("skill.outcome", "succeeded")])
                })
                .record(seconds),
            (None, None) => histogram.record(
                seconds,
                &[skill_name(), KeyValue::new("skill.outcome", "succeeded")],
            ),
            (Some(code), _) => histogram.record(
                seconds,
                &[
                    skill_name(),
                    KeyValue::new("skill.outcome", "failed"),
                    KeyValue::new("error.type", code.to_owned()),
                ],
            ),
        }
        let retries = e.attempts.len().saturating_sub(1) as u64;
        if retries > 0 {
            let c = counter(
                &RETRIES,
                "skill.job.retries",
                "Attempts after a job's first, by skill",
            );
            c.add(retries, &[skill_name()]);
        }
        if e.replayed {
            let c = counter(
                &REPLAYED,
                "skill.job.replayed",
                "Jobs answered with an earlier job's result, by skill",
            );
            c.add(1, &[skill_name()]);
        }
        if e.error_code == Some("rate_limited") {
            let c = counter(
                &RATE_LIMITED,
                "skill.job.rate_limited",
                "Jobs refused by their skill's rate limit, by skill",
            );
            c.add(1, &[skill_name()]);
        }
    }

    /// The job's stages that took time (validate, preconditions, idempotency,
    /// the approval wait, execute, the output checks; at least
    /// [`STAGE_SPANS_FROM_US`]), as children of its span, and each attempt
    /// of its handler as a child of `execute`: made
    /// once the job ended, placed in time by the record's durations, so a
    /// job pays for them only when its spans are exported.
    pub(crate) fn stage_spans(span: &tracing::Span, e: &super::Ending<'_>) {
        use opentelemetry::trace::{Span as _, Status, Tracer as _};
        use std::time::Duration;

        use crate::model::record::{Stage, StageOutcome};

        if !traced(span) {
            return;
        }
        let from = STAGE_SPANS_FROM_US.load(std::sync::atomic::Ordering::Relaxed);
        if !e.stages.iter().any(|s| s.duration_us >= from.max(1)) {
            return;
        }
        let tracer = match TRACER.read() {
            Ok(t) => t.clone(),
            Err(_) => None,
        };
        let Some(tracer) = tracer else {
            return;
        };
        let cx = span.context();
        if !cx.span().span_context().is_valid() {
            return;
        }
        let mut at = e.started_at;
        for s in e.stages.iter() {
            let end = at + Duration::from_micros(s.duration_us);
            if s.duration_us >= from.max(1) && s.outcome != StageOutcome::Skipped {
                let builder = tracer.span_builder(s.step.as_str()).with_start_time(at);
                let mut child = tracer.build_with_context(builder, &cx);
                if s.outcome == StageOutcome::Replayed {
                    child.set_attribute(opentelemetry::KeyValue::new("skill.replayed", true));
                }
                if s.outcome == StageOutcome::Failed {
                    child.set_status(Status::error(s.detail.unwrap_or_default().to_owned()));
                }
                if s.step == Stage::Execute {
                    let parent = opentelemetry::Context::new()
                        .with_remote_span_context(child.span_context().clone());
                    let mut from = at;
                    for a in e.attempts.iter() {
                        let name = format!("attempt {}", a.attempt);
                        let builder = tracer.span_builder(name).with_start_time(from);
                        let mut attempt = tracer.build_with_context(builder, &parent);
                        if let Some(error) = &a.error {
                            attempt.set_status(Status::error(error.clone()));
                        }
                        from += Duration::from_micros(a.duration_us);
                        attempt.end_with_timestamp(from.min(end));
                        from += Duration::from_millis(a.backoff_ms.unwrap_or(0));
                    }
                }
                child.end_with_timestamp(end);
            }
            at = end;
        }
    }

    /// The trace id set for the root span being started on this thread.
    pub(crate) fn take_root() -> Option<[u8; 16]> {
        ROOT.with(Cell::take)
    }

    /// `span`'s context as a traceparent, when it is a traced span.
    pub(crate) fn traceparent_of(span: &tracing::Span) -> Option<TraceParent> {
        if !traced(span) {
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
        if !traced(span) {
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
