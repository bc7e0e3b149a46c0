//! `#[agent(...)]`'s attribute read into [`Args`]: every value with its
//! span, each word checked against its vocabulary as it is read. The rules
//! across values are in `check.rs`.

use proc_macro2::Span;
use skill_core::agent::{Direction, Storage, ToolPermission};
use skill_core::manifest::{AgentRole, Domain};
use skill_core::names::{is_agent_id, is_semver};
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitInt, LitStr, Path};

use crate::args::{Entry, List, Node, NodeKind};
use crate::ast::read::{flag, int_lit, lit, nodes, str_list, str_lit, sub_list, value, word};
use crate::ast::types::Choice;
use crate::errors::Errors;

/// The keys `#[agent(...)]` takes.
const KEYS: &[&str] = &[
    "id",
    "name",
    "role",
    "domain",
    "version",
    "owner",
    "tools",
    "skills",
    "memory",
    "pre_condition",
    "post_condition",
    "invariants",
    "escalation",
    "kpi",
];

/// The agent contract as written.
#[derive(Default)]
pub struct Args {
    pub id: Option<LitStr>,
    pub name: Option<LitStr>,
    /// The role's choice, and its word in lowercase.
    pub role: Option<(Choice, String)>,
    pub domain: Option<LitStr>,
    pub version: Option<LitStr>,
    pub owner: Option<LitStr>,
    pub tools: Vec<Tool>,
    /// Each listed skill by path, and whether it is required.
    pub skills: Vec<(Path, bool)>,
    pub short_term: Option<u32>,
    pub long_term: Option<Choice>,
    pub shared: Option<Vec<LitStr>>,
    pub pre: Vec<(LitStr, Expr)>,
    pub post: Vec<(LitStr, Expr)>,
    pub invariants: Vec<LitStr>,
    pub escalation: Option<Escalation>,
    pub kpis: Vec<Kpi>,
}

pub struct Tool {
    pub id: LitStr,
    pub permission: Choice,
    pub rate_limit: u32,
}

pub struct Escalation {
    /// Where `triggers(...)` was written, and how many it lists (read or
    /// not: one refused is its own error).
    pub triggers_span: Span,
    pub triggers_written: usize,
    pub triggers: Vec<Trigger>,
    pub target: LitStr,
    pub human_required: bool,
    /// The hours, and where they were written (24 when left out).
    pub timeout_hours: (u32, Option<LitInt>),
}

pub enum Trigger {
    ErrorCountAbove(u32),
    ConfidenceBelow { field: LitStr, value: f64 },
    HumanRequired { field: LitStr },
}

pub struct Kpi {
    pub metric: LitStr,
    /// Target, warning and critical, each with where it was written.
    pub numbers: [(f64, Span); 3],
    pub unit: LitStr,
    pub direction: Choice,
    /// The output field a KPI is computed from, when it is not built in.
    pub field: Option<LitStr>,
}

pub fn read(cx: &Errors, list: List) -> Args {
    let mut a = Args::default();
    for node in nodes(
        cx,
        list,
        "#[agent]",
        KEYS,
        &["pre_condition", "post_condition", "kpi"],
    ) {
        match node.key().as_str() {
            "id" => {
                if let Some(s) = str_lit(cx, &node) {
                    if !is_agent_id(&s.value()) {
                        cx.error_spanned(&s, format!("agent id \"{}\" must be snake_case words joined by dots, at least two, like \"agent.seo.vlevel\"", s.value()));
                    }
                    a.id = Some(s);
                }
            }
            "name" => a.name = str_lit(cx, &node),
            "owner" => a.owner = str_lit(cx, &node),
            "version" => {
                if let Some(s) = str_lit(cx, &node) {
                    if !is_semver(&s.value()) {
                        cx.error_spanned(&s, format!("\"{}\" is not a semver version; write MAJOR.MINOR.PATCH, like \"1.0.0\"", s.value()));
                    }
                    a.version = Some(s);
                }
            }
            "domain" => {
                if let Some(s) = str_lit(cx, &node) {
                    if Domain::parse(&s.value()).is_none() {
                        let words: Vec<&str> = Domain::ALL.iter().map(|w| w.as_str()).collect();
                        cx.error_spanned(
                            &s,
                            format!(
                                "`domain` cannot be \"{}\"; the agent model's domains are {}",
                                s.value(),
                                words.join(", ")
                            ),
                        );
                    }
                    a.domain = Some(s);
                }
            }
            "role" => {
                a.role = word::<AgentRole>(cx, &node).map(|c| {
                    let w = c.variant.to_ascii_lowercase();
                    (c, w)
                });
            }
            "tools" => {
                for t in nodes(cx, sub_list(cx, node), "tools(...)", &["tool"], &["tool"]) {
                    a.tools.extend(tool(cx, t));
                }
            }
            "skills" => a.skills = skills(cx, node),
            "memory" => memory(cx, node, &mut a),
            "pre_condition" | "post_condition" => {
                let pre = node.key() == "pre_condition";
                if let Some(c) = condition(cx, node) {
                    if pre { a.pre.push(c) } else { a.post.push(c) }
                }
            }
            "invariants" => a.invariants = str_list(cx, &node),
            "escalation" => a.escalation = escalation(cx, node),
            "kpi" => a.kpis.extend(kpi(cx, node)),
            _ => {}
        }
    }
    a
}

fn tool(cx: &Errors, node: Node) -> Option<Tool> {
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
    Some(Tool {
        id: id?,
        permission: perm?,
        rate_limit: rate?,
    })
}

fn skills(cx: &Errors, node: Node) -> Vec<(Path, bool)> {
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
        out.push((path, required));
    }
    out
}

fn memory(cx: &Errors, node: Node, a: &mut Args) {
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

fn condition(cx: &Errors, node: Node) -> Option<(LitStr, Expr)> {
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

fn number(cx: &Errors, node: &Node) -> Option<f64> {
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

fn escalation(cx: &Errors, node: Node) -> Option<Escalation> {
    let span = node.span();
    let keys = &[
        "triggers",
        "target_agent",
        "human_required",
        "timeout_hours",
    ];
    let (mut triggers, mut target, mut human, mut hours) = (None, None, false, (24u32, None));
    for f in nodes(cx, sub_list(cx, node), "escalation(...)", keys, &[]) {
        match f.key().as_str() {
            "triggers" => {
                let at = f.span();
                triggers = Some((at, trigger_list(cx, f)));
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
                if let Some(n) = int_lit(cx, &f) {
                    hours = (n.base10_parse().unwrap_or(0), Some(n));
                }
            }
        }
    }
    let Some((triggers_span, (triggers, triggers_written))) = triggers else {
        cx.error_at(span, "an escalation needs `triggers(...)`: `confidence_below(field = \"/confidence\", value = 0.7)`, `error_count_above = 3`, `human_required(field = \"/human_required\")`");
        return None;
    };
    let Some(target) = target else {
        cx.error_at(
            span,
            "an escalation needs `target_agent = \"agent.domain.name\"`",
        );
        return None;
    };
    Some(Escalation {
        triggers_span,
        triggers_written,
        triggers,
        target,
        human_required: human,
        timeout_hours: hours,
    })
}

fn trigger_list(cx: &Errors, node: Node) -> (Vec<Trigger>, usize) {
    let mut out = Vec::new();
    let keys = &["confidence_below", "error_count_above", "human_required"];
    let list = sub_list(cx, node);
    let written = list.0.len();
    for t in nodes(cx, list, "triggers(...)", keys, &[]) {
        match t.key().as_str() {
            "error_count_above" => {
                if let Some(n) = int_lit(cx, &t).and_then(|n| n.base10_parse::<u32>().ok()) {
                    out.push(Trigger::ErrorCountAbove(n));
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
                    out.push(Trigger::ConfidenceBelow { field, value });
                }
            }
            _ => {
                for f in nodes(cx, sub_list(cx, t), "human_required(...)", &["field"], &[]) {
                    if let Some(field) = pointer(cx, &f) {
                        out.push(Trigger::HumanRequired { field });
                    }
                }
            }
        }
    }
    (out, written)
}

/// A JSON pointer into the output, like `"/confidence"`.
fn pointer(cx: &Errors, node: &Node) -> Option<LitStr> {
    let s = str_lit(cx, node)?;
    if !s.value().starts_with('/') || s.value().len() < 2 {
        cx.error_spanned(
            &s,
            "`field` is a JSON pointer to a field of the agent's output, like \"/confidence\"",
        );
        return None;
    }
    Some(s)
}

fn kpi(cx: &Errors, node: Node) -> Option<Kpi> {
    let span = node.span();
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
    Some(Kpi {
        metric,
        numbers: [t, w, c],
        unit,
        direction,
        field,
    })
}
