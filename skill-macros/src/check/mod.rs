//! Rules over a whole `#[skill]` that no single argument can check alone. One
//! `check_*` function per rule; each reports every violation it finds.

use skill_core::manifest::{Domain, Execution, is_key_field};
use skill_core::names::{
    DescriptionProblem, MAX_DESCRIPTION, is_mcp_tool_name, is_semver, is_snake_case,
};

use crate::ast::func::SkillFn;
use crate::ast::read::same_path;
use crate::ast::types::SkillArgs;
use crate::errors::Errors;
use proc_macro2::Span;

mod steps;

pub use steps::steps;

pub fn all(cx: &Errors, args: &SkillArgs, func: &SkillFn) {
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
    check_rejection_undone(cx, args);
}

/// A postcondition or an error-severity validation rule rejects a skill's
/// output after its handler ran, its side effects done: a skill with side
/// effects says how to undo them (a rollback action), or a rejected output
/// would leave its writes behind.
fn check_rejection_undone(cx: &Errors, args: &SkillArgs) {
    if args.side_effects.is_empty() || args.postconditions.iter().any(|p| p.rollback.is_some()) {
        return;
    }
    let effects: Vec<String> = args
        .side_effects
        .iter()
        .map(|s| crate::args::path_text(&s.capability))
        .collect();
    let effects = effects.join("`, `");
    for p in &args.postconditions {
        cx.error_at(
            p.span,
            format!(
                "a postcondition rejects the output after the skill's side effects (`{effects}`) happened; add `rollback = \"action\"` naming the action that undoes them"
            ),
        );
    }
    for r in &args.validation_rules {
        if r.severity.as_ref().is_some_and(|s| s.variant == "Error") {
            cx.error_at(
                r.span,
                format!(
                    "a validation rule of severity \"error\" rejects the output after the skill's side effects (`{effects}`) happened; declare the action that undoes them (`postcondition(check = ..., rollback = \"action\")`), or make the rule's severity \"warning\""
                ),
            );
        }
    }
}

/// A skill's body (and its conditions) runs other skills through its
/// context, never through a runtime, registry or runner of its own: one would
/// run any skill with no `calls(...)` checked. The runtime also refuses to
/// be built while a handler runs; this says so where it is written.
fn check_no_runner(cx: &Errors, args: &SkillArgs, func: &SkillFn) {
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
fn check_idempotency(cx: &Errors, args: &SkillArgs) {
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
fn check_name(cx: &Errors, args: &SkillArgs, func: &SkillFn) {
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
fn check_versions(cx: &Errors, args: &SkillArgs) {
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
fn check_description(cx: &Errors, args: &SkillArgs, func: &SkillFn) {
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
fn check_deprecation(cx: &Errors, args: &SkillArgs) {
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
fn check_side_effects_declared(cx: &Errors, args: &SkillArgs) {
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
fn check_mcp(cx: &Errors, args: &SkillArgs) {
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
fn check_limits(cx: &Errors, args: &SkillArgs) {
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
fn check_words(cx: &Errors, args: &SkillArgs) {
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
pub fn check_condition_arity(cx: &Errors, args: &SkillArgs) {
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

/// An op's runtime agrees with its shape: a body is native code; a bodiless op
/// names where it runs, with that runtime's one field.
pub fn op_runtime(cx: &Errors, args: &SkillArgs, has_body: bool) {
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
