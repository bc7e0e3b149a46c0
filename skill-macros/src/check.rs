//! Rules over a whole `#[skill]` that no single argument can check alone. One
//! `check_*` function per rule; each reports every violation it finds.

use skill_core::manifest::{Domain, Execution, is_key_field};
use skill_core::names::{
    DescriptionProblem, MAX_DESCRIPTION, is_mcp_tool_name, is_semver, is_snake_case,
};

use crate::ast::func::SkillFn;
use crate::ast::read::same_path;
use crate::ast::types::SkillArgs;
use crate::ctxt::Ctxt;
use proc_macro2::Span;
use syn::LitStr;

pub fn all(cx: &Ctxt, args: &SkillArgs, func: &SkillFn) {
    check_name(cx, args, func);
    check_versions(cx, args);
    check_description(cx, args, func);
    check_deprecation(cx, args);
    check_side_effects_declared(cx, args);
    check_mcp(cx, args);
    check_limits(cx, args);
    check_words(cx, args);
    check_idempotency(cx, args);
    check_condition_arity(cx, args);
    check_no_runner(cx, args, func);
}

/// A skill's body (and its conditions) runs other skills through its
/// context, never through a runtime, registry or runner of its own: one would
/// run any skill with no `calls(...)` checked. The runtime also refuses to
/// be built while a handler runs; this says so where it is written.
fn check_no_runner(cx: &Ctxt, args: &SkillArgs, func: &SkillFn) {
    let mut code = func.body.stream();
    let checks = (args.preconditions.iter().map(|c| &c.check))
        .chain(args.postconditions.iter().map(|c| &c.check))
        .chain(args.validation_rules.iter().map(|c| &c.check));
    for check in checks.flatten() {
        code.extend(quote::quote!({ #check }));
    }
    for (path, span) in crate::ambient::runner_uses(code) {
        cx.error_at(
            span,
            format!(
                "a skill runs other skills through its context, not through `{path}`, which would run any skill with no `calls(...)` checked; list the skill in `calls(...)` and call it as `other(&ctx, input)`"
            ),
        );
    }
}

/// A key strategy says how it keys: `hash` reads intent, scope and payload
/// whole; `composite` reads the fields it lists, each a part of the job
/// envelope, so that two jobs it calls one are jobs the author meant as one.
fn check_idempotency(cx: &Ctxt, args: &SkillArgs) {
    let Some(i) = &args.idempotency else {
        return;
    };
    match i.strategy.map(|c| c.variant) {
        None => cx.error_at(
            i.span,
            "idempotency(...) needs `key = \"hash\"` (intent, scope and payload) or `key = \"composite\"` with `fields(...)`",
        ),
        Some("Hash") if !i.fields.is_empty() => cx.error_spanned(
            &i.fields[0],
            "`key = \"hash\"` keys intent, scope and payload whole; remove `fields(...)`, or use `key = \"composite\"`",
        ),
        Some("Composite") if i.fields.is_empty() => cx.error_at(
            i.span,
            "`key = \"composite\"` needs the fields it keys: `fields(\"intent\", \"scope.entityType\", \"payload.namespace\")`",
        ),
        _ => {}
    }
    for f in &i.fields {
        if !is_key_field(&f.value()) {
            cx.error_spanned(
                f,
                format!(
                    "\"{}\" is not a part of a job a key can read; write `intent`, or `scope.` or `payload.` followed by a field, like \"payload.namespace\"",
                    f.value()
                ),
            );
        }
    }
}

/// Skill names are snake_case (Brain OS registry v2), because every consumer
/// uses them as identifiers.
fn check_name(cx: &Ctxt, args: &SkillArgs, func: &SkillFn) {
    match &args.name {
        Some(name) if !is_snake_case(&name.value()) => cx.error_spanned(
            name,
            format!(
                "skill name \"{}\" is not snake_case; use lowercase words joined by `_`, like \"{}\"",
                name.value(),
                to_snake_case(&name.value())
            ),
        ),
        None => {
            let ident = func.item.sig.ident.to_string();
            let ident = ident.trim_start_matches("r#");
            if !is_snake_case(ident) {
                cx.error_spanned(
                    &func.item.sig.ident,
                    format!("skill name `{ident}` (from the function name) is not snake_case; rename the function or add `name = \"{}\"`", to_snake_case(ident)),
                );
            }
        }
        _ => {}
    }
}

/// Versions are semver so registries can compare them and `diff` can demand bumps.
fn check_versions(cx: &Ctxt, args: &SkillArgs) {
    let versions = [
        args.version.as_ref(),
        args.deprecation
            .as_ref()
            .and_then(|d| d.removal_version.as_ref()),
    ];
    for v in versions.into_iter().flatten() {
        if !is_semver(&v.value()) {
            cx.error_spanned(
                v,
                format!(
                    "\"{}\" is not a semver version; write MAJOR.MINOR.PATCH, like \"1.0.0\"",
                    v.value()
                ),
            );
        }
    }
}

/// Every skill has a short description (explicit, or the doc comment's first
/// paragraph): LLM routers choose tools by it, and the AI-COS model caps it.
fn check_description(cx: &Ctxt, args: &SkillArgs, func: &SkillFn) {
    let (text, span) = match (&args.description, &func.doc) {
        (Some(d), _) => (d.value(), d.span()),
        (None, Some((doc, span))) => (doc.clone(), *span),
        (None, None) => {
            cx.error_spanned(
                &func.item.sig.ident,
                "skill has no description; add a doc comment (`/// What it does.`) or `description = \"...\"`",
            );
            return;
        }
    };
    match skill_core::names::check_description(&text) {
        Ok(()) => {}
        Err(DescriptionProblem::Empty) => {
            cx.error_at(span, "skill description is empty; say what the skill does")
        }
        Err(DescriptionProblem::TooLong(n)) => cx.error_at(
            span,
            format!("skill description is {n} characters, over the limit of {MAX_DESCRIPTION}; shorten the first paragraph of the doc comment or set `description = \"...\"`"),
        ),
    }
}

/// A deprecated skill says what replaces it and how to migrate; a live one has no
/// deprecation metadata.
fn check_deprecation(cx: &Ctxt, args: &SkillArgs) {
    let deprecated = args.status.is_some_and(|s| s.variant == "Deprecated");
    match (&args.deprecation, args.status) {
        (None, Some(s)) if deprecated => cx.error_at(
            s.span,
            "`status = \"deprecated\"` needs deprecation metadata: add `deprecation(notes = \"how to migrate\", replaced_by = \"...\", removal_version = \"...\")`",
        ),
        (Some(d), _) if !deprecated => cx.error_at(
            d.span,
            "deprecation(...) is only for deprecated skills; add `status = \"deprecated\"` or remove it",
        ),
        (Some(d), _) if d.notes.is_none() => cx.error_at(
            d.span,
            "deprecation(...) needs `notes = \"...\"`: deprecations must include migration notes",
        ),
        _ => {}
    }
}

/// A side effect is a use of a declared capability; an undeclared one would let
/// the manifest promise less than the code does.
fn check_side_effects_declared(cx: &Ctxt, args: &SkillArgs) {
    for s in &args.side_effects {
        if !args
            .capabilities
            .iter()
            .any(|c| same_path(c, &s.capability))
        {
            let name = crate::args::path_text(&s.capability);
            cx.error_spanned(
                &s.capability,
                format!("side effect `{name}` is not a declared capability; add `{name}` to `capabilities(...)`"),
            );
        }
    }
}

/// MCP tool names follow the spec's naming rule.
fn check_mcp(cx: &Ctxt, args: &SkillArgs) {
    let Some(mcp) = &args.mcp else { return };
    if let Some(t) = &mcp.tool_name
        && !is_mcp_tool_name(&t.value())
    {
        cx.error_spanned(
            t,
            "MCP tool names are 1 to 128 characters of A-Z a-z 0-9 `_` `-` `.`",
        );
    }
    for (i, p) in mcp.permissions.iter().enumerate() {
        if p.value().is_empty() || p.value().chars().any(char::is_whitespace) {
            cx.error_spanned(
                p,
                "MCP permissions are non-empty words without spaces, like \"database:read\"",
            );
        }
        if mcp.permissions[..i].iter().any(|q| q.value() == p.value()) {
            cx.error_spanned(
                p,
                format!(
                    "MCP permission \"{}\" is listed twice; remove one",
                    p.value()
                ),
            );
        }
    }
}

/// Zero limits would make a skill that can never run.
fn check_limits(cx: &Ctxt, args: &SkillArgs) {
    for (lit, what) in [
        (&args.rate_limit, "max_per_minute"),
        (&args.timeout_ms, "timeout_ms"),
    ] {
        if let Some(l) = lit
            && l.base10_parse::<u64>().ok() == Some(0)
        {
            cx.error_spanned(
                l,
                format!("`{what}` of 0 would never let the skill run; use at least 1"),
            );
        }
    }
    for (lit, max, what) in [
        (
            &args.rate_limit,
            u64::from(u32::MAX),
            "`max_per_minute` is at most 4294967295".to_owned(),
        ),
        (
            &args.retries,
            u64::from(Execution::MAX_RETRIES),
            format!(
                "`retries` is at most {}: past a few, retrying hides a failure instead of riding out a blip",
                Execution::MAX_RETRIES
            ),
        ),
        (
            &args.timeout_ms,
            Execution::MAX_TIMEOUT_MS,
            format!(
                "`timeout_ms` is at most {} (30 days); a longer job is a durable run, not one attempt",
                Execution::MAX_TIMEOUT_MS
            ),
        ),
    ] {
        if let Some(l) = lit
            && l.base10_parse::<u64>().is_ok_and(|v| v > max)
        {
            cx.error_spanned(l, what);
        }
    }
}

/// Domains, owners, tags and redacted fields are identifiers consumers match on.
fn check_words(cx: &Ctxt, args: &SkillArgs) {
    if let Some(d) = &args.domain
        && Domain::parse(&d.value()).is_none()
    {
        let words: Vec<&str> = Domain::ALL.iter().map(|w| w.as_str()).collect();
        cx.error_spanned(
            d,
            format!(
                "`domain` cannot be \"{}\"{}",
                d.value(),
                crate::suggest::hint(&d.value(), &words)
            ),
        );
    }
    for l in args.owners.iter().chain(&args.policy_tags) {
        if l.value().trim().is_empty() {
            cx.error_spanned(l, "empty string; remove it");
        }
    }
    for i in &args.intents {
        if !is_snake_case(&i.value()) {
            cx.error_spanned(
                i,
                format!(
                    "intent \"{}\" is not snake_case; job intents are words like \"seo_audit\" or \"rag_reindex\"",
                    i.value()
                ),
            );
        }
    }
    for l in args.redact_inputs.iter().chain(&args.redact_outputs) {
        if l.value().is_empty() || l.value().contains('/') {
            cx.error_spanned(
                l,
                "redaction names a top-level field of the input or output, like \"query\"",
            );
        }
    }
}

/// The snake_case form of `s`, for the fix an error suggests (`HTTPServer`
/// becomes `http_server`).
pub fn to_snake_case(s: &str) -> String {
    heck::ToSnakeCase::to_snake_case(s)
}

/// Conditions are closures (or function paths) called with fixed arguments; a
/// closure with another number of parameters cannot be called.
pub fn check_condition_arity(cx: &Ctxt, args: &SkillArgs) {
    let pre = args
        .preconditions
        .iter()
        .filter_map(|p| p.check.as_ref())
        .map(|e| (e, "precondition", "`|input| ...` or `|input, caller| ...`"));
    let post = args
        .postconditions
        .iter()
        .filter_map(|p| p.check.as_ref())
        .map(|e| {
            (
                e,
                "postcondition",
                "`|output| ...` or `|input, output| ...`",
            )
        });
    let rules = args
        .validation_rules
        .iter()
        .filter_map(|r| r.check.as_ref())
        .map(|e| {
            (
                e,
                "validation_rule",
                "`|output| ...` or `|input, output| ...`",
            )
        });
    for (e, what, forms) in pre.chain(post).chain(rules) {
        match e {
            syn::Expr::Closure(c) if !(1..=2).contains(&c.inputs.len()) => cx.error_spanned(
                &c.inputs,
                format!("a {what} check takes 1 or 2 parameters: {forms}"),
            ),
            syn::Expr::Closure(c) if c.asyncness.is_some() => {
                cx.error_spanned(c.asyncness, format!("a {what} check is a plain closure, not `async`"))
            }
            syn::Expr::Closure(_) | syn::Expr::Path(_) => {}
            other => cx.error_spanned(
                other,
                format!("a {what} check is a closure or a function path: {forms}; the closure is type checked against the skill's types"),
            ),
        }
    }
}

/// How many arguments a condition is called with: a closure's own count, and the
/// full count for a function path.
pub fn arity(e: &syn::Expr) -> usize {
    match e {
        syn::Expr::Closure(c) => c.inputs.len(),
        _ => 2,
    }
}

/// Each step's ancestors: the steps it waits for (`after(...)`, by default
/// the step written before it) and theirs. A step may wait only for steps
/// written above it, so no cycle can be written.
fn step_ancestors(cx: &Ctxt, args: &SkillArgs, ids: &[String]) -> Vec<Vec<String>> {
    use skill_core::steps::{Wait, ancestors, waits};
    let names: Vec<&str> = ids.iter().map(String::as_str).collect();
    let all: Vec<Vec<Wait>> = args
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let after: Option<Vec<String>> =
                step.after.as_ref().map(|l| l.iter().map(LitStr::value).collect());
            let after: Option<Vec<&str>> =
                after.as_ref().map(|l| l.iter().map(String::as_str).collect());
            let w = waits(&names, i, after.as_deref());
            let me = step.id.as_ref().map(LitStr::value).unwrap_or_default();
            for (wait, a) in w.iter().zip(step.after.iter().flatten()) {
                let name = a.value();
                match wait {
                    Wait::On(_) => {}
                    Wait::Unknown => cx.error_spanned(
                        a,
                        format!(
                            "`after(\"{name}\")` names no step; the steps are {}",
                            ids.iter()
                                .map(|i| format!("\"{i}\""))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ),
                    Wait::Later => cx.error_spanned(a, format!("step \"{me}\" waits for \"{name}\", which is written after it; a step waits only for steps written above it (so no cycle can be written): move \"{name}\" up")),
                    Wait::Twice => cx.error_spanned(
                        a,
                        format!("`after(...)` names \"{name}\" twice; keep one"),
                    ),
                }
            }
            w
        })
        .collect();
    ancestors(&all)
        .into_iter()
        .map(|set| {
            set.into_iter()
                .filter_map(|j| ids.get(j).cloned())
                .collect()
        })
        .collect()
}

/// What the pipeline macro can see of its steps: ids, targets and reference
/// syntax, and that every `$step` reference reads a step it waits for.
pub fn steps(cx: &Ctxt, args: &SkillArgs) {
    if args.steps.is_empty() {
        cx.error_at(
            Span::call_site(),
            "a pipeline needs at least one `step(id = \"...\", skill = \"...\", inputs(...), outputs(...))`",
        );
        return;
    }
    let ids: Vec<String> = args
        .steps
        .iter()
        .filter_map(|s| s.id.as_ref().map(LitStr::value))
        .collect();
    let ancestors = step_ancestors(cx, args, &ids);
    for (i, step) in args.steps.iter().enumerate() {
        let Some(id_lit) = &step.id else { continue };
        let id = id_lit.value();
        if !is_snake_case(&id) {
            cx.error_spanned(
                id_lit,
                format!(
                    "step id \"{id}\" is not snake_case; write it like \"{}\"",
                    to_snake_case(&id)
                ),
            );
        }
        if ids[..i.min(ids.len())].contains(&id) {
            cx.error_spanned(
                id_lit,
                format!("step id \"{id}\" is used by an earlier step; give each step its own id"),
            );
        }
        if let Some((kind, target)) = &step.target {
            let text = target.value();
            let (name, version) = match text.split_once('@') {
                Some((n, v)) => (n, Some(v)),
                None => (text.as_str(), None),
            };
            if !is_snake_case(name) {
                cx.error_spanned(target, format!("{kind} name \"{name}\" is not snake_case; write `\"name\"` or `\"name@1.0.0\"`"));
            }
            if let Some(v) = version
                && !is_semver(v)
            {
                cx.error_spanned(target, format!("\"{v}\" is not a semver version; write `\"{name}@1.0.0\"`, or no version for the highest"));
            }
        }
        let earlier = &ids[..i.min(ids.len())];
        for (field, r) in &step.inputs {
            let text = r.value();
            let parts: Vec<&str> = text.split('.').collect();
            match parts.as_slice() {
                ["$inputs", f] if !f.is_empty() => {}
                ["$step", s, f] if !s.is_empty() && !f.is_empty() => {
                    let s = s.to_string();
                    if s == id && !earlier.contains(&s) {
                        cx.error_spanned(r, format!("step \"{id}\" reads its own output; read `$inputs.<field>` or an earlier step's"));
                    } else if ids.contains(&s) && !earlier.contains(&s) {
                        cx.error_spanned(r, format!("`{text}` reads step \"{s}\", which runs later; steps run in order, so move \"{s}\" before \"{id}\""));
                    } else if earlier.contains(&s) && !ancestors.get(i).is_some_and(|a| a.contains(&s)) {
                        cx.error_spanned(r, format!("`{text}` reads step \"{s}\", which \"{id}\" does not wait for: they may run at the same time; add \"{s}\" to \"{id}\"'s `after(...)`"));
                    } else if !ids.contains(&s) {
                        cx.error_spanned(r, format!("`{text}` names no step; the steps are {}", ids.iter().map(|i| format!("\"{i}\"")).collect::<Vec<_>>().join(", ")));
                    }
                }
                ["$outputs", _] => cx.error_spanned(r, format!("input `{field}` reads `{text}`, but `$outputs` is where results go; read `$inputs.<field>` or `$step.<id>.<field>`")),
                _ => cx.error_spanned(r, format!("`{text}` is not a reference; write `$inputs.<field>` or `$step.<id>.<field>`")),
            }
        }
        for (field, r) in &step.outputs {
            let text = r.value();
            let parts: Vec<&str> = text.split('.').collect();
            match parts.as_slice() {
                ["$outputs", n] if !n.is_empty() => {}
                ["$step", s, f] if *s == id && field == *f => {}
                _ => cx.error_spanned(r, format!("output `{field}` goes to `{text}`; write `$outputs.<name>` (a field of the pipeline's output), or `$step.{id}.{field}`")),
            }
        }
    }
}

/// An op's runtime agrees with its shape: a body is native code; a bodiless op
/// names where it runs, with that runtime's one field.
pub fn op_runtime(cx: &Ctxt, args: &SkillArgs, has_body: bool) {
    let Some(op) = &args.op else { return };
    let runtime = op.runtime.map(|c| c.variant);
    let fields = [
        ("Mcp", "tool", &op.tool),
        ("Http", "url", &op.url),
        ("Script", "command", &op.command),
    ];
    if has_body {
        if let Some(c) = op.runtime.filter(|c| c.variant != "Native") {
            cx.error_at(
                c.span,
                "an op with a body is native code; remove `runtime`, or remove the body to run it elsewhere",
            );
            return;
        }
        for (_, key, value) in fields {
            if let Some(v) = value {
                cx.error_spanned(
                    v,
                    format!("`{key}` is for an op without a body; a native op runs its own body"),
                );
            }
        }
        return;
    }
    let at = op.runtime.map_or(Span::call_site(), |c| c.span);
    match runtime {
        None | Some("Native") => cx.error_at(
            at,
            "an op without a body runs elsewhere: add `runtime = \"mcp\"` with `tool = \"...\"`, `runtime = \"script\"` with `command = \"...\"`, or `runtime = \"http\"` with `url = \"...\"`",
        ),
        Some(r) => {
            for (variant, key, value) in fields {
                match (variant == r, value) {
                    (true, None) => cx.error_at(
                        at,
                        format!("runtime `{}` needs `{key} = \"...\"`", r.to_lowercase()),
                    ),
                    (false, Some(v)) => cx.error_spanned(
                        v,
                        format!(
                            "`{key}` belongs to runtime `{}`, not `{}`",
                            variant.to_lowercase(),
                            r.to_lowercase()
                        ),
                    ),
                    _ => {}
                }
            }
        }
    }
}
