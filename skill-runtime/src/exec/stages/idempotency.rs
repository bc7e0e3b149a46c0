//! Idempotency: a job with a key (the caller's, or the default key of an
//! effectful skill) runs once; jobs with the same key get its result.

use std::sync::Arc;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::{Claim, Claimed, IdempotencyStore};
use crate::exec::state::{Done, State};
use serde_json::{Map, Value, json};
use skill_core::manifest::{IdempotencyKey, KeyStrategy, Manifest};

use crate::model::envelope::{Scope, intent_key};
use crate::model::error::InvokeError;
use crate::model::hash::stable_hash;
use crate::model::record::{Stage, StageOutcome};
use crate::model::result::SkillResult;

/// The seed's `defaultIdempotency.keyFields`: a caller's key names one job
/// per intent and entity type, so two envelopes with the same key but for
/// `page`s and for `article`s are two jobs.
const CALLER_KEY: IdempotencyKey = IdempotencyKey {
    strategy: KeyStrategy::Composite,
    fields: &["intent", "scope.entityType", "idempotencyKey"],
};

/// The job's slot in the idempotency store, by the first that applies:
///
/// 1. the caller's key, composed as the seed's default says
///    ([`CALLER_KEY`]: intent, entity type and the key): a caller can
///    always ask for a run of its own;
/// 2. the skill's declared strategy (`idempotency(key = ...)`): the seed's
///    stable hash of intent, scope and payload, or the values of the fields
///    it lists;
/// 3. for a job with an intent, the seed's stable key of intent, scope and
///    payload (what its `createJobEnvelope` writes);
/// 4. for a job a queue delivered to an effectful skill, its own id: a
///    second delivery of the same job (its worker stopped answering)
///    replays the first's outcome instead of running the effect again.
///
/// Otherwise the job has no key and the step is skipped: two direct calls
/// (a command, an MCP tool call) are two runs. The key is kept in the
/// record; a dry run is keyed apart from a real run.
/// A caller's key that is empty is refused: it would make every job that
/// brings one the same job, whoever sent it (a reader of the envelope's
/// JSON refuses it too; this holds it for envelopes built in code).
#[inline]
pub(crate) fn slot(
    m: &Manifest,
    effectful: bool,
    st: &mut State,
) -> Result<Option<String>, InvokeError> {
    if st.target.idempotency_key.as_deref() == Some("") {
        st.step(Stage::Idempotency, StageOutcome::Failed, None);
        return Err(InvokeError::InvalidEnvelope {
            skill: m.name.to_owned(),
            message: "an idempotency key is not empty".to_owned(),
        });
    }
    // A key of the params needs them as a value (text that decoded is JSON).
    if st.target.idempotency_key.is_none() && (m.idempotency.is_some() || st.inv.intent.is_some()) {
        let _ = st.parse_params();
    }
    let (key, slot) = match (&st.target.idempotency_key, m.idempotency, &st.inv.intent) {
        // The record keeps the key the caller gave; the store, its slot.
        (Some(k), _, intent) => {
            let slot = strategy_key(
                CALLER_KEY,
                intent.as_deref(),
                st.inv.scope.as_deref(),
                &Value::Null,
                Some(k),
            );
            (k.clone(), slot)
        }
        (None, Some(strategy), intent) => {
            let k = strategy_key(
                strategy,
                intent.as_deref(),
                st.inv.scope.as_deref(),
                &st.target.params,
                None,
            );
            (k.clone(), k)
        }
        (None, None, Some(intent)) => {
            let k = intent_key(intent, st.inv.scope.as_deref(), &st.target.params);
            (k.clone(), k)
        }
        (None, None, None) if effectful && st.target.delivered => {
            let k = format!("job:{}", st.inv.job_id);
            (k.clone(), k)
        }
        (None, None, None) => {
            st.skip(Stage::Idempotency);
            return Ok(None);
        }
    };
    st.key = Some(key);
    // A dry run and a real run of the same params are different jobs.
    Ok(Some(if st.inv.constraints.dry_run {
        format!("dry:{slot}")
    } else {
        slot
    }))
}

/// The key a strategy gives a job: SHA-256 of the canonical JSON of
/// `{intent, scope, payload}` (`hash`), or of each listed field's value by
/// its path (`composite`; a field the job lacks is `null`), the caller's
/// key among them as `idempotencyKey`.
fn strategy_key(
    k: IdempotencyKey,
    intent: Option<&str>,
    scope: Option<&Scope>,
    payload: &Value,
    caller_key: Option<&str>,
) -> String {
    let scope = serde_json::to_value(scope).unwrap_or(Value::Null);
    let intent = intent.map_or(Value::Null, |i| Value::String(i.to_owned()));
    match k.strategy {
        KeyStrategy::Hash => stable_hash(&json!({
            "intent": intent,
            "scope": scope,
            "payload": payload,
        })),
        KeyStrategy::Composite => {
            let job = json!({"intent": intent, "scope": scope, "payload": payload,
                "idempotencyKey": caller_key});
            let values: Map<String, Value> = k
                .fields
                .iter()
                .map(|f| {
                    let pointer = format!("/{}", f.replace('.', "/"));
                    (
                        (*f).to_owned(),
                        job.pointer(&pointer).cloned().unwrap_or(Value::Null),
                    )
                })
                .collect();
            stable_hash(&Value::Object(values))
        }
    }
}

/// What the store said of a job's slot.
pub(crate) enum Keyed {
    /// Run the job, then [`Claimed::finish`] with its result.
    Run(Box<dyn Claimed>),
    /// An earlier or concurrent job with the same key produced this (boxed:
    /// rare, and large).
    Replayed(Box<Result<Done, InvokeError>>),
}

/// Claim `slot` of skill `skill` (`name@version`) in `store`: the right to run
/// it, or the result of the job that ran it.
pub(crate) async fn claim(
    store: &dyn IdempotencyStore,
    skill: &str,
    slot: &str,
    st: &mut State,
) -> Keyed {
    match store.claim(skill, slot).await {
        Claim::Replay(shared) => {
            st.replayed = true;
            st.step(Stage::Idempotency, StageOutcome::Replayed, None);
            Keyed::Replayed(Box::new(match &*shared {
                Ok(result) => Ok(Done {
                    result: SkillResult {
                        replayed: true,
                        ..result.clone()
                    },
                    typed: None,
                }),
                Err(e) => Err(e.clone()),
            }))
        }
        Claim::Run(claimed) => {
            st.step(Stage::Idempotency, StageOutcome::Passed, None);
            Keyed::Run(claimed)
        }
    }
}

/// Publish the job's outcome to the jobs waiting on its key, and store it.
pub(crate) fn publish(
    claimed: Box<dyn Claimed>,
    done: &Result<Done, InvokeError>,
) -> BoxFuture<'static, ()> {
    let shared = match done {
        Ok(d) => Ok(d.result.clone()),
        Err(e) => Err(e.clone()),
    };
    claimed.finish(Arc::new(shared))
}
