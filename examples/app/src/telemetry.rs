//! `--otel`, or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` alone: every
//! command's spans and metrics go to an OTLP/HTTP collector
//! (docs/observability.md). Logs stay on standard error, filtered by
//! `SKILL_LOG`.

use std::process::ExitCode;

use skill_runtime::otel::{Otel, OtelConfig};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Start export when asked (`--otel`, or the environment names a
/// collector); the handle flushes what is left when dropped, at exit.
pub fn start(asked: bool) -> Result<Option<Otel>, ExitCode> {
    if !asked && !OtelConfig::requested_by_env() {
        return Ok(None);
    }
    let otel = match Otel::start(OtelConfig::default(), env!("CARGO_PKG_NAME")) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::from(2));
        }
    };
    // The runtime's spans only: the libraries' own (hyper, rmcp, redis)
    // stay out of the traces.
    let ours = tracing_subscriber::filter::filter_fn(|m| m.target().starts_with("skill_runtime"));
    tracing_subscriber::registry()
        .with(otel.layer().with_filter(ours))
        .with(logs())
        .init();
    Ok(Some(otel))
}

/// Log lines on standard error at the level `SKILL_LOG` names (`warn` by
/// default).
pub fn logs<S>() -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(filter)
}
