//! `#[skill(...)]`'s keys read into [`SkillArgs`], for each form of the
//! attribute.

use proc_macro2::Span;
use skill_core::capability::Ambient;
use skill_core::manifest::{Autonomy, Backoff, KeyStrategy, Origin, Sandbox, Status};

use syn::LitStr;

use crate::args::{Entry, List, Node};
use crate::ast::parts::{
    deprecation, mcp, postcondition, precondition, reusable_by, rule, side_effects,
};
use crate::ast::read::{
    choice, flag, int_lit, lowercase_word, nodes, parse_path, path_list, str_list, str_lit,
    sub_list, word, words,
};
use crate::ast::types::{Form, IdempotencyArgs, OpArgs, SkillArgs, StepArgs};
use crate::errors::Errors;

/// Keys `#[skill(...)]` accepts, in documentation order.
pub const SKILL_KEYS: &[&str] = &[
    "name",
    "title",
    "version",
    "description",
    "domain",
    "owners",
    "status",
    "deprecation",
    "kind",
    "autonomy",
    "policy_tags",
    "intents",
    "rate_limit",
    "redaction",
    "timeout_ms",
    "retries",
    "backoff",
    "idempotent",
    "idempotency",
    "destructive",
    "requires_hitl",
    "sandbox",
    "source",
    "mcp",
    "reusable_by",
    "capabilities",
    "side_effects",
    "calls",
    "precondition",
    "postcondition",
    "validation_rule",
    "ambient",
    "crate",
];

/// Keys that may appear more than once.
const REPEATABLE: &[&str] = &["precondition", "postcondition", "validation_rule", "step"];

/// Skill keys a pipeline does not take, and why.
const NOT_FOR_PIPELINES: &[(&str, &str)] = &[
    (
        "capabilities",
        "a pipeline's capabilities are computed from its steps (the union of what they reach); remove `capabilities`",
    ),
    (
        "side_effects",
        "a pipeline's side effects are its steps'; remove `side_effects`",
    ),
    (
        "calls",
        "a pipeline calls what its steps target; remove `calls` and add a `step(...)`",
    ),
    (
        "ambient",
        "a pipeline has no body to scan; remove `ambient`",
    ),
    (
        "precondition",
        "a pipeline's checks are its steps'; put the precondition on the first step's skill",
    ),
    (
        "postcondition",
        "a pipeline's checks are its steps'; put the postcondition on the last step's skill",
    ),
    (
        "validation_rule",
        "a pipeline's checks are its steps'; put the rule on a step's skill",
    ),
    ("kind", "`#[pipeline]` is the pipeline kind; remove `kind`"),
];

/// Skill keys an op does not take, and why.
const NOT_FOR_OPS: &[(&str, &str)] = &[
    ("kind", "an op has no kind; remove `kind`"),
    (
        "mcp",
        "ops are not served over MCP; expose a skill (or a pipeline) that calls the op",
    ),
    (
        "intents",
        "jobs name skills, not ops, by intent; put `intents(...)` on a skill (or a pipeline) that calls the op",
    ),
];

impl SkillArgs {
    pub fn from_list_as(cx: &Errors, mut list: List, form: Form) -> SkillArgs {
        // A pipeline's and an op's keys: a skill's, less those refused, plus
        // their own.
        let (what, not, own): (_, &[(&str, &str)], &[&str]) = match form {
            Form::Skill => ("#[skill]", &[], &[]),
            Form::Pipeline => ("#[pipeline]", NOT_FOR_PIPELINES, &["step"]),
            Form::Op => ("#[op]", NOT_FOR_OPS, &["runtime", "tool", "url", "command"]),
        };
        // Each refused key is reported with its reason, then dropped.
        list.0.retain(|e| match e {
            Entry::Node(n) => match not.iter().find(|(k, _)| n.key() == *k) {
                Some((_, why)) => {
                    cx.error_at(n.span(), *why);
                    false
                }
                None => true,
            },
            Entry::Lit(_) => true,
        });
        let keys: Vec<&str> = SKILL_KEYS
            .iter()
            .copied()
            .filter(|k| !not.iter().any(|(n, _)| n == k))
            .chain(own.iter().copied())
            .collect();
        let mut a = SkillArgs::default();
        if form == Form::Op {
            a.op = Some(OpArgs {
                runtime: None,
                tool: None,
                url: None,
                command: None,
            });
        }
        for node in nodes(cx, list, what, &keys, REPEATABLE) {
            let key = node.key();
            match key.as_str() {
                "crate" => a.krate = str_lit(cx, &node).and_then(|s| parse_path(cx, &s)),
                "name" => a.name = str_lit(cx, &node),
                "title" => a.title = str_lit(cx, &node),
                "version" => a.version = str_lit(cx, &node),
                "description" => a.description = str_lit(cx, &node),
                "domain" => a.domain = str_lit(cx, &node),
                "owners" => a.owners = str_list(cx, &node),
                "status" => a.status = word::<Status>(cx, &node),
                "deprecation" => a.deprecation = deprecation(cx, node),
                "kind" => a.kind = choice(cx, &node, &[("logic", "Logic")]),
                "autonomy" => a.autonomy = word::<Autonomy>(cx, &node),
                "policy_tags" => a.policy_tags = str_list(cx, &node),
                "intents" => a.intents = str_list(cx, &node),
                "rate_limit" => {
                    for n in nodes(
                        cx,
                        sub_list(cx, node),
                        "rate_limit(...)",
                        &["max_per_minute"],
                        &[],
                    ) {
                        a.rate_limit = int_lit(cx, &n);
                    }
                    if a.rate_limit.is_none() && !cx.has_errors() {
                        cx.error_at(
                            Span::call_site(),
                            "rate_limit(...) needs `max_per_minute = N`",
                        );
                    }
                }
                "redaction" => {
                    for n in nodes(
                        cx,
                        sub_list(cx, node),
                        "redaction(...)",
                        &["inputs", "outputs"],
                        &[],
                    ) {
                        match n.key().as_str() {
                            "inputs" => a.redact_inputs = str_list(cx, &n),
                            _ => a.redact_outputs = str_list(cx, &n),
                        }
                    }
                }
                "timeout_ms" => a.timeout_ms = int_lit(cx, &node),
                "retries" => a.retries = int_lit(cx, &node),
                "backoff" => a.backoff = word::<Backoff>(cx, &node),
                "idempotent" => a.idempotent = flag(cx, &node),
                "idempotency" => {
                    let mut i = IdempotencyArgs {
                        span: node.span(),
                        strategy: None,
                        fields: Vec::new(),
                    };
                    for n in nodes(
                        cx,
                        sub_list(cx, node),
                        "idempotency(...)",
                        &["key", "fields"],
                        &[],
                    ) {
                        match n.key().as_str() {
                            "key" => i.strategy = word::<KeyStrategy>(cx, &n),
                            _ => i.fields = str_list(cx, &n),
                        }
                    }
                    a.idempotency = Some(i);
                }
                "destructive" => a.destructive = flag(cx, &node),
                "requires_hitl" => a.requires_hitl = flag(cx, &node),
                "sandbox" => a.sandbox = lowercase_word::<Sandbox>(cx, &node),
                "source" => a.source = lowercase_word::<Origin>(cx, &node),
                "mcp" => a.mcp = Some(mcp(cx, node)),
                "reusable_by" => a.reusable_by = reusable_by(cx, node),
                "capabilities" => a.capabilities = path_list(cx, node, "capabilities"),
                "side_effects" => a.side_effects = side_effects(cx, node),
                "calls" => a.calls = path_list(cx, node, "calls"),
                "ambient" => {
                    a.ambient = ambient(cx, node, "this skill may reach it without a capability")
                }
                "precondition" => a.preconditions.push(precondition(cx, node)),
                "postcondition" => a.postconditions.push(postcondition(cx, node)),
                "validation_rule" => a.validation_rules.push(rule(cx, node)),
                "step" => a.steps.push(step(cx, node)),
                "runtime" | "tool" | "url" | "command" => {
                    let Some(op) = a.op.as_mut() else {
                        unreachable_key(cx, &node);
                        continue;
                    };
                    match node.key().as_str() {
                        "runtime" => {
                            op.runtime = choice(
                                cx,
                                &node,
                                &[
                                    ("native", "Native"),
                                    ("mcp", "Mcp"),
                                    ("http", "Http"),
                                    ("script", "Script"),
                                ],
                            )
                        }
                        "tool" => op.tool = str_lit(cx, &node),
                        "url" => op.url = str_lit(cx, &node),
                        _ => op.command = str_lit(cx, &node),
                    }
                }
                _ => unreachable_key(cx, &node),
            }
        }
        a
    }
}

pub(super) fn step(cx: &Errors, node: Node) -> StepArgs {
    let span = node.span();
    let mut s = StepArgs {
        id: None,
        target: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
        after: None,
        guard: None,
        on_error: None,
        retries: None,
    };
    let mapping = |cx: &Errors, n: Node, what: &str| -> Vec<(syn::Ident, LitStr)> {
        let mut out = Vec::new();
        for entry in sub_list(cx, n).0 {
            match entry {
                Entry::Node(m) if m.path.get_ident().is_some() => {
                    if let (Some(field), Some(r)) = (m.path.get_ident().cloned(), str_lit(cx, &m)) {
                        out.push((field, r));
                    }
                }
                other => cx.error_at(
                    other.span(),
                    format!("expected `field = \"$...\"` in {what}(...)"),
                ),
            }
        }
        out
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "step(...)",
        &[
            "id", "skill", "op", "inputs", "outputs", "after", "when", "unless", "on_error",
            "retries",
        ],
        &[],
    ) {
        match n.key().as_str() {
            "id" => s.id = str_lit(cx, &n),
            "skill" | "op" => {
                let kind = if n.key() == "op" { "op" } else { "skill" };
                if s.target.is_some() {
                    cx.error_at(
                        n.span(),
                        "a step has one target: `skill = \"...\"` or `op = \"...\"`, not both",
                    );
                } else if let Some(r) = str_lit(cx, &n) {
                    s.target = Some((kind, r));
                }
            }
            "inputs" => s.inputs = mapping(cx, n, "inputs"),
            "after" => s.after = Some(str_list(cx, &n)),
            "when" | "unless" => {
                let runs_if = n.key() == "when";
                if s.guard.is_some() {
                    cx.error_at(
                        n.span(),
                        "a step has one guard: `when = \"...\"` or `unless = \"...\"`, not both",
                    );
                } else if let Some(r) = str_lit(cx, &n) {
                    s.guard = Some((runs_if, r));
                }
            }
            "on_error" => s.on_error = Some(str_list(cx, &n)),
            "retries" => s.retries = int_lit(cx, &n),
            _ => s.outputs = mapping(cx, n, "outputs"),
        }
    }
    if s.id.is_none() {
        cx.error_at(span, "a step needs an id: `step(id = \"read\", ...)`");
    }
    if s.target.is_none() {
        cx.error_at(
            span,
            "a step needs a target: `skill = \"name\"` (or `\"name@1.0.0\"`), or `op = \"name\"`",
        );
    }
    s
}

/// `nodes` already rejected unknown keys; reaching this is our bug, reported as one.
pub(super) fn unreachable_key(cx: &Errors, node: &Node) {
    cx.error_at(
        node.span(),
        format!("internal error: unhandled key `{}`", node.key()),
    );
}

/// `ambient(kind = "reason", ...)`, on a skill or a capability; `why` ends
/// the message for an empty reason.
pub fn ambient(cx: &Errors, node: Node, why: &str) -> Vec<(Ambient, LitStr)> {
    let mut out = Vec::new();
    for n in nodes(
        cx,
        sub_list(cx, node),
        "ambient(...)",
        &words::<Ambient>(),
        &[],
    ) {
        let kind = Ambient::parse(&n.key());
        match (kind, str_lit(cx, &n)) {
            (Some(k), Some(reason)) if !reason.value().trim().is_empty() => out.push((k, reason)),
            (Some(_), Some(reason)) => cx.error_spanned(
                &reason,
                format!("an ambient allowance needs a written reason: say why {why}"),
            ),
            _ => {}
        }
    }
    out
}
