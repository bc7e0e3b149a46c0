//! What sends spans and metrics: an exporter that counts what it could not
//! deliver, over the crate's own HTTP client.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use super::probe::Probe;

/// An exporter that counts the spans of batches it could not deliver, and
/// stops encoding for a collector that is down: after a failed send, the
/// batches of the next second are dropped unencoded (counted), then of the
/// next two, doubling up to 30 s; a send that passes resets it.
#[derive(Debug)]
pub(super) struct Counting<E> {
    inner: E,
    undelivered: Arc<AtomicU64>,
    probe: Arc<Probe>,
    /// Until when batches are dropped, and the current wait.
    down: std::sync::Mutex<(Option<std::time::Instant>, Duration)>,
}

impl<E> Counting<E> {
    pub(super) fn new(inner: E, undelivered: Arc<AtomicU64>, probe: Arc<Probe>) -> Counting<E> {
        Counting {
            inner,
            undelivered,
            probe,
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
                // Down, or only refusing what it gets: the probe tells.
                self.probe.watch();
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

/// Export could not be set up (a malformed endpoint or header, a protocol
/// this build lacks).
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry export: {0}")]
pub struct OtelError(pub(super) String);

type Https = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// The exporters' HTTP client: hyper over rustls (http and https), its
/// requests run on the export's own runtime, so they work from the SDK's
/// background threads and never on a job's.
#[derive(Clone)]
pub(super) struct Client {
    rt: tokio::runtime::Handle,
    http: hyper_util::client::legacy::Client<Https, Full<Bytes>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Client")
    }
}

impl Client {
    pub(super) fn new(rt: tokio::runtime::Handle) -> Result<Client, OtelError> {
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
