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

use http_body_util::{BodyExt, Full, Limited};
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{
    IdGenerator, RandomIdGenerator, SdkTracerProvider, SpanData, SpanExporter,
};

use crate::exec::trace::otel::take_root;

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
}

impl OtelConfig {
    /// Send to the collector at `url` (its base: `http://localhost:4318`).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
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

/// Export could not be set up (a malformed endpoint or header, a protocol
/// this build lacks).
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry export: {0}")]
pub struct OtelError(String);

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
        let traces = SdkTracerProvider::builder()
            .with_batch_exporter(Counting::new(spans, undelivered.clone()))
            .with_id_generator(JobTraceIds::default())
            .with_resource(resource.clone())
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_meter_provider(metrics.clone());
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
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false)
            .with_filter(tracing_subscriber::filter::filter_fn(|m| m.is_span()))
    }

    /// Spans sent but not delivered (the collector was down, slow or
    /// refused them).
    pub fn undelivered(&self) -> u64 {
        self.undelivered.load(Ordering::Relaxed)
    }
}

impl Drop for Otel {
    fn drop(&mut self) {
        let _ = self.traces.shutdown();
        let _ = self.metrics.shutdown();
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

/// An exporter that counts the spans of batches it could not deliver, and
/// stops encoding for a collector that is down: after a failed send, the
/// batches of the next second are dropped unencoded (counted), then of the
/// next two, doubling up to 30 s; a send that passes resets it.
#[derive(Debug)]
struct Counting<E> {
    inner: E,
    undelivered: Arc<AtomicU64>,
    /// Until when batches are dropped, and the current wait.
    down: std::sync::Mutex<(Option<std::time::Instant>, Duration)>,
}

impl<E> Counting<E> {
    fn new(inner: E, undelivered: Arc<AtomicU64>) -> Counting<E> {
        Counting {
            inner,
            undelivered,
            down: std::sync::Mutex::new((None, Duration::ZERO)),
        }
    }
}

impl<E: SpanExporter> SpanExporter for Counting<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len() as u64;
        let until = crate::sync::lock(&self.down).0;
        if until.is_some_and(|t| std::time::Instant::now() < t) {
            self.undelivered.fetch_add(n, Ordering::Relaxed);
            return Err(opentelemetry_sdk::error::OTelSdkError::InternalFailure(
                "the collector was unreachable a moment ago; batch dropped".to_owned(),
            ));
        }
        let sent = self.inner.export(batch).await;
        let mut down = crate::sync::lock(&self.down);
        match &sent {
            Ok(()) => *down = (None, Duration::ZERO),
            Err(_) => {
                self.undelivered.fetch_add(n, Ordering::Relaxed);
                let wait = (down.1 * 2).clamp(Duration::from_secs(1), Duration::from_secs(30));
                *down = (Some(std::time::Instant::now() + wait), wait);
            }
        }
        sent
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

type Https = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// The exporters' HTTP client: hyper over rustls (http and https), its
/// requests run on the export's own runtime, so they work from the SDK's
/// background threads and never on a job's.
#[derive(Clone)]
struct Client {
    rt: tokio::runtime::Handle,
    http: hyper_util::client::legacy::Client<Https, Full<Bytes>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Client")
    }
}

impl Client {
    fn new(rt: tokio::runtime::Handle) -> Result<Client, OtelError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        // No Nagle delay (every HTTP path of the crate sets TCP_NODELAY).
        let mut tcp = hyper_util::client::legacy::connect::HttpConnector::new();
        tcp.set_nodelay(true);
        tcp.enforce_http(false);
        tcp.set_connect_timeout(Some(Duration::from_secs(5)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(provider)
            .map_err(|e| OtelError(e.to_string()))?
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        let http =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(https);
        Ok(Client { rt, http })
    }
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        self.rt.spawn(send(self.http.clone(), request)).await?
    }
}

/// The most of a collector's answer read.
const MAX_ANSWER: usize = 1 << 20;

async fn send(
    client: hyper_util::client::legacy::Client<Https, Full<Bytes>>,
    request: Request<Bytes>,
) -> Result<Response<Bytes>, HttpError> {
    let (parts, body) = request.into_parts();
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client.request(hyper::Request::from_parts(parts, Full::new(body))),
    )
    .await??;
    let (parts, body) = answer.into_parts();
    let body = Limited::new(body, MAX_ANSWER).collect().await?.to_bytes();
    Ok(Response::from_parts(parts, body))
}

/// Export the state of `queue` as gauges while export runs: read now and
/// every `every` (on the current tokio runtime), observed at each metric
/// export. `skill.queue.waiting` (by `skill.priority`),
/// `skill.queue.delayed`, `skill.queue.in_flight`,
/// `skill.queue.awaiting_approval`, `skill.queue.dead_letters` and
/// `skill.queue.workers`, each with `messaging.destination.name`. Does
/// nothing unless export was started; must be called within a tokio
/// runtime.
pub fn observe_queue(queue: Arc<dyn crate::queue::api::Queue>, every: Duration) {
    use opentelemetry::KeyValue;
    use opentelemetry::metrics::ObservableGauge;

    use crate::queue::api::QueueStatus;

    if !crate::exec::trace::otel::exporting() {
        return;
    }
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let last: Arc<std::sync::Mutex<Option<QueueStatus>>> = Arc::default();
    let keep = last.clone();
    rt.spawn(async move {
        loop {
            if let Ok(s) = queue.status().await {
                *crate::sync::lock(&keep) = Some(s);
            }
            tokio::time::sleep(every).await;
        }
    });
    type Read = fn(&QueueStatus) -> Vec<(u64, Option<KeyValue>)>;
    let gauges: [(&'static str, &'static str, Read); 6] = [
        (
            "skill.queue.waiting",
            "Jobs waiting for a worker, by priority",
            |s| {
                s.waiting
                    .iter()
                    .map(|(p, n)| (*n, Some(KeyValue::new("skill.priority", p.as_str()))))
                    .collect()
            },
        ),
        ("skill.queue.delayed", "Jobs set to run later", |s| {
            vec![(s.delayed, None)]
        }),
        ("skill.queue.in_flight", "Jobs a worker holds", |s| {
            vec![(s.in_flight, None)]
        }),
        (
            "skill.queue.awaiting_approval",
            "Jobs parked until a person decides (the first hundred)",
            |s| vec![(s.awaiting_approval.len() as u64, None)],
        ),
        ("skill.queue.dead_letters", "Jobs given up on", |s| {
            vec![(s.dead_letters, None)]
        }),
        ("skill.queue.workers", "Workers alive", |s| {
            vec![(s.workers.len() as u64, None)]
        }),
    ];
    let meter = opentelemetry::global::meter("skill-runtime");
    let mut built: Vec<ObservableGauge<u64>> = Vec::new();
    for (name, description, read) in gauges {
        let last = last.clone();
        built.push(
            meter
                .u64_observable_gauge(name)
                .with_description(description)
                .with_callback(move |observer| {
                    if let Some(s) = crate::sync::lock(&last).as_ref() {
                        let queue = KeyValue::new("messaging.destination.name", s.queue.clone());
                        for (value, extra) in read(s) {
                            let mut attributes = vec![queue.clone()];
                            attributes.extend(extra);
                            observer.observe(value, &attributes);
                        }
                    }
                })
                .build(),
        );
    }
    // Kept for the life of the process, like the provider they report to.
    crate::sync::lock(&GAUGES).extend(built);
}

/// The queue gauges registered, kept alive.
static GAUGES: std::sync::Mutex<Vec<opentelemetry::metrics::ObservableGauge<u64>>> =
    std::sync::Mutex::new(Vec::new());
