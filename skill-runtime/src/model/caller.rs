//! Who is calling, and with what authority: the seed's `JobContext` (user,
//! source, priority, RAG version, SEO role) with the agent role and
//! permissions the runtime authorizes against.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use skill_core::manifest::{AgentRole, PermissionLevel};

/// Who is calling, and with what authority.
///
/// A caller that presents an agent role is held to the skill's `reusable_by`; a
/// caller with a set of granted permissions is held to the skill's MCP
/// permissions. [`Caller::default`] is a local operator: no role, permissions not
/// restricted (the CLI without flags, tests, in-process code).
///
/// Records write it in snake_case, like the rest of a record; an envelope
/// writes it as the seed's camelCase `context`. Both spellings are read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caller {
    /// The agent role the caller acts as.
    #[serde(default, alias = "agentRole")]
    pub agent_role: Option<AgentRole>,
    /// The caller's permission level for that role.
    #[serde(default, alias = "permissionLevel")]
    pub permission_level: Option<PermissionLevel>,
    /// Granted permissions such as `seo:read`; `None` means not restricted.
    /// Shared: a server clones its caller into every job.
    #[serde(default)]
    pub permissions: Option<Arc<BTreeSet<String>>>,
    /// The person behind the call, if any.
    #[serde(default, alias = "userId")]
    pub user_id: Option<String>,
    /// What triggered the job; required in JSON, so that every job says
    /// where it came from.
    pub source: Source,
    /// How urgent the job is.
    #[serde(default)]
    pub priority: Priority,
    /// The RAG index version the job reads (the seed's `ragVersion`).
    #[serde(default, alias = "ragVersion", skip_serializing_if = "Option::is_none")]
    pub rag_version: Option<String>,
    /// The SEO role the job acts for (the seed's `seoRole`).
    #[serde(default, alias = "seoRole", skip_serializing_if = "Option::is_none")]
    pub seo_role: Option<String>,
}

impl Caller {
    /// An agent with `role` holding permission `level`.
    pub fn agent(role: AgentRole, level: PermissionLevel) -> Caller {
        Caller {
            agent_role: Some(role),
            permission_level: Some(level),
            ..Caller::default()
        }
    }

    /// Who the caller is, as one string: its user id when it has one (the
    /// subject of a token, the name of a key), else its authority (role,
    /// level, permissions). What owns an MCP session, a task and an
    /// approval round trip.
    pub fn principal(&self) -> String {
        match &self.user_id {
            Some(id) => format!("user:{id}"),
            None => format!(
                "authority:{}:{}:{}",
                self.agent_role.map_or("", AgentRole::as_str),
                self.permission_level.map_or("", PermissionLevel::as_str),
                match &self.permissions {
                    None => "*".to_owned(),
                    Some(p) => p.iter().map(String::as_str).collect::<Vec<_>>().join(" "),
                }
            ),
        }
    }

    /// Whether `other` is the same principal as this caller
    /// ([`Caller::principal`]).
    pub fn same_principal(&self, other: &Caller) -> bool {
        self.principal() == other.principal()
    }

    /// The same caller, restricted to exactly `permissions`.
    pub fn with_permissions<I, P>(mut self, permissions: I) -> Caller
    where
        I: IntoIterator<Item = P>,
        P: Into<String>,
    {
        self.permissions = Some(Arc::new(permissions.into_iter().map(Into::into).collect()));
        self
    }
}

/// `caller` as the seed's camelCase `context`, as envelopes write it.
pub(crate) fn serialize_context<S: Serializer>(c: &Caller, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Context<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        user_id: &'a Option<String>,
        source: Source,
        priority: Priority,
        #[serde(skip_serializing_if = "Option::is_none")]
        rag_version: &'a Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        seo_role: &'a Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent_role: Option<AgentRole>,
        #[serde(skip_serializing_if = "Option::is_none")]
        permission_level: Option<PermissionLevel>,
        #[serde(skip_serializing_if = "Option::is_none")]
        permissions: &'a Option<Arc<BTreeSet<String>>>,
    }
    Context {
        user_id: &c.user_id,
        source: c.source,
        priority: c.priority,
        rag_version: &c.rag_version,
        seo_role: &c.seo_role,
        agent_role: c.agent_role,
        permission_level: c.permission_level,
        permissions: &c.permissions,
    }
    .serialize(s)
}

/// What triggered the job (the seed's `JobContext.source`, a closed set: a
/// seed consumer refuses any other word). The runtime writes `manual` for a
/// command line or code in this process, `webhook` for an MCP tool call (a
/// request from outside the process), and `cron` for a schedule; a pipeline's
/// steps and an agent's skill calls keep the source of the job that started
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A schedule.
    Cron,
    /// A request from outside the process: a webhook, an MCP tool call.
    Webhook,
    /// A person, by hand, or code in this process.
    #[default]
    Manual,
    /// An event on a bus.
    Event,
}

/// How soon the job should run (the seed's `JobContext.priority`): a queue
/// serves `critical` before `high` before `normal` before `low`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Background work.
    Low,
    /// The default.
    #[default]
    Normal,
    /// Ahead of normal work.
    High,
    /// Ahead of everything.
    Critical,
}

impl Priority {
    /// Every priority, highest first: the order a queue serves them in.
    pub const SERVED: [Priority; 4] = [
        Priority::Critical,
        Priority::High,
        Priority::Normal,
        Priority::Low,
    ];

    /// The lowercase word, as envelopes write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }
}
