//! The benchmark's baseline (issue: "a plain rmcp server with the same tool and no
//! validation"): the example `echo` tool written directly on rmcp's
//! `ServerHandler`, the way a hand-written rmcp server would be. Arguments are
//! decoded with serde and nothing else: no schema check, no policy, no record.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    message: String,
}

#[derive(Serialize, JsonSchema)]
struct EchoOutput {
    message: String,
}

#[derive(Clone)]
struct Plain {
    tools: Arc<[Tool]>,
}

impl ServerHandler for Plain {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("plain-rmcp", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let input: EchoInput = serde_json::from_value(args)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let output = serde_json::to_value(EchoOutput {
            message: input.message,
        })
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(output.to_string())]);
        result.structured_content = Some(output);
        Ok(result.into())
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let tool = Tool::new(
        "echo",
        "Return the message unchanged; a checkpoint in workflows.",
        Arc::new(serde_json::Map::new()),
    )
    .with_input_schema::<EchoInput>()
    .with_output_schema::<EchoOutput>();
    let server = Plain {
        tools: vec![tool].into(),
    };
    // `--http ADDR`: the same tool over Streamable HTTP, on hyper, the way a
    // hand-written rmcp server would serve it; `--json` after it sets rmcp's
    // `json_response` (a call's answer as one JSON body, not an event stream).
    let args: Vec<String> = std::env::args().collect();
    match args.as_slice() {
        [_, flag, addr] if flag == "--http" => return serve_http(server, addr, false).await,
        [_, flag, addr, json] if flag == "--http" && json == "--json" => {
            return serve_http(server, addr, true).await;
        }
        _ => {}
    }
    let running = server.serve(rmcp::transport::stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}

async fn serve_http(
    server: Plain,
    addr: &str,
    json: bool,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let mut config = StreamableHttpServerConfig::default();
    config.json_response = json;
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("serving at http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}
