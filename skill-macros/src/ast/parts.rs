//! The sub-attributes of `#[skill(...)]`: `deprecation(...)`, `mcp(...)`,
//! `reusable_by(...)`, `side_effects(...)` and the conditions.

use syn::Expr;

use skill_core::manifest::{AgentRole, PermissionLevel};
use skill_core::words::Word;

use crate::args::{Entry, Node, NodeKind};
use crate::ast::read::{
    choice, flag, nodes, same_path, str_list, str_lit, sub_list, value, word, words,
};
use crate::ast::types::{
    Choice, DeprecationArgs, McpArgs, PostconditionArgs, PreconditionArgs, RuleArgs, SideEffectArgs,
};
use crate::errors::Errors;

pub(super) fn deprecation(cx: &Errors, node: Node) -> Option<DeprecationArgs> {
    let span = node.span();
    let mut d = DeprecationArgs {
        span,
        replaced_by: None,
        removal_version: None,
        notes: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "deprecation(...)",
        &["replaced_by", "removal_version", "notes"],
        &[],
    ) {
        match n.key().as_str() {
            "replaced_by" => d.replaced_by = str_lit(cx, &n),
            "removal_version" => d.removal_version = str_lit(cx, &n),
            _ => d.notes = str_lit(cx, &n),
        }
    }
    Some(d)
}

pub(super) fn mcp(cx: &Errors, node: Node) -> McpArgs {
    let mut m = McpArgs {
        exposed: true,
        tool_name: None,
        permissions: Vec::new(),
    };
    if let NodeKind::Bare = node.kind {
        return m;
    }
    for n in nodes(
        cx,
        sub_list(cx, node),
        "mcp(...)",
        &["exposed", "tool_name", "permissions"],
        &[],
    ) {
        match n.key().as_str() {
            "exposed" => m.exposed = flag(cx, &n),
            "tool_name" => m.tool_name = str_lit(cx, &n),
            _ => m.permissions = str_list(cx, &n),
        }
    }
    m
}

/// `reusable_by(executor = "execute", orchestrator = "admin")`
pub(super) fn reusable_by(cx: &Errors, node: Node) -> Vec<(Choice, Choice)> {
    nodes(
        cx,
        sub_list(cx, node),
        "reusable_by(...)",
        &words::<AgentRole>(),
        &[],
    )
    .into_iter()
    .filter_map(|n| {
        let key = n.key();
        let role = AgentRole::WORDS.iter().find(|(r, _)| *r == key)?;
        let level = word::<PermissionLevel>(cx, &n)?;
        Some((
            Choice {
                variant: role.1,
                span: n.span(),
            },
            level,
        ))
    })
    .collect()
}

/// `side_effects(DatabaseWrite(target = "...", reversible = true, description = "..."))`
pub(super) fn side_effects(cx: &Errors, node: Node) -> Vec<SideEffectArgs> {
    let span = node.span();
    let NodeKind::List(list, _) = node.kind else {
        cx.error_at(
            span,
            "expected `side_effects(Capability(target = \"...\", reversible = ...), ...)`",
        );
        return Vec::new();
    };
    let mut out: Vec<SideEffectArgs> = Vec::new();
    for e in list.0 {
        let Entry::Node(n) = e else {
            cx.error_at(e.span(), "side_effects(...) takes capability paths, like `DatabaseWrite(target = \"audit_log\", reversible = true)`");
            continue;
        };
        let capability = n.path.clone();
        if out.iter().any(|s| same_path(&s.capability, &capability)) {
            cx.error_spanned(
                &capability,
                format!("side effect `{}` is listed twice", n.key()),
            );
            continue;
        }
        let mut s = SideEffectArgs {
            capability,
            target: None,
            reversible: None,
            description: None,
        };
        let key = n.key();
        let span = n.span();
        match n.kind {
            NodeKind::List(list, _) => {
                for a in nodes(cx, list, "side effect", &["target", "reversible", "description"], &[]) {
                    match a.key().as_str() {
                        "target" => s.target = str_lit(cx, &a),
                        "reversible" => s.reversible = Some(flag(cx, &a)),
                        _ => s.description = str_lit(cx, &a),
                    }
                }
                if let Some(t) = &s.target
                    && t.value().trim().is_empty()
                {
                    cx.error_spanned(t, format!("side effect `{key}` needs a `target` that names the table, file or endpoint it touches, like `target = \"audit_log\"`; it cannot be empty"));
                }
                if s.target.is_none() {
                    cx.error_at(span, format!("side effect `{key}` needs `target = \"...\"`: the table, file or endpoint it touches"));
                }
                if s.reversible.is_none() {
                    cx.error_at(span, format!("side effect `{key}` needs `reversible = true` or `reversible = false`"));
                }
            }
            _ => cx.error_at(
                span,
                format!("side effect `{key}` needs its details: `{key}(target = \"...\", reversible = true)`"),
            ),
        }
        out.push(s);
    }
    out
}

pub(super) fn expr(cx: &Errors, node: &Node) -> Option<Expr> {
    value(cx, node, "|input| ...").cloned()
}

pub(super) fn precondition(cx: &Errors, node: Node) -> PreconditionArgs {
    let mut p = PreconditionArgs {
        span: node.span(),
        code: None,
        message: None,
        check: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "precondition(...)",
        &["code", "message", "check"],
        &[],
    ) {
        match n.key().as_str() {
            "code" => p.code = str_lit(cx, &n),
            "message" => p.message = str_lit(cx, &n),
            _ => p.check = expr(cx, &n),
        }
    }
    for (missing, what) in [
        (p.code.is_none(), "code = \"ERROR_CODE\""),
        (p.message.is_none(), "message = \"...\""),
        (p.check.is_none(), "check = |input| ..."),
    ] {
        if missing {
            cx.error_at(p.span, format!("precondition(...) needs `{what}`"));
        }
    }
    p
}

pub(super) fn postcondition(cx: &Errors, node: Node) -> PostconditionArgs {
    let mut p = PostconditionArgs {
        span: node.span(),
        check: None,
        rollback: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "postcondition(...)",
        &["check", "rollback"],
        &[],
    ) {
        match n.key().as_str() {
            "check" => p.check = expr(cx, &n),
            _ => p.rollback = str_lit(cx, &n),
        }
    }
    if p.check.is_none() {
        cx.error_at(
            p.span,
            "postcondition(...) needs `check = |input, output| ...`",
        );
    }
    p
}

pub(super) fn rule(cx: &Errors, node: Node) -> RuleArgs {
    let mut r = RuleArgs {
        span: node.span(),
        id: None,
        severity: None,
        message: None,
        check: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "validation_rule(...)",
        &["id", "severity", "message", "check"],
        &[],
    ) {
        match n.key().as_str() {
            "id" => r.id = str_lit(cx, &n),
            "severity" => {
                r.severity = choice(
                    cx,
                    &n,
                    &[("error", "Error"), ("warning", "Warning"), ("info", "Info")],
                )
            }
            "message" => r.message = str_lit(cx, &n),
            _ => r.check = expr(cx, &n),
        }
    }
    for (missing, what) in [
        (r.id.is_none(), "id = \"rule_id\""),
        (
            r.severity.is_none(),
            "severity = \"error\" | \"warning\" | \"info\"",
        ),
        (r.message.is_none(), "message = \"...\""),
        (r.check.is_none(), "check = |input, output| ..."),
    ] {
        if missing {
            cx.error_at(r.span, format!("validation_rule(...) needs `{what}`"));
        }
    }
    r
}
