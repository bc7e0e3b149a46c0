//! The console's configuration, and how it is built.

use std::sync::Arc;

use crate::agent::registry::AgentRegistry;
use crate::mcp::HttpLimits;
use crate::mcp::auth::Authenticator;
use crate::queue::fleet::Fleet;
use crate::registry::index::Registry;

/// The permission that lets a caller approve or deny parked jobs (besides
/// the `admin` level).
pub const DECIDE_PERMISSION: &str = "queue:decide";

/// The console of a fleet (see the module): build it, then serve it
/// ([`Console::serve`]) or mount it ([`Console::into_service`]).
///
/// ```no_run
/// # use std::sync::Arc;
/// # use skill_runtime::{Registry, Runtime};
/// # async fn serve() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// # let runtime = Runtime::builder(Arc::new(Registry::from_inventory()?)).build()?;
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:8090").await?;
/// use skill_runtime::console::Console;
/// use skill_runtime::mcp::auth::ApiKeys;
/// use skill_runtime::queue::fleet::{Fleet, FleetConfig};
///
/// let fleet = Fleet::connect(FleetConfig::new("redis://127.0.0.1:6390/0")).await?;
/// let console = Console::new(runtime.registry(), fleet).authenticate(ApiKeys::open("keys.json")?);
/// console.serve(listener).await;
/// # Ok(())
/// # }
/// ```
pub struct Console {
    /// The registry as `skill-registry.json` writes it.
    pub(crate) registry: serde_json::Value,
    pub(crate) fleet: Fleet,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
    pub(crate) limits: HttpLimits,
    pub(crate) base: String,
    pub(crate) operator: String,
    /// The agents whose KPIs the statistics show.
    pub(crate) agents: Option<Arc<AgentRegistry>>,
}

impl Console {
    /// The console of `fleet`, showing the skills of `registry` (the
    /// runtime's: `runtime.registry()`).
    pub fn new(registry: &Registry, fleet: Fleet) -> Console {
        Console {
            registry: registry.to_json(),
            fleet,
            authenticator: None,
            limits: HttpLimits::default(),
            base: String::new(),
            operator: "the console's operator".to_owned(),
            agents: None,
        }
    }

    /// Sign people in with `authenticator` (the MCP endpoint's: JWT, API
    /// keys): each page is then for the caller it finds.
    pub fn authenticate(mut self, authenticator: impl Authenticator) -> Console {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// The limits of connections and requests, and the host names and
    /// origins accepted besides loopback ones.
    pub fn limits(mut self, limits: HttpLimits) -> Console {
        self.limits = limits;
        self
    }

    /// The path the console is mounted at (`/console`), for its links; the
    /// service accepts requests with or without it.
    pub fn base_path(mut self, base: impl Into<String>) -> Console {
        self.base = base.into().trim_end_matches('/').to_owned();
        self
    }

    /// Show the KPIs of `agents` (from their run records) with the
    /// statistics.
    pub fn agents(mut self, agents: Arc<AgentRegistry>) -> Console {
        self.agents = Some(agents);
        self
    }

    /// Who decides, as a job's record names them, on a console without an
    /// authenticator (by default "the console's operator").
    pub fn operator(mut self, name: impl Into<String>) -> Console {
        self.operator = name.into();
        self
    }
}
