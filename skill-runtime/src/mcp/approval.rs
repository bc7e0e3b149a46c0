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
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::model::approval::Decision;

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

/// Ask the user of the client behind `context` whether `request` may run;
/// `reason` says why it needs approval; `secret` seals the request state of
/// the 2026-07-28 round trip to this very call.
pub(crate) async fn ask(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    reason: &str,
    secret: &[u8; 32],
) -> Asked {
    let Some(capability) = context.client_capabilities().and_then(|c| c.elicitation) else {
        return Asked::CannotAsk;
    };
    // A capability naming neither mode is the 2025-06-18 form one.
    if capability.form.is_none() && capability.url.is_some() {
        return Asked::CannotAsk;
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
        // wait: the call is over, nothing runs.
        let asked = tokio::select! {
            answer = context.peer.create_elicitation(params) => answer,
            () = context.ct.cancelled() => {
                return Asked::Decided(Decision::denied(who, "the call was cancelled while waiting for the answer"));
            }
        };
        return match asked {
            Ok(answer) => Asked::Decided(decision(&answer, who)),
            Err(e) => Asked::Decided(Decision::denied(
                who,
                format!("the client did not answer the approval request: {e}"),
            )),
        };
    }
    let state = seal(secret, request);
    if request.request_state.as_deref() == Some(state.as_str())
        && let Some(answer) = request.input_responses.as_ref().and_then(|r| r.get(KEY))
    {
        return Asked::Decided(
            match serde_json::from_value::<ElicitResult>(answer.clone()) {
                Ok(answer) => decision(&answer, who),
                Err(e) => Decision::denied(who, format!("the approval answer is not one: {e}")),
            },
        );
    }
    let mut requests = InputRequests::new();
    requests.insert(
        KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Asked::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))
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

/// The request state of a 2026-07-28 approval: SHA-256 of the server's
/// secret, the tool and its arguments, so an answer given for one call
/// approves no other.
fn seal(secret: &[u8; 32], request: &CallToolRequestParams) -> String {
    let mut h = Sha256::new();
    h.update(secret);
    h.update(request.name.as_bytes());
    h.update([0]);
    h.update(
        serde_json::to_vec(&request.arguments.clone().unwrap_or_default()).unwrap_or_default(),
    );
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
