//! `mcp`: the exposed skills as MCP tools, over stdio or Streamable HTTP.

use std::process::ExitCode;

use skill_runtime::manifest::{AgentRole, PermissionLevel};
use skill_runtime::mcp::{HttpLimits, McpOptions, McpServer};
use skill_runtime::{Caller, Registry};

use crate::auth_args::AuthMode;
use crate::run::{RuntimeArgs, async_runtime, build_runtime};
use crate::{parse_level, parse_role};

#[derive(clap::Args)]
pub struct McpArgs {
    /// Grant this MCP permission (e.g. seo:read; repeat for several).
    #[arg(long = "grant", value_name = "PERMISSION")]
    grants: Vec<String>,
    /// Caller's agent role, checked against each skill's reusable_by.
    #[arg(long, value_parser = parse_role)]
    role: Option<AgentRole>,
    /// Caller's permission level (read, execute, admin); `execute` when
    /// --role is given without it.
    #[arg(long, value_parser = parse_level)]
    permission: Option<PermissionLevel>,
    #[command(flatten)]
    runtime: RuntimeArgs,
    /// How long the user of a client has to answer a question asking them
    /// to approve a tool (`requires_hitl`, destructive, `requires_review`):
    /// unanswered past it, the call is denied.
    #[arg(long, default_value = "10m", value_parser = crate::fleet::within(skill_runtime::queue::api::Bound::APPROVAL), value_name = "DURATION")]
    approval_timeout: std::time::Duration,
    /// Serve the agents too: one tool per agent, named by its id (see
    /// docs/agents.md).
    #[arg(long)]
    agents: bool,
    /// With --agents: keep each agent run's R3 files (`audit.md`,
    /// `backlog.json`, `graph.json`) in this directory, served to the run's
    /// caller as resources (`skill://runs/{job_id}/artifacts/{name}`). With
    /// --redis they are kept on the fleet's store without it.
    #[arg(long, value_name = "DIR", requires = "agents")]
    artifacts: Option<std::path::PathBuf>,
    /// Serve the Streamable HTTP transport on this address (e.g.
    /// 127.0.0.1:8080 or localhost:8080; port 0 picks one) instead of
    /// standard input and output; the endpoint is printed on standard error.
    /// An address other machines reach needs --auth.
    #[arg(long, value_name = "ADDR", value_parser = parse_http_addr)]
    http: Option<std::net::SocketAddr>,
    #[command(flatten)]
    auth: crate::auth_args::AuthArgs,
    /// With --http: the URL clients reach the endpoint at
    /// (https://mcp.example.com/mcp), named in the protected resource
    /// metadata; its host is accepted in `Host` too.
    #[arg(long, value_name = "URL", requires = "http")]
    resource_url: Option<String>,
    /// With --http: accept requests for this host name too (the name
    /// clients use behind a proxy; repeat for several).
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_hosts: Vec<String>,
    /// With --http: accept requests from this browser origin too (e.g.
    /// https://app.example.com:443; repeat for several). Loopback origins are
    /// always accepted; a request from any other is answered 403.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origins: Vec<String>,
    /// With --http: connections served at once.
    /// Past it, the connection idle longest is closed to admit a new one.
    #[arg(long, value_name = "N", default_value_t = HttpLimits::default().max_connections, requires = "http", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections: usize,
    /// With --http: a connection that does not send a request's headers in
    /// this time is closed.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "http", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    header_timeout_ms: u64,
    /// With --http: a request whose body has not arrived in this time (plus
    /// its length at 16 KiB/s) is answered 408 and its connection closed.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "http", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    body_timeout_ms: u64,
    /// With --http: sessions kept at once; one more closes the least recently
    /// used.
    #[arg(long, value_name = "N", default_value_t = HttpLimits::default().max_sessions, requires = "http", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_sessions: usize,
    /// With --http: requests each caller may send in any minute (callers
    /// by the subject of their token or the name of their key); past it,
    /// 429 with Retry-After. No limit by default.
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..))]
    caller_rate: Option<u32>,
    /// With --http: a session with no request for this long is closed.
    #[arg(long, value_name = "SECS", default_value_t = HttpLimits::default().session_idle.as_secs(), requires = "http", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    session_idle_secs: u64,
}

/// A socket address, with `localhost` read as 127.0.0.1 (it names loopback
/// by definition, RFC 6761); other names are refused, not looked up.
pub fn parse_http_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    let spelled = match s.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => s.to_owned(),
    };
    spelled
        .parse()
        .map_err(|e| format!("`{s}` is not HOST:PORT with an IP address or `localhost` ({e})"))
}

pub fn mcp(registry: Registry, args: McpArgs) -> ExitCode {
    let mode = match args.auth.mode() {
        Ok(mode) => mode,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
        && mode == AuthMode::None
    {
        eprintln!(
            "error: --http {addr} serves other machines, and every request would run as this server's own caller: authenticate them with --auth jwt --jwks URL --issuer ISS --audience AUD, or --auth api-keys FILE (see docs/deploy.md); without --auth, listen on loopback (127.0.0.1 or ::1)"
        );
        return ExitCode::from(2);
    }
    // Over stdio, one client sends over one pipe: a single thread serves it
    // with no hand-offs between workers (calls still interleave at their
    // awaits). Over HTTP, clients are many: calls run in parallel.
    let builder = match args.http {
        None => tokio::runtime::Builder::new_current_thread(),
        Some(_) => tokio::runtime::Builder::new_multi_thread(),
    };
    let rt = match async_runtime(builder) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let redis = match args.runtime.redis.connect().await {
            Ok(r) => r,
            Err(code) => return code,
        };
        let runtime = match build_runtime(registry, &args.runtime, None, redis.as_ref()) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let mut http = HttpLimits::default()
            .max_connections(args.max_connections)
            .header_timeout(std::time::Duration::from_millis(args.header_timeout_ms))
            .body_timeout(std::time::Duration::from_millis(args.body_timeout_ms))
            .max_sessions(args.max_sessions)
            .session_idle(std::time::Duration::from_secs(args.session_idle_secs));
        if let Some(n) = args.caller_rate {
            http = http.caller_rate(n);
        }
        for origin in &args.allow_origins {
            http = http.allow_origin(origin.clone());
        }
        for host in &args.allow_hosts {
            http = http.allow_host(host.clone());
        }
        if let Some(host) = args
            .resource_url
            .as_deref()
            .and_then(|u| u.split_once("://"))
            .map(|(_, rest)| rest.split('/').next().unwrap_or_default())
        {
            http = http.allow_host(host.to_owned());
        }
        if args.http.is_some() {
            let (fitted, lowered) = http.fitted();
            if let Some(why) = lowered {
                eprintln!("warning: {why}");
            }
            http = fitted;
        }
        let options = McpOptions::new()
            .grants(args.grants.clone())
            .caller(Caller {
                agent_role: args.role,
                permission_level: crate::run::level(args.role, args.permission),
                ..Caller::default()
            })
            .server_info(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
            // The ids lead to the records, which only a record file or the
            // fleet's stream keeps where someone can read them.
            .result_ids(args.runtime.record.is_some() || redis.is_some())
            .ask_approvals(!args.runtime.approve)
            .approval_timeout(args.approval_timeout)
            .http(http);
        let options = match &args.resource_url {
            Some(url) => options.resource_url(url.clone()),
            None => options,
        };
        let options = match args
            .auth
            .authenticator(&mode, args.resource_url.as_deref())
            .await
        {
            Ok(Some(auth)) => options.authenticate(auth),
            Ok(None) => options,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let server = match McpServer::new(runtime.clone(), options).and_then(|s| {
            if !args.agents {
                return Ok(s);
            }
            match crate::agents::registry() {
                Ok(agents) => {
                    let runner = skill_runtime::agents::AgentRunner::new(
                        runtime.clone(),
                        std::sync::Arc::new(agents),
                    );
                    s.with_agents(match (&args.artifacts, &redis) {
                        (Some(dir), _) => runner.with_artifacts(dir),
                        (None, Some(fleet)) => runner.with_artifact_store(fleet.artifact_store()),
                        (None, None) => runner,
                    })
                }
                Err(_) => Err(skill_runtime::mcp::ToolError {
                    tool: "agents".to_owned(),
                    message: "the agent registry did not build".to_owned(),
                }),
            }
        }) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        // Long calls of clients that declared the tasks extension: on the
        // fleet with --redis (its workers run them, any server answers for
        // them), else on a queue of this process, whose worker leaves
        // approvals to the runtime's approver (nobody could `approve` here).
        let tasks: std::sync::Arc<dyn skill_runtime::queue::api::Queue> = match &redis {
            Some(r) => std::sync::Arc::new(r.clone()),
            None => {
                let options = skill_runtime::queue::worker::WorkerOptions {
                    approvals: None,
                    ..Default::default()
                };
                let ttl = std::time::Duration::from_secs(3600);
                match skill_runtime::queue::memory::InProcessQueue::start(
                    runtime.clone(),
                    options,
                    ttl,
                ) {
                    Ok(q) => std::sync::Arc::new(q),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        };
        let server = server.with_tasks(tasks);
        let served = match args.http {
            None => server.serve_stdio().await,
            Some(addr) => match tokio::net::TcpListener::bind(addr).await {
                Ok(listener) => {
                    match listener.local_addr() {
                        Ok(a) => eprintln!("serving MCP (Streamable HTTP) at http://{a}/mcp"),
                        Err(e) => eprintln!("serving MCP (Streamable HTTP): {e}"),
                    }
                    server.serve_http(listener).await.map_err(Into::into)
                }
                Err(e) => Err(e.into()),
            },
        };
        if let Some(r) = &redis {
            r.record_sink().flush().await;
        }
        match served {
            Ok(()) => crate::run::records_lost(&runtime, &args.runtime, redis.is_some())
                .err()
                .unwrap_or(ExitCode::SUCCESS),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
