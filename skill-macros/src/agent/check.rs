//! The rules of an agent contract across its values, one `check_*` per rule,
//! each reported at the token to fix. What needs another item (a listed
//! skill's `reusable_by`, an output type's fields) is left to the type
//! checker through the expansion.

use std::collections::BTreeMap;

use skill_core::agent::{Direction, thresholds_ordered};

use crate::agent::ast::{Args, Trigger};
use crate::ast::func::SkillFn;
use crate::errors::Errors;

use skill_core::agent::MAX_TIMEOUT_HOURS;

pub fn all(cx: &Errors, args: &Args, func: &SkillFn) {
    check_identity(cx, args, func);
    check_skills_once(cx, args);
    check_tools(cx, args);
    check_escalation(cx, args);
    check_kpis(cx, args);
    check_no_runner(cx, args, func);
    check_condition_arity(cx, args);
}

/// A pre-condition reads the input (`|input: &In| ...`); a post-condition
/// the output, or the input then the output.
fn check_condition_arity(cx: &Errors, a: &Args) {
    let arity = |e: &syn::Expr| match e {
        syn::Expr::Closure(c) => Some(c.inputs.len()),
        _ => None,
    };
    for (_, check) in &a.pre {
        if arity(check).is_some_and(|n| n != 1) {
            cx.error_spanned(
                check,
                "an agent's pre-condition reads its input: `|input: &In| ...`",
            );
        }
    }
    for (_, check) in &a.post {
        if arity(check).is_some_and(|n| n != 1 && n != 2) {
            cx.error_spanned(
                check,
                "an agent's post-condition reads its output, or its input then its output: `|output: &Out| ...` or `|input: &In, output: &Out| ...`",
            );
        }
    }
}

/// An agent's body runs its skills through its context (`ctx.run`), never
/// through a runtime, registry or runner of its own, which would run any
/// skill with no `skills(...)` checked and any caller it liked.
fn check_no_runner(cx: &Errors, a: &Args, func: &SkillFn) {
    let mut code = func.body.stream();
    for (_, check) in a.pre.iter().chain(&a.post) {
        code.extend(quote::quote!({ #check }));
    }
    for (path, span) in crate::ambient::runner_uses(code) {
        cx.error_at(
            span,
            format!(
                "an agent runs its skills through its context, not through `{path}`, which would run any skill with no `skills(...)` checked; list the skill in `skills(...)` and run it with `ctx.run::<skill>(input)`"
            ),
        );
    }
}

/// The seed's identity fields are all there, and the doc comment, which is
/// the contract's description: a registry entry without them says nothing
/// a reader can act on.
fn check_identity(cx: &Errors, a: &Args, func: &SkillFn) {
    let span = func.item.sig.ident.span();
    for (missing, what) in [
        (a.id.is_none(), "id = \"agent.domain.name\""),
        (a.name.is_none(), "name = \"Display name\""),
        (a.role.is_none(), "role = \"executor\""),
        (a.domain.is_none(), "domain = \"seo\""),
        (a.version.is_none(), "version = \"1.0.0\""),
        (a.owner.is_none(), "owner = \"team\""),
    ] {
        if missing && !cx.has_errors() {
            cx.error_at(
                span,
                format!("an agent contract needs `{what}` in #[agent(...)]"),
            );
        }
    }
    if func.doc.is_none() {
        cx.error_at(
            span,
            "document the agent with a `///` comment: it is the contract's description",
        );
    }
}

/// A skill is listed once: a second entry (under another path to the same
/// function) says nothing new and would grant it twice.
fn check_skills_once(cx: &Errors, a: &Args) {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (path, _) in &a.skills {
        let full = crate::args::path_text(path);
        let name = path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        match seen.get(&name) {
            Some(first) => cx.error_spanned(
                path,
                format!(
                    "skill `{name}` is listed twice in skills(...) (as `{first}` and `{full}`); keep one"
                ),
            ),
            None => {
                seen.insert(name, full);
            }
        }
    }
}

/// A tool is named: an empty id matches no MCP tool.
fn check_tools(cx: &Errors, a: &Args) {
    for t in &a.tools {
        if t.id.value().trim().is_empty() {
            cx.error_spanned(
                &t.id,
                "a tool's `id` names an MCP tool, like \"mcp__supabase__execute_sql\"; it cannot be empty",
            );
        }
    }
}

/// An escalation can happen: it has a trigger, and its timeout is at least
/// an hour (zero hours would hand every run over at once).
fn check_escalation(cx: &Errors, a: &Args) {
    let Some(e) = &a.escalation else { return };
    if e.triggers_written == 0 {
        cx.error_at(
            e.triggers_span,
            "an escalation with no trigger never happens; add one to `triggers(...)`: `confidence_below(field = \"/confidence\", value = 0.7)`, `error_count_above = 3`, or `human_required(field = \"/human_required\")`",
        );
    }
    match &e.timeout_hours {
        (0, Some(lit)) => cx.error_spanned(
            lit,
            "`timeout_hours` is how long the target has before the escalation goes on by itself: at least 1",
        ),
        (h, Some(lit)) if *h > MAX_TIMEOUT_HOURS => cx.error_spanned(
            lit,
            format!(
                "`timeout_hours` is at most {MAX_TIMEOUT_HOURS} (30 days): an escalation nobody answers for longer is a stuck run"
            ),
        ),
        _ => {}
    }
    for t in &e.triggers {
        if let Trigger::ConfidenceBelow { value, field } = t
            && !(0.0..=1.0).contains(value)
        {
            cx.error_spanned(
                field,
                format!(
                    "`confidence_below` compares a confidence from 0 to 1; {value} is outside it"
                ),
            );
        }
    }
}

/// KPIs: each metric once; thresholds ordered for the direction; a ratio
/// (unit `percentage` or `ratio`, written from 0 to 1 as the seed writes
/// them) within 0 to 1; a metric that is not built in says which output
/// field it is computed from.
fn check_kpis(cx: &Errors, a: &Args) {
    let mut seen: Vec<String> = Vec::new();
    for k in &a.kpis {
        let metric = k.metric.value();
        if seen.contains(&metric) {
            cx.error_spanned(
                &k.metric,
                format!("KPI \"{metric}\" is declared twice; keep one"),
            );
        }
        seen.push(metric.clone());
        let [t, w, c] = k.numbers;
        let dir = Direction::ALL
            .iter()
            .copied()
            .find(|d| d.as_str().eq_ignore_ascii_case(k.direction.variant))
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
                    "KPI \"{metric}\" is better when {word} (direction = \"{}\"), so its thresholds must be ordered target {cmp} warning {cmp} critical; here target = {}, warning = {}, critical = {}",
                    dir.as_str(),
                    t.0,
                    w.0,
                    c.0
                ),
            );
        }
        let unit = k.unit.value();
        if matches!(unit.as_str(), "percentage" | "ratio") {
            for (v, at) in [t, w, c] {
                if !(0.0..=1.0).contains(&v) {
                    cx.error_at(
                        at,
                        format!(
                            "KPI \"{metric}\" is a {unit}, written from 0 to 1 (0.95 for 95%); {v} is outside it"
                        ),
                    );
                    break;
                }
            }
        }
        if k.field.is_none()
            && !matches!(metric.as_str(), "task_success_rate" | "avg_processing_time")
        {
            cx.error_spanned(
                &k.metric,
                format!("KPI \"{metric}\" is computed from an output field: add `field = \"/pointer\"` (the built-in KPIs are \"task_success_rate\" and \"avg_processing_time\")"),
            );
        }
    }
}
