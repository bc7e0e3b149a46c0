//! The conformance fixtures served over Streamable HTTP on a loopback
//! address (`127.0.0.1:0` by default: a free port), the endpoint printed on
//! standard error: what `tests/mcp_conformance.rs` runs the official MCP
//! conformance suite against.
//!
//! ```sh
//! cargo run -p conformance-fixture -- 127.0.0.1:3001
//! ```

use std::sync::Arc;

use skill_runtime::mcp::{McpOptions, McpServer};
use skill_runtime::{Registry, Runtime};

#[tokio::main]
#[expect(
    clippy::disallowed_methods,
    reason = "the server's set-up, not a handler: it listens and serves"
)]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let registry = Arc::new(Registry::from_inventory()?);
    let runtime = Runtime::builder(registry).build()?;
    let options = conformance_fixture::published(
        McpOptions::new().server_info("conformance-fixture", env!("CARGO_PKG_VERSION")),
    );
    let server = McpServer::new(runtime, options)?;
    // The watched resource changes every 200 ms; its subscribers are told.
    let watcher = server.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            conformance_fixture::tick();
            watcher.resource_updated(conformance_fixture::WATCHED).await;
        }
    });
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "serving MCP (Streamable HTTP) at http://{}/mcp",
        listener.local_addr()?
    );
    server.serve_http(listener).await?;
    Ok(())
}
