//! Whether the collector is there: asked at start and after a failed send;
//! while it is not, no span is made.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// `host:port` of the collector that traces go to: `base`, else the
/// standard variables, else `localhost:4318`.
pub(super) fn collector_address(base: Option<&str>) -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let url = base
        .map(str::to_owned)
        .or_else(|| var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .unwrap_or_else(|| "http://localhost:4318".to_owned());
    // Read as the exporter's HTTP client reads it; a URL it cannot read
    // is refused when export starts, so any answer does here.
    let Ok(uri) = url.parse::<hyper::Uri>() else {
        return url;
    };
    let host = uri.host().unwrap_or("localhost");
    let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
        Some("https") => 443,
        _ => 80,
    });
    format!("{host}:{port}")
}

/// Whether the collector's address takes connections: asked at start, and
/// after a batch could not be sent; while it does not, asked again after 1
/// s, then 2, doubling up to 30, and no span is made
/// (`exec::trace::otel::COLLECTOR_DOWN`). One probe runs at a time.
#[derive(Debug)]
pub(super) struct Probe {
    addr: String,
    rt: tokio::runtime::Handle,
    running: std::sync::atomic::AtomicBool,
}

impl Probe {
    pub(super) fn new(addr: String, rt: tokio::runtime::Handle) -> Probe {
        Probe {
            addr,
            rt,
            running: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether the collector's address takes a connection within `wait`.
    async fn reachable(&self, wait: Duration) -> bool {
        let connect = tokio::net::TcpStream::connect(self.addr.as_str());
        matches!(tokio::time::timeout(wait, connect).await, Ok(Ok(_)))
    }

    /// [`Probe::reachable`], waited for from any thread (a caller inside
    /// an async runtime too).
    pub(super) fn reachable_now(self: &Arc<Probe>, wait: Duration) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        let probe = self.clone();
        self.rt.spawn(async move {
            let _ = tx.send(probe.reachable(wait).await);
        });
        rx.recv_timeout(wait + Duration::from_millis(100))
            .unwrap_or(false)
    }

    pub(super) fn watch(self: &Arc<Probe>) {
        use crate::exec::trace::otel::COLLECTOR_DOWN;
        if self.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let probe = self.clone();
        self.rt.spawn(async move {
            let mut wait = Duration::from_secs(1);
            loop {
                let up = probe.reachable(Duration::from_secs(2)).await;
                COLLECTOR_DOWN.store(!up, Ordering::Relaxed);
                if up {
                    break;
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(30));
            }
            probe.running.store(false, Ordering::Release);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::collector_address;

    #[test]
    fn the_collector_address_is_the_endpoint_host_and_port() {
        let cases = [
            ("http://127.0.0.1:4318", "127.0.0.1:4318"),
            ("http://collector:4318/", "collector:4318"),
            ("https://otel.example.com/v1", "otel.example.com:443"),
            ("http://otel.example.com", "otel.example.com:80"),
            ("http://[::1]:4318/x", "[::1]:4318"),
            ("http://[::1]", "[::1]:80"),
        ];
        for (url, want) in cases {
            assert_eq!(collector_address(Some(url)), want, "{url}");
        }
    }
}
