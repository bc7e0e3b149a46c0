//! What `#[pipeline]` can check of its steps without the registry: ids,
//! targets and reference syntax; that every step reads only steps it waits
//! for (`after`, or the step written before it), so no two steps that may
//! run at the same time read each other; that guards read a reference the
//! step could read as an input; and that error handlers (`on_error`) sit
//! below the flow and read only what has run whenever they run. Field types
//! need the targets' schemas: the registry's rules check them.

use std::collections::BTreeSet;

use proc_macro2::Span;
use skill_core::manifest::PipelineStep;
use skill_core::names::{is_semver, is_snake_case};
use skill_core::steps::{Plan, Wait};
use syn::LitStr;

use super::to_snake_case;
use crate::ast::types::{SkillArgs, StepArgs};
use crate::errors::Errors;

/// The fields of `$error`, which an error handler reads.
const ERROR_FIELDS: &[&str] = &["step", "message", "code"];

/// The steps, as the checks see them.
struct Steps<'a> {
    cx: &'a Errors,
    args: &'a SkillArgs,
    ids: Vec<String>,
    /// By index: whether the step is an error handler.
    handler: Vec<bool>,
    /// By index: the steps (by index) each may read.
    reads: Vec<BTreeSet<usize>>,
}

/// Check the steps of a `#[pipeline]`.
pub fn steps(cx: &Errors, args: &SkillArgs) {
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
        .map(|s| s.id.as_ref().map(LitStr::value).unwrap_or_default())
        .collect();
    let handler: Vec<bool> = args.steps.iter().map(|s| s.on_error.is_some()).collect();
    let mut c = Steps {
        cx,
        args,
        ids,
        handler,
        reads: Vec::new(),
    };
    c.reads = c.reads();
    for (i, step) in args.steps.iter().enumerate() {
        c.id_and_target(i, step);
        for (field, r) in &step.inputs {
            c.read(i, r, &format!("input `{field}`"));
        }
        if let Some((_, r)) = &step.guard {
            c.read(i, r, "its guard");
        }
        c.outputs(i, step);
        c.shape(i, step);
    }
}

impl Steps<'_> {
    fn id(&self, i: usize) -> &str {
        &self.ids[i]
    }

    fn quoted(&self, which: impl Iterator<Item = usize>) -> String {
        which
            .map(|j| format!("\"{}\"", self.ids[j]))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What each step may read ([`Plan`]), reporting the `after` and
    /// `on_error` entries that name no step of the flow written above.
    fn reads(&self) -> Vec<BTreeSet<usize>> {
        let names: Vec<&str> = self.ids.iter().map(String::as_str).collect();
        let after: Vec<Option<Vec<String>>> = self
            .args
            .steps
            .iter()
            .map(|s| values(s.after.as_deref()))
            .collect();
        let on_error: Vec<Option<Vec<String>>> = self
            .args
            .steps
            .iter()
            .map(|s| values(s.on_error.as_deref()))
            .collect();
        let after: Vec<Option<Vec<&str>>> = after.iter().map(|l| strs(l.as_deref())).collect();
        let on_error: Vec<Option<Vec<&str>>> =
            on_error.iter().map(|l| strs(l.as_deref())).collect();
        let plan = Plan::of_lists(&names, &after, &on_error);
        for (i, step) in self.args.steps.iter().enumerate() {
            if !self.handler[i] {
                self.waits_named(
                    i,
                    &plan.waits[i],
                    step.after.as_deref().unwrap_or_default(),
                    "after",
                );
            }
            self.waits_named(
                i,
                &plan.handles[i],
                step.on_error.as_deref().unwrap_or_default(),
                "on_error",
            );
        }
        plan.reads
    }

    /// Report the entries of `key(...)` (`after` or `on_error`) of step `i`
    /// that do not name a step of the flow written above it.
    fn waits_named(&self, i: usize, w: &[Wait], named: &[LitStr], key: &str) {
        let me = self.id(i);
        for (wait, a) in w.iter().zip(named) {
            let name = a.value();
            let msg = match wait {
                Wait::On(_) => continue,
                Wait::Handler => format!(
                    "\"{name}\" is an error handler: it runs only when a step it handles fails, so no step waits for it or is handled by it"
                ),
                Wait::Later
                    if self
                        .ids
                        .iter()
                        .position(|x| *x == name)
                        .is_some_and(|j| self.handler[j]) =>
                {
                    format!(
                        "\"{name}\" is an error handler: it runs only when a step it handles fails, so no step waits for it or is handled by it"
                    )
                }
                Wait::Unknown => format!(
                    "`{key}(\"{name}\")` names no step; the steps are {}",
                    self.quoted(0..self.ids.len())
                ),
                Wait::Later if key == "after" => format!(
                    "step \"{me}\" waits for \"{name}\", which is written after it; a step waits only for steps written above it (so no cycle can be written): move \"{name}\" up"
                ),
                Wait::Later => format!(
                    "error handler \"{me}\" handles \"{name}\", which is written after it; error handlers go below every step of the flow: move \"{me}\" down"
                ),
                Wait::Twice => format!("`{key}(...)` names \"{name}\" twice; keep one"),
            };
            self.cx.error_spanned(a, msg);
        }
    }

    fn id_and_target(&self, i: usize, step: &StepArgs) {
        let (cx, id) = (self.cx, self.id(i));
        if let Some(id_lit) = &step.id {
            if !is_snake_case(id) {
                cx.error_spanned(
                    id_lit,
                    format!(
                        "step id \"{id}\" is not snake_case; write it like \"{}\"",
                        to_snake_case(id)
                    ),
                );
            }
            if self.ids[..i].iter().any(|x| x == id) {
                cx.error_spanned(
                    id_lit,
                    format!(
                        "step id \"{id}\" is used by an earlier step; give each step its own id"
                    ),
                );
            }
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
    }

    /// A reference step `i` reads (for `what`: an input, or its guard).
    fn read(&self, i: usize, r: &LitStr, what: &str) {
        let (cx, id) = (self.cx, self.id(i));
        let text = r.value();
        let parts: Vec<&str> = text.split('.').collect();
        let msg = match parts.as_slice() {
            ["$inputs", f] if !f.is_empty() => return,
            ["$error", f] if self.handler[i] && ERROR_FIELDS.contains(f) => return,
            ["$error", _] if self.handler[i] => format!(
                "`{text}`: `$error` has the fields `step`, `message` and `code` (of the step that failed)"
            ),
            ["$error", _] => format!(
                "`{text}` is read by error handlers only; make \"{id}\" one with `on_error(\"...\")`, or read `$inputs.<field>` or `$step.<id>.<field>`"
            ),
            ["$step", s, f] if !s.is_empty() && !f.is_empty() => {
                let Some(j) = self.ids.iter().position(|x| x == s) else {
                    let msg = format!(
                        "`{text}` names no step; the steps are {}",
                        self.quoted(0..self.ids.len())
                    );
                    return cx.error_spanned(r, msg);
                };
                if self.reads[i].contains(&j) {
                    return;
                }
                if j == i {
                    format!(
                        "step \"{id}\" reads its own output; read `$inputs.<field>` or an earlier step's"
                    )
                } else if self.handler[j] {
                    format!(
                        "`{text}` reads error handler \"{s}\", which runs only when a step fails; read a step of the flow"
                    )
                } else if j > i {
                    format!(
                        "`{text}` reads step \"{s}\", which runs later; steps run in order, so move \"{s}\" before \"{id}\""
                    )
                } else if self.handler[i] {
                    format!(
                        "`{text}` reads step \"{s}\", which may not have run when a step \"{id}\" handles fails; an error handler reads the steps that every step it handles waits for ({})",
                        if self.reads[i].is_empty() {
                            "none here".to_owned()
                        } else {
                            self.quoted(self.reads[i].iter().copied())
                        }
                    )
                } else {
                    format!(
                        "`{text}` reads step \"{s}\", which \"{id}\" does not wait for: they may run at the same time; add \"{s}\" to \"{id}\"'s `after(...)`"
                    )
                }
            }
            ["$outputs", _] => format!(
                "{what} reads `{text}`, but `$outputs` is where results go; read `$inputs.<field>` or `$step.<id>.<field>`"
            ),
            _ => format!(
                "`{text}` is not a reference; write `$inputs.<field>` or `$step.<id>.<field>`"
            ),
        };
        cx.error_spanned(r, msg);
    }

    fn outputs(&self, i: usize, step: &StepArgs) {
        let id = self.id(i);
        for (field, r) in &step.outputs {
            if self.handler[i] {
                self.cx.error_spanned(r, format!("error handler \"{id}\" runs when the run fails, which has no output; remove its `outputs(...)`"));
                continue;
            }
            let text = r.value();
            let parts: Vec<&str> = text.split('.').collect();
            match parts.as_slice() {
                ["$outputs", n] if !n.is_empty() => {}
                ["$step", s, f] if *s == id && field == *f => {}
                _ => self.cx.error_spanned(r, format!("output `{field}` goes to `{text}`; write `$outputs.<name>` (a field of the pipeline's output), or `$step.{id}.{field}`")),
            }
        }
    }

    /// Handlers below the flow, waiting for nothing and unguarded; retries
    /// within bounds.
    fn shape(&self, i: usize, step: &StepArgs) {
        let (cx, id) = (self.cx, self.id(i));
        if let Some(list) = &step.on_error {
            if list.is_empty() {
                cx.error_at(
                    Span::call_site(),
                    format!(
                        "error handler \"{id}\" handles no step; name them: `on_error(\"publish\")`"
                    ),
                );
            }
            if let Some(a) = step.after.iter().flatten().next() {
                cx.error_spanned(a, format!("error handler \"{id}\" waits for nothing: it runs when a step in its `on_error(...)` fails; remove `after(...)`"));
            }
            if let Some((_, g)) = &step.guard {
                cx.error_spanned(g, format!("error handler \"{id}\" runs when a step it handles fails; a guard does not apply: remove it"));
            }
        } else if let Some(h) = (0..i).find(|&h| self.handler[h])
            && let Some(id_lit) = &step.id
        {
            let h = self.id(h);
            cx.error_spanned(id_lit, format!("step \"{id}\" is written below error handler \"{h}\"; error handlers go below every step of the flow: move \"{h}\" down"));
        }
        if let Some(n) = &step.retries
            && n.base10_parse::<u32>()
                .map_or(true, |v| v > PipelineStep::MAX_RETRIES)
        {
            cx.error_spanned(
                n,
                format!(
                    "a step's `retries` is at most {}: past a few, retrying hides a failure instead of riding out a blip",
                    PipelineStep::MAX_RETRIES
                ),
            );
        }
    }
}

/// The values of a list of literals.
fn values(list: Option<&[LitStr]>) -> Option<Vec<String>> {
    list.map(|l| l.iter().map(LitStr::value).collect())
}

/// The same list, borrowed.
fn strs(list: Option<&[String]>) -> Option<Vec<&str>> {
    list.map(|l| l.iter().map(String::as_str).collect())
}
