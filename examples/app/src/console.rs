//! `console --http ADDR`: the fleet in web pages (skill_runtime::console),
//! for people: the queue with its parked jobs to approve or deny, the runs,
//! latency per skill, the registry.

use std::process::ExitCode;

use skill_runtime::Registry;
use skill_runtime::console::Console;
use skill_runtime::mcp::HttpLimits;

use crate::auth_args::{AuthArgs, AuthMode};
use crate::redis_args::RedisArgs;
use crate::run::async_runtime;
use crate::serve::parse_http_addr;

#[derive(clap::Args)]
pub struct ConsoleArgs {
    /// Serve the console on this address (e.g. 127.0.0.1:8090 or
    /// localhost:8090; port 0 picks one); its URL is printed on standard
    /// error. An address other machines reach needs --auth.
    #[arg(long, value_name = "ADDR", value_parser = parse_http_addr)]
    http: std::net::SocketAddr,
    #[command(flatten)]
    redis: RedisArgs,
    #[command(flatten)]
    auth: AuthArgs,
    /// Without --auth: who decides on parked jobs, as their records name
    /// them (default: $USER).
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    /// Accept requests for this host name too (the name people use behind
    /// a proxy; repeat for several).
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Accept posts from this origin too (https://ops.example.com; repeat
    /// for several). The console's own origin is always accepted.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
}

pub fn console(registry: Registry, args: ConsoleArgs) -> ExitCode {
    let mode = match args.auth.mode() {
        Ok(mode) => mode,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if !args.http.ip().is_loopback() && mode == AuthMode::None {
        eprintln!(
            "error: --http {} serves other machines, and every page would be this console's operator's, Approve and Deny included: sign people in with --auth jwt --jwks URL --issuer ISS --audience AUD, or --auth api-keys FILE (see docs/console.md); without --auth, listen on loopback (127.0.0.1 or ::1)",
            args.http
        );
        return ExitCode::from(2);
    }
    let rt = match async_runtime(tokio::runtime::Builder::new_multi_thread()) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let fleet = match args.redis.require("console").await {
            Ok(f) => f,
            Err(code) => return code,
        };
        let mut limits = HttpLimits::default();
        for host in &args.allow_hosts {
            limits = limits.allow_host(host.clone());
        }
        for origin in &args.allow_origins {
            limits = limits.allow_origin(origin.clone());
        }
        let by = args
            .by
            .clone()
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "the console's operator".to_owned());
        let mut console = Console::new(&registry, fleet).limits(limits).operator(by);
        if let Ok(agents) = crate::agents::registry() {
            console = console.agents(std::sync::Arc::new(agents));
        }
        match args.auth.authenticator(&mode, None).await {
            Ok(Some(auth)) => console = console.authenticate(auth),
            Ok(None) => {}
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
        let listener = match tokio::net::TcpListener::bind(args.http).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: --http {}: {e}", args.http);
                return ExitCode::FAILURE;
            }
        };
        match listener.local_addr() {
            Ok(a) => eprintln!("serving the console at http://{a}/"),
            Err(e) => eprintln!("serving the console: {e}"),
        }
        console.serve(listener).await;
        ExitCode::SUCCESS
    })
}
