//! The nested parts of `#[agent(...)]`: tools, skills, memory, conditions,
//! escalation and its triggers, KPIs; each read and checked at its tokens.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use skill_core::agent::{Direction, Storage, ToolPermission, thresholds_ordered};
use skill_core::names::is_agent_id;
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitStr, Path};

use crate::args::{Entry, Node, NodeKind, path_text};
use crate::ast::read::{flag, int_lit, lit, nodes, str_list, str_lit, sub_list, value, word};
use crate::ast::types::Choice;
use crate::ctxt::Ctxt;

pub struct Escalation {
    pub triggers: Vec<TokenStream>,
    pub target: LitStr,
    pub human_required: bool,
    pub timeout_hours: u32,
}

pub struct Kpi {
    pub metric: LitStr,
    pub numbers: [f64; 3],
    pub unit: LitStr,
    pub direction: Choice,
    pub source: TokenStream,
}

pub fn tool(cx: &Ctxt, node: Node) -> Option<(LitStr, Choice, u32)> {
    let span = node.span();
    let fields = nodes(
        cx,
        sub_list(cx, node),
        "tool(...)",
        &["id", "permission", "rate_limit"],
        &[],
    );
    let (mut id, mut perm, mut rate) = (None, None, None);
    let keys: Vec<String> = fields.iter().map(Node::key).collect();
    for f in fields {
        match f.key().as_str() {
            "id" => id = str_lit(cx, &f),
            "permission" => perm = word::<ToolPermission>(cx, &f),
            _ => {
                if let Some(n) = int_lit(cx, &f) {
                    let v = n.base10_parse::<u32>().unwrap_or(0);
                    if v < 1 {
                        cx.error_spanned(
                            &n,
                            "`rate_limit` is calls per minute and must be at least 1",
                        );
                    }
                    rate = Some(v);
                }
            }
        }
    }
    if keys.len() < 3 {
        cx.error_at(span, "a tool is `tool(id = \"mcp__server__tool\", permission = \"read\" | \"write\" | \"execute\", rate_limit = N)`");
    }
    Some((id?, perm?, rate?))
}

pub fn skills(cx: &Ctxt, node: Node) -> Vec<(Path, bool)> {
    let NodeKind::List(list, _) = node.kind else {
        cx.error_at(
            node.path.span(),
            "expected `skills(skill_a, skill_b(required = false), ...)`",
        );
        return Vec::new();
    };
    let mut out: Vec<(Path, bool)> = Vec::new();
    for e in list.0 {
        let Entry::Node(n) = e else {
            cx.error_at(e.span(), "skills(...) takes skills by their function's path, like `skills(seo_role_audit)`; the path names the skill, so a typo does not compile");
            continue;
        };
        let Node { path, kind } = *n;
        let required = match kind {
            NodeKind::Bare => true,
            NodeKind::List(options, _) => {
                let mut required = true;
                for f in nodes(cx, options, "a skill's options", &["required"], &[]) {
                    required = flag(cx, &f);
                }
                required
            }
            NodeKind::Value(_) => {
                cx.error_at(path.span(), "write `skill` or `skill(required = false)`");
                true
            }
        };
        if out.iter().any(|(p, _)| path_text(p) == path_text(&path)) {
            cx.error_spanned(
                &path,
                format!("`{}` is listed twice in skills(...)", path_text(&path)),
            );
            continue;
        }
        out.push((path, required));
    }
    out
}

pub fn memory(cx: &Ctxt, node: Node, a: &mut super::Args) {
    for m in nodes(
        cx,
        sub_list(cx, node),
        "memory(...)",
        &["short_term", "long_term", "shared"],
        &[],
    ) {
        match m.key().as_str() {
            "short_term" => {
                for f in nodes(cx, sub_list(cx, m), "short_term(...)", &["max_tokens"], &[]) {
                    a.short_term = int_lit(cx, &f).and_then(|n| n.base10_parse::<u32>().ok());
                }
            }
            "long_term" => {
                for f in nodes(cx, sub_list(cx, m), "long_term(...)", &["storage"], &[]) {
                    a.long_term = word::<Storage>(cx, &f);
                }
            }
            _ => {
                for f in nodes(cx, sub_list(cx, m), "shared(...)", &["namespaces"], &[]) {
                    a.shared = Some(str_list(cx, &f));
                }
            }
        }
    }
}

pub fn condition(cx: &Ctxt, node: Node) -> Option<(LitStr, Expr)> {
    let key = node.key();
    let span = node.span();
    let (mut code, mut check) = (None, None);
    for f in nodes(
        cx,
        sub_list(cx, node),
        &format!("{key}(...)"),
        &["code", "check"],
        &[],
    ) {
        if f.key() == "code" {
            code = str_lit(cx, &f);
        } else {
            check = value(cx, &f, "|input: &In| ...").cloned();
        }
    }
    if code.is_none() || check.is_none() {
        cx.error_at(span, format!("write `{key}(code = \"ERROR_CODE\", check = |input: &In| ...)`; a post-condition's closure takes `&Out`, or `&In, &Out`"));
    }
    Some((code?, check?))
}

fn number(cx: &Ctxt, node: &Node) -> Option<f64> {
    let e = value(cx, node, "a number")?;
    let (neg, inner) = match e {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    };
    let v = match lit(inner) {
        Some(Lit::Float(f)) => f.base10_parse::<f64>().ok(),
        Some(Lit::Int(i)) => i.base10_parse::<f64>().ok(),
        _ => None,
    };
    match v {
        Some(v) => Some(if neg { -v } else { v }),
        None => {
            cx.error_spanned(
                e,
                format!(
                    "`{}` takes a number, like `{} = 0.95`",
                    node.key(),
                    node.key()
                ),
            );
            None
        }
    }
}

pub fn escalation(cx: &Ctxt, node: Node) -> Option<Escalation> {
    let span = node.span();
    let keys = &[
        "triggers",
        "target_agent",
        "human_required",
        "timeout_hours",
    ];
    let (mut triggers, mut target, mut human, mut hours) = (Vec::new(), None, false, 24u32);
    let mut listed = false;
    for f in nodes(cx, sub_list(cx, node), "escalation(...)", keys, &[]) {
        match f.key().as_str() {
            "triggers" => {
                listed = true;
                triggers = trigger_list(cx, f);
            }
            "target_agent" => {
                target = str_lit(cx, &f);
                if let Some(t) = &target
                    && !is_agent_id(&t.value())
                {
                    cx.error_spanned(t, "`target_agent` is an agent id, dotted snake_case like \"agent.seo.architect\"");
                }
            }
            "human_required" => human = flag(cx, &f),
            _ => {
                hours = int_lit(cx, &f)
                    .and_then(|n| n.base10_parse().ok())
                    .unwrap_or(24)
            }
        }
    }
    if !listed {
        cx.error_at(span, "an escalation needs `triggers(...)`: `confidence_below(field = \"/confidence\", value = 0.7)`, `error_count_above = 3`, `human_required(field = \"/human_required\")`");
    }
    let Some(target) = target else {
        cx.error_at(
            span,
            "an escalation needs `target_agent = \"agent.domain.name\"`",
        );
        return None;
    };
    Some(Escalation {
        triggers,
        target,
        human_required: human,
        timeout_hours: hours,
    })
}

fn trigger_list(cx: &Ctxt, node: Node) -> Vec<TokenStream> {
    let p = quote!(::skill_runtime::__private);
    let mut out = Vec::new();
    let keys = &["confidence_below", "error_count_above", "human_required"];
    for t in nodes(cx, sub_list(cx, node), "triggers(...)", keys, &[]) {
        match t.key().as_str() {
            "error_count_above" => {
                if let Some(n) = int_lit(cx, &t).and_then(|n| n.base10_parse::<u32>().ok()) {
                    out.push(quote!(#p::Trigger::ErrorCountAbove { count: #n }));
                }
            }
            "confidence_below" => {
                let (mut field, mut below) = (None, None);
                for f in nodes(
                    cx,
                    sub_list(cx, t),
                    "confidence_below(...)",
                    &["field", "value"],
                    &[],
                ) {
                    if f.key() == "field" {
                        field = pointer(cx, &f);
                    } else {
                        below = number(cx, &f);
                    }
                }
                if let (Some(field), Some(value)) = (field, below) {
                    out.push(quote!(#p::Trigger::ConfidenceBelow { field: #field, value: #value }));
                }
            }
            _ => {
                for f in nodes(cx, sub_list(cx, t), "human_required(...)", &["field"], &[]) {
                    if let Some(field) = pointer(cx, &f) {
                        out.push(quote!(#p::Trigger::HumanRequired { field: #field }));
                    }
                }
            }
        }
    }
    out
}

/// A JSON pointer into the output, like `"/confidence"`.
fn pointer(cx: &Ctxt, node: &Node) -> Option<LitStr> {
    let s = str_lit(cx, node)?;
    if !s.value().starts_with('/') {
        cx.error_spanned(
            &s,
            "`field` is a JSON pointer into the output, like \"/confidence\"",
        );
        return None;
    }
    Some(s)
}

pub fn kpi(cx: &Ctxt, node: Node) -> Option<Kpi> {
    let span = node.span();
    let p = quote!(::skill_runtime::__private);
    let keys = &[
        "metric_id",
        "target",
        "warning",
        "critical",
        "unit",
        "direction",
        "field",
    ];
    let (mut metric, mut unit, mut direction, mut field) = (None, None, None, None);
    let mut numbers: [Option<(f64, Span)>; 3] = [None; 3];
    for f in nodes(cx, sub_list(cx, node), "kpi(...)", keys, &[]) {
        match f.key().as_str() {
            "metric_id" => metric = str_lit(cx, &f),
            "unit" => unit = str_lit(cx, &f),
            "direction" => direction = word::<Direction>(cx, &f),
            "field" => field = pointer(cx, &f),
            k => {
                let i = ["target", "warning", "critical"]
                    .iter()
                    .position(|x| *x == k)
                    .unwrap_or(0);
                let at = value(cx, &f, "a number").map_or(f.span(), |e| e.span());
                numbers[i] = number(cx, &f).map(|v| (v, at));
            }
        }
    }
    let (Some(metric), Some(unit), Some(direction), [Some(t), Some(w), Some(c)]) =
        (metric, unit, direction, numbers)
    else {
        cx.error_at(span, "a KPI is `kpi(metric_id = \"...\", target = N, warning = N, critical = N, unit = \"...\", direction = \"higher\" | \"lower\")`, plus `field = \"/pointer\"` for a KPI computed from an output field");
        return None;
    };
    let dir = Direction::ALL
        .iter()
        .copied()
        .find(|d| d.as_str().eq_ignore_ascii_case(direction.variant))
        .unwrap_or(Direction::Higher);
    if !thresholds_ordered(dir, t.0, w.0, c.0) {
        let (cmp, word) = if dir == Direction::Higher {
            (">", "higher")
        } else {
            ("<", "lower")
        };
        cx.error_at(
            w.1,
            format!(
                "KPI \"{}\" is better when {word} (direction = \"{}\"), so its thresholds must be ordered target {cmp} warning {cmp} critical; here target = {}, warning = {}, critical = {}",
                metric.value(), dir.as_str(), t.0, w.0, c.0
            ),
        );
    }
    let source = match (metric.value().as_str(), field) {
        (_, Some(f)) => quote!(#p::KpiSource::OutputMean(#f)),
        ("task_success_rate", None) => quote!(#p::KpiSource::SuccessRate),
        ("avg_processing_time", None) => quote!(#p::KpiSource::ProcessingTime),
        (other, None) => {
            cx.error_spanned(&metric, format!("KPI \"{other}\" is computed from an output field: add `field = \"/pointer\"` (the built-in KPIs are \"task_success_rate\" and \"avg_processing_time\")"));
            return None;
        }
    };
    Some(Kpi {
        metric,
        numbers: [t.0, w.0, c.0],
        unit,
        direction,
        source,
    })
}
