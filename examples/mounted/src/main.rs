//! The MCP endpoint mounted in an axum app, beside the app's own routes:
//! `/healthz` (the process is up), `/ready` (the runtime is built, and the
//! fleet's store (Redis or PostgreSQL) answers when one is configured), `/mcp` (the seed skills as
//! MCP tools, through the same service `skill-examples mcp --http` serves:
//! authentication, approvals asked of the client's user, long calls as tasks
//! on the fleet with `--redis`, whose stores the runtime shares),
//! and the protected resource metadata its 401s point at; with `--redis`,
//! `/console` (the fleet in web pages for people, signed in with the same
//! keys or tokens: docs/console.md). Served by
//! `skill_runtime::mcp::serve_app`, with the connection limits
//! docs/deploy.md prescribes (a connection cap with eviction of idle
//! connections, a header timeout that closes idle kept-alive connections
//! too, `TCP_NODELAY`), which axum's own `serve` does not set.
//!
//! ```sh
//! cargo run -p mounted -- --listen 127.0.0.1:8080 --api-keys keys.json
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use clap::Parser;
use serde_json::json;
use skill_runtime::Registry;
use skill_runtime::console::Console;
use skill_runtime::mcp::auth::{ApiKeys, Authenticator, JwksSource, JwtAuth, JwtConfig};
use skill_runtime::mcp::{HttpLimits, McpOptions, McpServer, serve_app};
use skill_runtime::queue::SecretUrl;
use skill_runtime::queue::api::Queue;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_runtime::queue::memory::InProcessQueue;
use skill_runtime::queue::worker::WorkerOptions;

#[derive(Parser)]
struct Args {
    /// Where the app listens.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Authenticate MCP requests with the keys of this file.
    #[arg(long, value_name = "FILE", conflicts_with = "jwks")]
    api_keys: Option<PathBuf>,
    /// Authenticate MCP requests with bearer JWTs checked against this key
    /// set (a URL or a file), from --issuer, for --audience.
    #[arg(long, value_name = "URL|FILE", requires_all = ["issuer", "audience"])]
    jwks: Option<String>,
    #[arg(long)]
    issuer: Option<String>,
    #[arg(long)]
    audience: Option<String>,
    /// The fleet's store, a Redis (redis://) or a PostgreSQL (postgres://):
    /// the runtime shares its stores (idempotency, rate limits, runs,
    /// records), long calls run as tasks on its queue (the fleet's workers
    /// run them), and /ready answers 503 while it does not answer. Without
    /// it, tasks run on a queue in this process. Its password is never
    /// printed.
    #[arg(long, visible_alias = "store", value_name = "URL")]
    redis: Option<SecretUrl>,
    /// The example data (by default found under the working directory or
    /// above this program).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Connections served at once; past it, the one idle longest is closed.
    #[arg(long, value_name = "N", default_value_t = HttpLimits::default().max_connections)]
    max_connections: usize,
    /// A connection that sends no request's headers in this time (an idle
    /// kept-alive one too) is closed.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    header_timeout_ms: u64,
}

#[derive(Clone)]
struct App {
    redis: Option<Fleet>,
}

async fn ready(State(app): State<Arc<App>>) -> (StatusCode, axum::Json<serde_json::Value>) {
    let redis = match &app.redis {
        None => json!("not configured"),
        Some(r) => match r.status().await {
            Ok(_) => json!("reachable"),
            Err(e) => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    axum::Json(json!({"ready": false, "redis": e.to_string()})),
                );
            }
        },
    };
    (
        StatusCode::OK,
        axum::Json(json!({"ready": true, "redis": redis})),
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args = Args::parse();
    let registry = Arc::new(Registry::from_inventory()?);
    let data = seed_skills::data_dir(args.data.as_deref())?;
    let redis = match &args.redis {
        Some(url) => Some(Fleet::connect(FleetConfig::new(url.clone())).await?),
        None => None,
    };
    let mut builder = seed_skills::runtime_builder(registry, &data)
        .map_err(|e| format!("cannot load example data from {}: {e}", data.display()))?;
    if let Some(redis) = &redis {
        builder = redis.share(builder);
    }
    let runtime = builder.build()?;
    // Long calls of clients that declared the tasks extension: jobs of the
    // fleet, or of a queue in this process, whose worker leaves approvals to
    // the runtime's approver (no one could answer them here).
    let tasks: Arc<dyn Queue> = match &redis {
        Some(redis) => Arc::new(redis.clone()),
        None => {
            let options = WorkerOptions {
                approvals: None,
                ..WorkerOptions::default()
            };
            let kept = std::time::Duration::from_secs(3600);
            Arc::new(InProcessQueue::start(runtime.clone(), options, kept)?)
        }
    };
    let limits = HttpLimits::default()
        .max_connections(args.max_connections)
        .header_timeout(std::time::Duration::from_millis(args.header_timeout_ms));
    // A tool that needs approval asks the client's user, as the CLI's
    // server does.
    let mut options = McpOptions::new()
        .server_info("mounted", env!("CARGO_PKG_VERSION"))
        .ask_approvals(true)
        .http(limits.clone());
    // One authenticator for the endpoint and the console.
    let auth: Option<Arc<dyn Authenticator>> = match (&args.api_keys, &args.jwks) {
        (Some(file), _) => Some(Arc::new(ApiKeys::open(file)?)),
        (None, Some(jwks)) => {
            let config = JwtConfig::new(
                JwksSource::parse(jwks),
                args.issuer.clone().unwrap_or_default(),
                args.audience.clone().unwrap_or_default(),
            );
            Some(Arc::new(JwtAuth::connect(config).await?))
        }
        (None, None) if !args.listen.ip().is_loopback() => {
            return Err("an address other machines reach needs --api-keys or --jwks".into());
        }
        (None, None) => None,
    };
    if let Some(auth) = &auth {
        options = options.authenticate(auth.clone());
    }
    // The console, for people, at /console: on the fleet, signed in with
    // the same keys or tokens.
    let console = redis.clone().map(|fleet| {
        let console = Console::new(runtime.registry(), fleet)
            .base_path("/console")
            .limits(limits.clone());
        match &auth {
            Some(auth) => console.authenticate(auth.clone()),
            None => console,
        }
    });
    let mcp = McpServer::new(runtime, options)?
        .with_tasks(tasks)
        .into_service();
    let mut app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/ready", get(ready))
        .route_service("/mcp", mcp.clone())
        // Where a 401 tells clients to learn how to authenticate.
        .route_service("/.well-known/oauth-protected-resource/mcp", mcp)
        .with_state(Arc::new(App { redis }));
    if let Some(console) = console {
        app = app.nest_service("/console", console.into_service());
    }
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    eprintln!("serving at http://{}", listener.local_addr()?);
    tokio::select! {
        () = serve_app(listener, app, limits) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
