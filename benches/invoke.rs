//! Invocation overhead, side by side in one run: the handler called directly, the
//! typed call through the runtime, the JSON call through the runtime, and the
//! floor any JSON entry point pays (decode the params, encode the output).
//!
//! `cargo bench --bench invoke`; the last lines print the two ratios the runtime
//! issue sets (JSON call / floor, typed call - direct call), and the JSON call
//! on a runtime that keeps ten times the default number of run records.
//!
//! Async calls are awaited in batches inside one `block_on` (see [`awaited`]),
//! as a server awaits them inside its tasks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value, json};
use skill_runtime::mcp::McpServer;
use skill_runtime::prelude::*;
use skill_runtime::queue::api::Queue;
use skill_runtime::queue::memory::InProcessQueue;
use skill_runtime::queue::worker::WorkerOptions;
use skill_runtime::record::MemorySink;
use skill_runtime::{JobEnvelope, Registry, Runtime};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AddInput {
    pub a: u32,
    pub b: u32,
    /// A label carried through.
    #[schemars(length(max = 64))]
    pub label: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AddOutput {
    pub sum: u64,
    pub label: String,
}

/// The work itself, shared by the skill and the floor measurements.
fn add(input: AddInput) -> AddOutput {
    AddOutput {
        sum: u64::from(input.a) + u64::from(input.b),
        label: input.label,
    }
}

/// Add two numbers.
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn bench_add(input: AddInput) -> AddOutput {
    add(input)
}

/// The bound of the second JSON call's sink (the default bound before it was
/// lowered to [`MemorySink::DEFAULT_CAPACITY`]); the benchmark's name says it.
const MANY_RECORDS: usize = 10_000;

fn params() -> Value {
    json!({"a": 20, "b": 22, "label": "the answer"})
}

fn input() -> AddInput {
    AddInput {
        a: 20,
        b: 22,
        label: "the answer".into(),
    }
}

/// What both the criterion run and the instruction count measure against: a
/// current-thread tokio runtime, the skill runtime with its default sink (records
/// kept in memory, as a server would), an MCP server over it, and the params as
/// MCP tool arguments.
fn setup() -> (
    tokio::runtime::Runtime,
    Runtime,
    McpServer,
    Map<String, Value>,
) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = Arc::new(Registry::from_inventory().unwrap());
    let rt = Runtime::builder(registry).build().unwrap();
    let server = McpServer::new(rt.clone(), Default::default()).unwrap();
    let Value::Object(args) = params() else {
        unreachable!("the params are an object")
    };
    (tokio, rt, server, args)
}

fn bench(c: &mut Criterion) {
    let (tokio, rt, server, args) = setup();

    let mut g = c.benchmark_group("invoke");
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("floor: decode + encode", |b| {
        let p = params();
        b.iter(|| {
            // The params are owned by the decoder, as the runtime owns them.
            let input: AddInput = serde_json::from_value(black_box(p.clone())).unwrap();
            let out = add(input);
            black_box(serde_json::to_value(&out).unwrap())
        })
    });
    // The same pair from and to JSON text, which is what the CLI and an MCP
    // server receive and send.
    g.bench_function("text floor: parse + decode + encode", |b| {
        let text = params().to_string();
        b.iter(|| {
            let input: AddInput = serde_json::from_str(black_box(&text)).unwrap();
            let out = add(input);
            black_box(serde_json::to_string(&out).unwrap())
        })
    });
    g.bench_function("text json call", |b| {
        let text = params().to_string();
        b.iter_custom(|iters| {
            awaited(&tokio, iters, || async {
                let job = JobEnvelope::new("bench_add", Value::Null);
                let result = rt.invoke_text(job, black_box(&text)).await.unwrap();
                // The output's text, as the floor's: read where the result
                // holds it (a caller writes it out from there), not copied.
                black_box(result.data.text());
                result
            })
        })
    });
    g.bench_function("direct call", |b| {
        let app = rt.context();
        b.iter_custom(|iters| awaited(&tokio, iters, || bench_add(&app, black_box(input()))))
    });
    g.bench_function("typed call", |b| {
        b.iter_custom(|iters| {
            awaited(&tokio, iters, || async {
                rt.call::<bench_add>(black_box(input())).await.unwrap()
            })
        })
    });
    g.bench_function("json call", |b| {
        let p = params();
        b.iter_custom(|iters| {
            awaited(&tokio, iters, || async {
                let job = JobEnvelope::new("bench_add", black_box(p.clone()));
                rt.invoke(job).await.unwrap()
            })
        })
    });
    // The same call on a runtime that keeps many more records than the
    // default: a record of this skill takes about 2 KB, so these no longer fit
    // in cache, and the oldest one, freed on every call, is a string of misses.
    let big = Runtime::builder(Arc::new(Registry::from_inventory().unwrap()))
        .sink(Arc::new(MemorySink::new(MANY_RECORDS)))
        .build()
        .unwrap();
    g.bench_function("json call, 10,000 records kept", |b| {
        let p = params();
        b.iter_custom(|iters| {
            awaited(&tokio, iters, || async {
                let job = JobEnvelope::new("bench_add", black_box(p.clone()));
                big.invoke(job).await.unwrap()
            })
        })
    });
    g.bench_function("mcp tools/call (in process)", |b| {
        b.iter_custom(|iters| {
            awaited(&tokio, iters, || async {
                server
                    .call("bench_add", Some(black_box(args.clone())))
                    .await
                    .unwrap()
            })
        })
    });
    g.finish();
}

/// `iters` calls awaited one after another inside one `block_on`, timed as a
/// batch: a server awaits its calls inside long-lived tasks, so entering the
/// executor (about 180 ns on a current-thread runtime) is not a cost of a call.
/// Criterion's own async support times batches the same way.
fn awaited<F, Fut>(tokio: &tokio::runtime::Runtime, iters: u64, mut call: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future,
{
    tokio.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call().await);
        }
        start.elapsed()
    })
}

criterion_group!(benches, bench);

fn main() {
    // `INVOKE_OTEL=1` (built with `--features otel`): spans exported to a
    // collector that is not there, or to the one at `INVOKE_OTEL_ENDPOINT`
    // (bench/otel-instructions.sh).
    #[cfg(feature = "otel")]
    let _otel = std::env::var_os("INVOKE_OTEL").map(|_| {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let endpoint = std::env::var("INVOKE_OTEL_ENDPOINT")
            .unwrap_or_else(|_| "http://127.0.0.1:9".to_owned());
        let config = skill_runtime::otel::OtelConfig::default().endpoint(endpoint);
        let otel = skill_runtime::otel::Otel::start(config, "invoke-bench").unwrap();
        tracing_subscriber::registry().with(otel.layer()).init();
        otel
    });
    if let Ok(spec) = std::env::var("INVOKE_COUNT") {
        return count(&spec);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    report();
}

/// Read the estimates criterion just wrote and print the ratios.
fn report() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/criterion/invoke");
    let mean = |name: &str| -> Option<f64> {
        let path = dir.join(name).join("new/estimates.json");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        v["mean"]["point_estimate"].as_f64()
    };
    let (
        Some(floor),
        Some(direct),
        Some(typed),
        Some(json),
        Some(text_floor),
        Some(text_json),
        Some(json_big),
    ) = (
        mean("floor_ decode + encode"),
        mean("direct call"),
        mean("typed call"),
        mean("json call"),
        mean("text floor_ parse + decode + encode"),
        mean("text json call"),
        mean("json call, 10,000 records kept"),
    )
    else {
        println!("(run the whole group to get the ratios)");
        return;
    };
    println!(
        "\nfloor {floor:.0} ns, direct {direct:.0} ns, typed {typed:.0} ns, json {json:.0} ns"
    );
    println!(
        "json call / floor = {:.2}x (target <= 5x); typed call - direct call = {:.2} us (target <= 2 us)",
        json / floor,
        (typed - direct) / 1000.0
    );
    println!(
        "keeping {MANY_RECORDS} records instead of the default {}: json call {json_big:.0} ns, {:.2}x the floor",
        MemorySink::DEFAULT_CAPACITY,
        json_big / floor
    );
    println!(
        "from text: floor {text_floor:.0} ns, json call {text_json:.0} ns, ratio {:.2}x",
        text_json / text_floor
    );
}

/// `INVOKE_COUNT=op:N`: run one operation N times and nothing else, for an
/// instruction count under callgrind (`bench/invoke-instructions.sh`), which is
/// repeatable where wall time on a shared machine is not.
fn count(spec: &str) {
    let (op, n) = spec.split_once(':').expect("INVOKE_COUNT=op:N");
    let n: u64 = n.parse().expect("N is a number");
    let (tokio, rt, server, args) = setup();
    let p = params();
    // One untimed call of each kind first, so lazy initialization is not counted.
    tokio.block_on(async {
        rt.call::<bench_add>(input()).await.unwrap();
        rt.invoke(JobEnvelope::new("bench_add", p.clone()))
            .await
            .unwrap();
    });
    tokio.block_on(async { server.call("bench_add", Some(args.clone())).await.unwrap() });
    let text = p.to_string();
    let app = rt.context();
    // The in-process queue, enqueue to outcome, one job at a time.
    let queue = {
        let _entered = tokio.enter();
        InProcessQueue::start(
            rt.clone(),
            WorkerOptions::default(),
            Duration::from_secs(60),
        )
        .unwrap()
    };
    // Steady state, as in a server that has been up a while: the in-memory sink
    // is full, so every call also drops the oldest record. Warm up with that
    // many calls of the operation itself (they are run for `N = 0` too, so the
    // script's subtraction leaves only the N measured calls).
    let warm_up = MemorySink::DEFAULT_CAPACITY as u64;
    let mut allocs_before = 0;
    // One `block_on` for all of them, as in the criterion run.
    tokio.block_on(async {
        for i in 0..warm_up + n {
            if i == warm_up {
                allocs_before = ALLOCATIONS.load(Ordering::Relaxed);
            }
            match op {
                "floor" => {
                    let input: AddInput = serde_json::from_value(black_box(p.clone())).unwrap();
                    let out = add(input);
                    black_box(serde_json::to_value(&out).unwrap());
                }
                "direct" => {
                    black_box(bench_add(&app, black_box(input())).await);
                }
                "typed" => {
                    black_box(rt.call::<bench_add>(black_box(input())).await.unwrap());
                }
                "text-floor" => {
                    let input: AddInput = serde_json::from_str(black_box(&text)).unwrap();
                    let out = add(input);
                    black_box(serde_json::to_string(&out).unwrap());
                }
                "text-json" => {
                    let job = JobEnvelope::new("bench_add", Value::Null);
                    let result = rt.invoke_text(job, black_box(&text)).await.unwrap();
                    black_box(result.data.text());
                    black_box(result);
                }
                "json" => {
                    let job = JobEnvelope::new("bench_add", black_box(p.clone()));
                    black_box(rt.invoke(job).await.unwrap());
                }
                "mcp" => {
                    black_box(server.call("bench_add", Some(args.clone())).await.unwrap());
                }
                "queue" => {
                    let job = JobEnvelope::new("bench_add", black_box(p.clone()));
                    let id = queue.enqueue(job).await.unwrap().to_string();
                    black_box(queue.outcome(&id, Duration::from_secs(10)).await.unwrap());
                }
                other => panic!("unknown operation {other}"),
            }
        }
    });
    let allocs = ALLOCATIONS.load(Ordering::Relaxed) - allocs_before;
    if n > 0 {
        eprintln!("{op}: {:.1} allocations per call", allocs as f64 / n as f64);
    }
}

/// Counts allocations, so that `INVOKE_COUNT` can report them per call.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
