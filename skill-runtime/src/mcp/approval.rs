//! Asking an MCP client's user before a tool whose skill needs approval
//! (`requires_hitl`, destructive) runs, by elicitation: on 2025-11-25 a
//! request to the client during the call; on 2026-07-28, which forbids
//! requests to the client, an `input_required` result that the client
//! answers by calling again with the user's answer. The answer becomes the
//! job's [`Decision`], which its record keeps.

use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::ErrorData;
use serde_json::{Value, json};

use crate::mcp::seal::Seals;
use crate::model::approval::Decision;
use crate::model::caller::Caller;

/// The key of the approval among a call's input requests.
const KEY: &str = "approval";

/// What asking gave.
pub(crate) enum Asked {
    /// The user answered.
    Decided(Decision),
    /// 2026-07-28: the client is to ask its user and call again.
    InputRequired(InputRequiredResult),
    /// The client cannot ask (no elicitation): the runtime's approver
    /// decides, which by default refuses and says how to approve.
    CannotAsk,
}

/// How a server asks: the seals of its round trips, and how long a person
/// has to answer.
pub(crate) struct Asking<'a> {
    pub(crate) seals: &'a Seals,
    pub(crate) within: Duration,
}

/// Ask the user of the client behind `context` whether `request` (from
/// `caller`) may run; `reason` says why it needs approval.
///
/// On 2025-11-25 the question is a request to the client, answered within
/// [`Asking::within`] or denied. On 2026-07-28 it is an `input_required`
/// result whose request state is sealed to this call: the caller, the tool
/// and its arguments, a deadline and a nonce. An answer counts only with
/// that state, from that caller, before the deadline, and once: the same
/// answer sent again is denied, so one approval runs the tool once.
pub(crate) async fn ask(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller,
    reason: &str,
    how: &Asking<'_>,
) -> Result<Asked, ErrorData> {
    let Some(capability) = context.client_capabilities().and_then(|c| c.elicitation) else {
        return Ok(Asked::CannotAsk);
    };
    // A capability naming neither mode is the 2025-06-18 form one.
    if capability.form.is_none() && capability.url.is_some() {
        return Ok(Asked::CannotAsk);
    }
    let who = context
        .client_info()
        .map(|c| format!("the user of MCP client `{}`", c.name))
        .unwrap_or_else(|| "the MCP client's user".to_owned());
    let params = question(request, reason);
    let stateless = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if !stateless {
        // A client that cancels the call while its user ponders ends the
        // wait: the call is over, nothing runs. So does silence past the
        // deadline.
        let asked = tokio::select! {
            answer = tokio::time::timeout(how.within, context.peer.create_elicitation(params)) => answer,
            () = context.ct.cancelled() => {
                return Ok(Asked::Decided(Decision::denied(who, "the call was cancelled while waiting for the answer")));
            }
        };
        return Ok(Asked::Decided(match asked {
            Ok(Ok(answer)) => decision(&answer, who),
            Ok(Err(e)) => Decision::denied(
                who,
                format!("the client did not answer the approval request: {e}"),
            ),
            Err(_) => Decision::denied(who, format!("no answer within {} s", how.within.as_secs())),
        }));
    }
    if let Some(state) = request.request_state.as_deref()
        && let Some(answer) = request.input_responses.as_ref().and_then(|r| r.get(KEY))
        && let Some(opened) = open(state, request, caller, how.seals).await?
    {
        let decided = match opened {
            Opened::Late => Decision::denied(
                who,
                format!(
                    "the answer came after its deadline ({} s)",
                    how.within.as_secs()
                ),
            ),
            Opened::Fresh { nonce, left } => {
                if !how
                    .seals
                    .use_once(&format!("approval:{nonce}"), left)
                    .await?
                {
                    Decision::denied(
                        who,
                        "this approval answer was used already; one answer runs a tool once",
                    )
                } else {
                    match serde_json::from_value::<ElicitResult>(answer.clone()) {
                        Ok(answer) => decision(&answer, who),
                        Err(e) => {
                            Decision::denied(who, format!("the approval answer is not one: {e}"))
                        }
                    }
                }
            }
        };
        return Ok(Asked::Decided(decided));
    }
    let state = seal(request, caller, how).await?;
    let mut requests = InputRequests::new();
    requests.insert(
        KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Ok(Asked::InputRequired(InputRequiredResult::new(
        Some(requests),
        Some(state),
    )))
}

/// The question: the tool, why it needs a person, and its arguments.
fn question(request: &CallToolRequestParams, reason: &str) -> ElicitRequestParams {
    let mut args =
        serde_json::to_string(&request.arguments.clone().unwrap_or_default()).unwrap_or_default();
    if args.len() > 2_000 {
        let mut end = 2_000;
        while !args.is_char_boundary(end) {
            end -= 1;
        }
        args.truncate(end);
        args.push_str("...");
    }
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Run it",
                "description": "Yes runs the tool; no refuses it.",
                "default": false
            }
        },
        "required": ["approve"]
    }))
    .expect("a fixed elicitation schema");
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "Tool `{}` needs your approval ({reason}) before it runs, with arguments {args}",
            request.name
        ),
        requested_schema: schema,
    }
}

/// The user's answer as a decision: accepted with `approve: true` runs the
/// tool; anything else refuses it.
fn decision(answer: &ElicitResult, who: String) -> Decision {
    let approve = answer
        .content
        .as_ref()
        .and_then(|c| c.get("approve"))
        .and_then(Value::as_bool);
    match (&answer.action, approve) {
        (ElicitationAction::Accept, Some(true)) => Decision::approved(who),
        (ElicitationAction::Accept, _) => Decision::denied(who, "answered no"),
        (ElicitationAction::Decline, _) => Decision::denied(who, "declined"),
        _ => Decision::denied(who, "cancelled the request"),
    }
}

/// How long a seal is: 128 bits.
const SEAL_BYTES: usize = 16;

/// The request state of a 2026-07-28 approval: `{nonce}.{deadline, Unix
/// ms}.{seal}`, the seal binding the nonce and the deadline to the caller,
/// the tool and its arguments, so an answer given for one call approves no
/// other.
async fn seal(
    request: &CallToolRequestParams,
    caller: &Caller,
    how: &Asking<'_>,
) -> Result<String, ErrorData> {
    let nonce: String = rand::random::<[u8; 16]>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let deadline = unix_ms(SystemTime::now() + how.within).to_string();
    let sealed = how
        .seals
        .seal(&parts(request, caller, &nonce, &deadline), SEAL_BYTES)
        .await?;
    Ok(format!("{nonce}.{deadline}.{sealed}"))
}

/// What an answer's state says, when it is a state this server sealed for
/// this call and caller (`None` otherwise: the answer is not one).
enum Opened {
    /// Within its deadline: its nonce, and how long is left.
    Fresh { nonce: String, left: Duration },
    /// Past its deadline.
    Late,
}

async fn open(
    state: &str,
    request: &CallToolRequestParams,
    caller: &Caller,
    seals: &Seals,
) -> Result<Option<Opened>, ErrorData> {
    let mut fields = state.splitn(3, '.');
    let (Some(nonce), Some(deadline), Some(sealed)) = (fields.next(), fields.next(), fields.next())
    else {
        return Ok(None);
    };
    let Ok(ms) = deadline.parse::<u64>() else {
        return Ok(None);
    };
    if !seals
        .opens(sealed, &parts(request, caller, nonce, deadline), SEAL_BYTES)
        .await?
    {
        return Ok(None);
    }
    let now = unix_ms(SystemTime::now());
    Ok(Some(match ms.checked_sub(now) {
        Some(left) if left > 0 => Opened::Fresh {
            nonce: nonce.to_owned(),
            left: Duration::from_millis(left),
        },
        _ => Opened::Late,
    }))
}

/// What a state's seal covers.
fn parts<'a>(
    request: &'a CallToolRequestParams,
    caller: &Caller,
    nonce: &'a str,
    deadline: &'a str,
) -> [Vec<u8>; 6] {
    [
        b"approval".to_vec(),
        caller.principal().into_bytes(),
        nonce.as_bytes().to_vec(),
        deadline.as_bytes().to_vec(),
        request.name.as_bytes().to_vec(),
        serde_json::to_vec(&request.arguments.clone().unwrap_or_default()).unwrap_or_default(),
    ]
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
