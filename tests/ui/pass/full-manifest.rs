#![forbid(unsafe_code)]
//! Every #[skill] key at once.

use skill_runtime::prelude::*;

/// Read the store.
#[capability(id = "store.read", effect = "database", operation = "read")]
pub struct StoreRead;

/// Delete from the store.
#[capability(id = "store.delete", effect = "database", operation = "delete")]
pub struct StoreDelete;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub key: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub removed: bool,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum PurgeError {
    /// The store did not answer in time.
    #[error("timeout")]
    #[failure(retryable)]
    Timeout,
    /// The key is protected.
    #[error("protected")]
    #[failure(code = "key_protected")]
    Protected { key: String },
}

/// Echo.
#[skill]
pub async fn helper(input: In) -> Out {
    Out { removed: input.key.is_empty() }
}

/// Purge a key from the store.
///
/// This second paragraph is documentation only; the description is the first.
#[skill(
    name = "purge_key",
    title = "Purge Key",
    version = "2.1.0-beta.1",
    domain = "data",
    owners("data-team", "sre"),
    status = "deprecated",
    deprecation(replaced_by = "helper", removal_version = "3.0.0", notes = "call helper instead"),
    kind = "logic",
    autonomy = "L1",
    policy_tags("requires_review", "pii"),
    rate_limit(max_per_minute = 5),
    redaction(inputs("key"), outputs()),
    timeout_ms = 1_000,
    retries = 0,
    backoff = "none",
    idempotent = false,
    destructive,
    requires_hitl,
    sandbox = "docker",
    source = "global",
    mcp(exposed = true, tool_name = "data.purge-key", permissions("data:delete")),
    reusable_by(orchestrator = "admin", executor = "execute"),
    capabilities(StoreRead, StoreDelete),
    side_effects(StoreDelete(target = "kv::{key}", reversible = false, description = "Removes the key")),
    calls(helper),
    precondition(code = "EMPTY_KEY", message = "key must not be empty", check = |i: &In| !i.key.is_empty()),
    precondition(code = "NO_ROLE", message = "a role is required", check = |_i: &In, c: &Caller| c.agent_role.is_some()),
    postcondition(check = |o: &Out| o.removed || !o.removed, rollback = "restore_key"),
    validation_rule(id = "removed", severity = "warning", message = "nothing removed", check = |_i: &In, o: &Out| o.removed),
)]
pub async fn purge(ctx: Ctx, input: In) -> Result<Out, PurgeError> {
    let () = ctx.resource::<StoreRead>();
    let () = ctx.resource::<StoreDelete>();
    if input.key == "root" {
        return Err(PurgeError::Protected { key: input.key });
    }
    let inner = ctx.call::<helper>(In { key: input.key }).await;
    match inner {
        Ok(out) => Ok(out),
        Err(never) => match never {},
    }
}

fn main() {
    use skill_runtime::Skill;
    let m = <purge as Skill>::MANIFEST;
    assert_eq!(m.name, "purge_key");
    assert_eq!(m.description, "Purge a key from the store.");
    assert_eq!(m.call_targets[0].name, "helper");
    assert_eq!(<purge as Skill>::PRECONDITIONS.len(), 2);
}
