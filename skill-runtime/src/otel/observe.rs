//! Gauges and counters read at each metric export: a queue's state, the
//! runtime's lost records.

use std::sync::Arc;
use std::time::Duration;

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

/// Report `runtime`'s run records lost (`skill.records.lost`: records its
/// sinks were given and could not keep, such as a write that failed), read
/// at each export. Does nothing unless export was started.
pub fn observe_runtime(runtime: &crate::Runtime) {
    if !crate::exec::trace::otel::exporting() {
        return;
    }
    let runtime = runtime.clone();
    let lost = opentelemetry::global::meter("skill-runtime")
        .u64_observable_counter("skill.records.lost")
        .with_description("Run records the runtime's sinks could not keep")
        .with_callback(move |observer| observer.observe(runtime.records_lost(), &[]))
        .build();
    crate::sync::lock(&COUNTERS).push(lost);
}

/// The runtime counters registered, kept alive.
static COUNTERS: std::sync::Mutex<Vec<opentelemetry::metrics::ObservableCounter<u64>>> =
    std::sync::Mutex::new(Vec::new());
