//! OpenTelemetry export (feature `otel`): the runtime's `tracing` spans
//! (an MCP request's, a queue's `publish` and `process`, each job's) as
//! OpenTelemetry traces, and its metrics, sent over OTLP/HTTP (protobuf by
//! default, JSON with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) to a
//! collector. Configured by the standard variables (`OTEL_EXPORTER_OTLP_*`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`) and by
//! [`OtelConfig`].
//!
//! Export never holds a job: spans go to a bounded queue that a background
//! thread sends in batches; when the collector is down or slow the batch is
//! lost and counted ([`Otel::undelivered`]), and when the queue is full new
//! spans are dropped (the SDK logs how many at shutdown).
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let otel = skill_runtime::otel::Otel::start(Default::default(), "my-service")?;
//! tracing_subscriber::registry().with(otel.layer()).init();
//! // ... serve; `otel` flushes what is left when dropped.
//! # Ok::<(), skill_runtime::otel::OtelError>(())
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SdkTracerProvider};

use crate::exec::trace::otel::take_root;

mod export;
mod observe;
mod probe;

pub use self::export::OtelError;
use self::export::{Client, Counting};
pub use self::observe::{observe_queue, observe_runtime};
use self::probe::{Probe, collector_address};

/// What [`Otel::start`] is told beyond the standard variables.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct OtelConfig {
    /// The collector's base URL (`http://localhost:4318`); `/v1/traces` and
    /// `/v1/metrics` are added. Without it: the standard variables, else
    /// `http://localhost:4318`.
    pub endpoint: Option<String>,
    /// The service's name, unless `OTEL_SERVICE_NAME` gives one.
    pub service_name: Option<String>,
    /// The shortest stage of a job (or attempt of its handler) that gets a
    /// span of its own; default 1 ms, or `SKILL_OTEL_STAGE_MIN_US`
    /// microseconds. A stage shorter than that is in the job's record only:
    /// a span costs more than a quick stage takes.
    pub stage_spans_from: Option<Duration>,
    /// Whether a job's span carries its params and output, redacted as in
    /// its run record (`skill.arguments`, `skill.result`); default no, or
    /// `SKILL_OTEL_RECORD_ARGUMENTS=true`.
    pub record_arguments: Option<bool>,
}

impl OtelConfig {
    /// Send to the collector at `url` (its base: `http://localhost:4318`).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// Give a span to each stage of a job that took at least `min`
    /// (`Duration::ZERO`: every stage that ran).
    pub fn stage_spans_from(mut self, min: Duration) -> Self {
        self.stage_spans_from = Some(min);
        self
    }

    /// Put each job's params and output, redacted as in its run record, on
    /// its span.
    pub fn record_arguments(mut self, yes: bool) -> Self {
        self.record_arguments = Some(yes);
        self
    }

    /// Name the service `name`, unless `OTEL_SERVICE_NAME` does.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Whether the environment asks for export: an OTLP endpoint is set
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
    /// and `OTEL_SDK_DISABLED` is not `true`.
    pub fn requested_by_env() -> bool {
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        let disabled =
            std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
        !disabled
            && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    }
}

/// Export running: the tracer and meter providers, and the thread their
/// HTTP requests run on. Dropping it sends what is buffered (a few seconds
/// at most) and stops.
pub struct Otel {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
    undelivered: Arc<AtomicU64>,
    _io: tokio::runtime::Runtime,
}

impl fmt::Debug for Otel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Otel")
            .field("undelivered", &self.undelivered())
            .finish_non_exhaustive()
    }
}

impl Otel {
    /// Start export; `default_service` names the service unless
    /// `OTEL_SERVICE_NAME` or the config does.
    pub fn start(config: OtelConfig, default_service: &str) -> Result<Otel, OtelError> {
        let io = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otel-export")
            .enable_all()
            .build()
            .map_err(|e| OtelError(e.to_string()))?;
        let client = Client::new(io.handle().clone())?;
        let base = config
            .endpoint
            .as_deref()
            .map(|e| e.trim_end_matches('/').to_owned());
        // Protobuf unless the variables say otherwise (the exporter's own
        // default is JSON whenever JSON is compiled in).
        let chosen = |signal: &str| {
            let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
            set("OTEL_EXPORTER_OTLP_PROTOCOL")
                || set(&format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL"))
        };
        let mut spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone());
        if !chosen("TRACES") {
            spans = spans.with_protocol(Protocol::HttpBinary);
        }
        if let Some(b) = &base {
            spans = spans.with_endpoint(format!("{b}/v1/traces"));
        }
        let spans = spans.build().map_err(|e| OtelError(e.to_string()))?;
        let mut metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(client);
        if !chosen("METRICS") {
            metrics = metrics.with_protocol(Protocol::HttpBinary);
        }
        if let Some(b) = &base {
            metrics = metrics.with_endpoint(format!("{b}/v1/metrics"));
        }
        let metrics = metrics.build().map_err(|e| OtelError(e.to_string()))?;
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            let name = config.service_name.as_deref().unwrap_or(default_service);
            resource = resource.with_service_name(name.to_owned());
        }
        let resource = resource.build();
        let undelivered = Arc::new(AtomicU64::new(0));
        let probe = Arc::new(Probe::new(
            collector_address(base.as_deref()),
            io.handle().clone(),
        ));
        // Whether the collector is there at all, asked before the first job
        // (half a second at most: a refused connection answers at once):
        // while it is not, jobs make no spans, and it is asked again later.
        let up = probe.reachable_now(Duration::from_millis(500));
        crate::exec::trace::otel::COLLECTOR_DOWN.store(!up, Ordering::Relaxed);
        if !up {
            probe.watch();
        }
        let traces = SdkTracerProvider::builder()
            .with_batch_exporter(Counting::new(spans, undelivered.clone(), probe))
            .with_id_generator(JobTraceIds::default())
            .with_resource(resource.clone())
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_meter_provider(metrics.clone());
        crate::exec::trace::otel::set_tracer(Some(traces.tracer("skill-runtime")));
        let from_env = std::env::var("SKILL_OTEL_STAGE_MIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_micros);
        let min = config
            .stage_spans_from
            .or(from_env)
            .unwrap_or(Duration::from_millis(1));
        let arguments = config.record_arguments.unwrap_or_else(|| {
            std::env::var("SKILL_OTEL_RECORD_ARGUMENTS")
                .is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
        });
        crate::exec::trace::otel::RECORD_ARGUMENTS.store(arguments, Ordering::Relaxed);
        crate::exec::trace::otel::STAGE_SPANS_FROM_US.store(
            u64::try_from(min.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        crate::exec::trace::otel::EXPORTING.store(true, Ordering::Relaxed);
        Ok(Otel {
            traces,
            metrics,
            undelivered,
            _io: io,
        })
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans; add it
    /// to the application's subscriber. Spans only: log events stay in the
    /// logs (a run's facts are in its record), which keeps a job's cost down.
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use tracing_subscriber::Layer as _;
        // No source location, thread or busy/idle attributes: each is an
        // allocation per span and bytes per export, and says nothing a
        // job's record does not.
        tracing_opentelemetry::layer()
            .with_tracer(self.traces.tracer("skill-runtime"))
            // No `target` attribute: the conventions have none (the span's
            // name and `mcp.method.name` say what it is).
            .with_target(false)
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false)
            .with_filter(
                // Asked at each span (not cached per call site): while the
                // collector is down, no span is made at all.
                tracing_subscriber::filter::dynamic_filter_fn(|m, _| {
                    m.is_span() && crate::exec::trace::otel::spans_wanted()
                })
                .with_callsite_filter(|m| {
                    if m.is_span() {
                        tracing::subscriber::Interest::sometimes()
                    } else {
                        tracing::subscriber::Interest::never()
                    }
                }),
            )
    }

    /// Spans sent but not delivered (the collector was down, slow or
    /// refused them).
    pub fn undelivered(&self) -> u64 {
        self.undelivered.load(Ordering::Relaxed)
    }

    /// Spans not made at all because the collector was known to be down
    /// (its address refused a connection): they could only have been
    /// dropped unsent.
    pub fn not_made(&self) -> u64 {
        crate::exec::trace::otel::NOT_MADE.load(Ordering::Relaxed)
    }
}

/// The longest dropping an [`Otel`] waits for what is left to be sent: a
/// collector that takes connections and never answers holds a command's
/// exit no longer than this.
pub const FLUSH_WITHIN: Duration = Duration::from_secs(2);

impl Drop for Otel {
    /// Send what is left, traces and metrics at once, waiting at most
    /// [`FLUSH_WITHIN`]: the SDK's own shutdowns wait up to five seconds
    /// each, which a one-shot command would pay at every exit.
    fn drop(&mut self) {
        crate::exec::trace::otel::EXPORTING.store(false, Ordering::Relaxed);
        crate::exec::trace::otel::set_tracer(None);
        let (tx, rx) = std::sync::mpsc::channel();
        let (traces, metrics) = (self.traces.clone(), self.metrics.clone());
        let done = tx.clone();
        let spawned = [
            std::thread::Builder::new().spawn(move || {
                let _ = traces.shutdown_with_timeout(FLUSH_WITHIN);
                let _ = done.send(());
            }),
            std::thread::Builder::new().spawn(move || {
                let _ = metrics.shutdown();
                let _ = tx.send(());
            }),
        ];
        let deadline = std::time::Instant::now() + FLUSH_WITHIN;
        for _ in spawned.iter().filter(|s| s.is_ok()) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if rx.recv_timeout(left).is_err() {
                break;
            }
        }
    }
}

/// Trace ids: the job's `traceId` for the root span of a job (see
/// `exec/trace.rs`), random otherwise.
#[derive(Debug, Default)]
struct JobTraceIds(RandomIdGenerator);

impl IdGenerator for JobTraceIds {
    fn new_trace_id(&self) -> TraceId {
        match take_root() {
            Some(bytes) => TraceId::from_bytes(bytes),
            None => self.0.new_trace_id(),
        }
    }

    fn new_span_id(&self) -> SpanId {
        self.0.new_span_id()
    }
}

#[cfg(test)]
mod tests {
    use super::{Otel, OtelConfig};

    /// While the collector's address refuses connections, the layer makes
    /// no OpenTelemetry span (the span stays a `tracing` one, for other
    /// layers), and counts it.
    #[test]
    fn no_span_is_made_while_the_collector_is_down() {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        use tracing_subscriber::layer::SubscriberExt;
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let config = OtelConfig::default().endpoint(format!("http://127.0.0.1:{port}"));
        let otel = Otel::start(config, "down").unwrap();
        let subscriber = tracing_subscriber::registry().with(otel.layer());
        tracing::subscriber::with_default(subscriber, || {
            let before = otel.not_made();
            let span = tracing::info_span!("skill", job_id = 1);
            let cx = span.context();
            assert!(
                !cx.span().span_context().is_valid(),
                "no OpenTelemetry span"
            );
            assert_eq!(otel.not_made(), before + 1);
        });
    }
}
