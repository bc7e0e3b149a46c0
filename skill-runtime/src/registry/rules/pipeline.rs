//! The rules of pipelines: every step's target exists and is enabled, every
//! reference resolves to a step the reader waits for (or the pipeline's
//! input, or for an error handler the failed step's `$error`) and fits the
//! target's field type, guards read booleans, every required input and
//! output is written whichever way the guards go, error handlers sit below
//! the flow; and each pipeline's capability closure ([`closure`]).
//!
//! [`closure`]: super::closure

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use std::sync::LazyLock;

use skill_core::manifest::PipelineStep;
use skill_core::steps::{Plan, Reference, Wait};

use crate::registry::json::{array, label, str_of};
pub use crate::registry::rules::closure::Closure;
use crate::registry::rules::closure::Walk;
use crate::registry::rules::finding::{At, Finding, subject};
use crate::registry::rules::index::Index;
use crate::registry::rules::schema::{accepts, property, required, shown, types_of};

/// Check every pipeline of `skills` against `skills` and `ops`, and compute the
/// capability closure of each (keyed by `name@version`). Skills and ops that
/// are not pipelines are taken as they are.
pub fn check_pipelines(
    skills: &[Value],
    ops: &[Value],
) -> (Vec<Finding>, BTreeMap<String, Closure>) {
    let index = Index::new(skills, ops);
    let mut findings = Vec::new();
    let pipelines = || {
        skills
            .iter()
            .enumerate()
            .filter(|(_, s)| str_of(s, "kind") == "pipeline")
    };
    for (i, p) in pipelines() {
        check_steps(p, At::Skills(i), &index, &mut findings);
    }
    let mut walk = Walk {
        skills,
        index: &index,
        done: BTreeMap::new(),
        visiting: Vec::new(),
        findings: &mut findings,
    };
    for (_, p) in pipelines() {
        walk.closure(p);
    }
    let closures = walk.done;
    (findings, closures)
}

/// A value's place on one side of a mapping: the schema of the field, the
/// document its `$ref`s resolve in, and whether the field is required there
/// (always present, for a source; needed, for a destination).
#[derive(Clone, Copy)]
struct Slot<'a> {
    root: &'a Value,
    schema: &'a Value,
    required: bool,
}

impl<'a> Slot<'a> {
    /// Property `field` of the object schema `root`.
    fn of(root: &'a Value, field: &str) -> Option<Slot<'a>> {
        property(root, field).map(|(schema, required)| Slot {
            root,
            schema,
            required,
        })
    }
}

/// Why values from `from` may not fit `to`: the types they disagree on
/// (`have`, `want`), and whether an optional source feeds a required field.
fn misfit(from: Slot<'_>, to: Slot<'_>) -> (Option<(String, String)>, bool) {
    let types = match (
        types_of(from.schema, from.root),
        types_of(to.schema, to.root),
    ) {
        (Some(have), Some(want)) if !accepts(&want, &have) => Some((shown(&have), shown(&want))),
        _ => None,
    };
    (types, to.required && !from.required)
}

/// One pipeline's steps, in order, against the registry.
struct StepCheck<'a> {
    index: &'a Index<'a>,
    /// The pipeline's input and output schemas.
    inputs: &'a Value,
    outputs: &'a Value,
    ids: Vec<&'a str>,
    /// By index: the step is an error handler.
    handler: Vec<bool>,
    /// The steps each step may read, by index ([`Plan`]).
    reads: Vec<BTreeSet<usize>>,
    /// Earlier steps' ids and their targets' output schemas.
    earlier: BTreeMap<&'a str, Option<&'a Value>>,
    /// Steps with a guard: its source, the value it runs on, and whether
    /// the source is always present (so a `when`/`unless` pair on it
    /// always runs one side).
    guarded: BTreeMap<&'a str, (&'a str, bool, bool)>,
    /// Pipeline output -> the steps that write it.
    produced: BTreeMap<&'a str, Vec<&'a str>>,
    problems: Vec<String>,
    /// Step targets the checked documents do not hold.
    unresolved: Vec<String>,
}

/// The schema of each `$error` field: a string, always there.
static ERROR_FIELD: LazyLock<Value> = LazyLock::new(|| serde_json::json!({"type": "string"}));

fn check_steps<'a>(p: &'a Value, at: At, index: &'a Index<'a>, findings: &mut Vec<Finding>) {
    let steps = array(p, "steps");
    let mut c = StepCheck {
        index,
        inputs: p.get("inputs_schema").unwrap_or(&Value::Null),
        outputs: p.get("outputs_schema").unwrap_or(&Value::Null),
        ids: steps.iter().map(|s| str_of(s, "id")).collect(),
        handler: steps.iter().map(|s| s.get("on_error").is_some()).collect(),
        reads: Vec::new(),
        earlier: BTreeMap::new(),
        guarded: BTreeMap::new(),
        produced: BTreeMap::new(),
        problems: Vec::new(),
        unresolved: Vec::new(),
    };
    if steps.is_empty() {
        c.problems.push("has no steps".to_owned());
    }
    c.reads = c.plan(steps);
    for (i, step) in steps.iter().enumerate() {
        c.step(i, step);
    }
    for r in required(c.outputs) {
        c.required_output(r);
    }
    let who = subject("pipeline", p);
    findings.extend(
        c.problems
            .into_iter()
            .map(|message| Finding::new(who.clone(), at, message)),
    );
    findings.extend(
        c.unresolved
            .into_iter()
            .map(|message| Finding::unresolved(who.clone(), at, message)),
    );
}

impl<'a> StepCheck<'a> {
    fn step(&mut self, i: usize, step: &'a Value) {
        let id = self.ids[i];
        if id.is_empty() {
            self.problems.push("a step has no `id`".to_owned());
        }
        if self.earlier.contains_key(id) {
            self.problems.push(format!("step id `{id}` is used twice"));
        }
        let target = match step.get("target").map(|t| self.index.target(t)) {
            Some(Ok((v, _))) => Some(v),
            Some(Err(e)) => {
                self.unresolved.push(format!("step `{id}`: {e}"));
                None
            }
            None => {
                self.problems.push(format!("step `{id}` has no `target`"));
                None
            }
        };
        if let Some(t) = target
            && str_of(t, "status") == "disabled"
        {
            self.problems
                .push(format!("step `{id}`: target `{}` is disabled", label(t)));
        }
        let t_name = target.map(label).unwrap_or_default();
        let t_in = target.and_then(|t| t.get("inputs_schema"));
        let t_out = target.and_then(|t| t.get("outputs_schema"));

        let mapping = step.get("inputs").and_then(Value::as_object);
        for (field, source) in mapping.into_iter().flatten() {
            self.input(i, &t_name, t_in, field, source);
        }
        if let Some(t_in) = t_in {
            for r in required(t_in) {
                if mapping.is_none_or(|m| !m.contains_key(r)) {
                    self.problems.push(format!(
                        "step `{id}` does not map required input `{r}` of `{t_name}`"
                    ));
                }
            }
        }
        self.guard(i, step);
        self.retries(id, step);
        let mapping = step.get("outputs").and_then(Value::as_object);
        if self.handler[i] && mapping.is_some_and(|m| !m.is_empty()) {
            self.problems.push(format!(
                "error handler `{id}` runs when the run fails, which has no output; it writes no `outputs`"
            ));
        } else {
            for (field, dest) in mapping.into_iter().flatten() {
                self.output(id, &t_name, t_out, field, dest);
            }
        }
        self.earlier.insert(id, t_out);
    }

    /// What each step may read ([`Plan`]), with a problem for each `after`
    /// or `on_error` entry that is not a step of the flow written above,
    /// and for error handlers not written below the flow.
    fn plan(&mut self, steps: &'a [Value]) -> Vec<BTreeSet<usize>> {
        let list = |step: &'a Value, key: &str, problems: &mut Vec<String>| {
            step.get(key).map(|v| {
                let l = v.as_array().map(Vec::as_slice).unwrap_or_default();
                if v.as_array().is_none() || l.iter().any(|a| !a.is_string()) {
                    problems.push(format!(
                        "step `{}`: `{key}` holds step ids",
                        str_of(step, "id")
                    ));
                }
                l.iter().filter_map(Value::as_str).collect::<Vec<&'a str>>()
            })
        };
        let after: Vec<Option<Vec<&'a str>>> = steps
            .iter()
            .map(|s| list(s, "after", &mut self.problems))
            .collect();
        let on_error: Vec<Option<Vec<&'a str>>> = steps
            .iter()
            .map(|s| list(s, "on_error", &mut self.problems))
            .collect();
        let plan = Plan::of_lists(&self.ids, &after, &on_error);
        let mut below = None;
        for (i, id) in self.ids.iter().enumerate() {
            if self.handler[i] {
                below.get_or_insert(*id);
                if on_error[i].as_ref().is_some_and(Vec::is_empty) {
                    self.problems
                        .push(format!("error handler `{id}` handles no step"));
                }
                if after[i].is_some() {
                    self.problems.push(format!(
                        "error handler `{id}` waits for nothing; it has no `after`"
                    ));
                }
                if ["when", "unless"]
                    .iter()
                    .any(|k| steps[i].get(*k).is_some())
                {
                    self.problems
                        .push(format!("error handler `{id}` has no guard"));
                }
            } else if let Some(h) = below {
                self.problems.push(format!(
                    "step `{id}` is written below error handler `{h}`; error handlers go below every step of the flow"
                ));
            }
            let named = plan.waits[i].iter().zip(after[i].iter().flatten());
            let handled = plan.handles[i].iter().zip(on_error[i].iter().flatten());
            for ((wait, a), key) in named
                .map(|w| (w, "after"))
                .chain(handled.map(|w| (w, "on_error")))
            {
                let problem = match wait {
                    Wait::On(_) => continue,
                    Wait::Handler => format!(
                        "step `{id}`: `{key}` names error handler `{a}`, which runs only when a step fails"
                    ),
                    Wait::Later if key == "after" => {
                        format!("step `{id}` waits for step `{a}`, which is written after it")
                    }
                    Wait::Later => format!(
                        "error handler `{id}` handles step `{a}`, which is written after it"
                    ),
                    Wait::Unknown => format!("step `{id}`: `{key}` names no step `{a}`"),
                    Wait::Twice => format!("step `{id}`: `{key}` names `{a}` twice"),
                };
                self.problems.push(problem);
            }
        }
        plan.reads
    }

    /// Target input `field` read from `source`.
    fn input(
        &mut self,
        i: usize,
        t_name: &str,
        t_in: Option<&'a Value>,
        field: &str,
        source: &'a Value,
    ) {
        let id = self.ids[i];
        let Some(text) = source.as_str() else {
            self.problems.push(format!(
                "step `{id}`: input `{field}` is not a reference string"
            ));
            return;
        };
        let to = t_in.and_then(|s| Slot::of(s, field));
        if t_in.is_some() && to.is_none() {
            self.problems.push(format!(
                "step `{id}`: `{field}` is not an input field of `{t_name}`"
            ));
        }
        let Some(from) = self.source(i, &format!("input `{field}`"), text) else {
            return;
        };
        if let Some(to) = to {
            let (types, absent) = misfit(from, to);
            if let Some((have, want)) = types {
                self.problems.push(format!(
                    "step `{id}`: `{text}` is {have} but input `{field}` of `{t_name}` takes {want}"
                ));
            }
            if absent {
                self.problems.push(format!(
                    "step `{id}`: `{text}` may be absent but input `{field}` of `{t_name}` is required"
                ));
            }
        }
    }

    /// `when` or `unless`: a reference to a boolean the step may read.
    fn guard(&mut self, i: usize, step: &'a Value) {
        let id = self.ids[i];
        let guards: Vec<(bool, &'a Value)> = [("when", true), ("unless", false)]
            .into_iter()
            .filter_map(|(k, runs_if)| step.get(k).map(|v| (runs_if, v)))
            .collect();
        let [(runs_if, v)] = guards[..] else {
            if guards.len() > 1 {
                self.problems.push(format!(
                    "step `{id}` has both `when` and `unless`; keep one"
                ));
            }
            return;
        };
        let Some(text) = v.as_str() else {
            self.problems
                .push(format!("step `{id}`: its guard is not a reference string"));
            return;
        };
        let Some(from) = self.source(i, "its guard", text) else {
            return;
        };
        match types_of(from.schema, from.root) {
            Some(t) if t.len() == 1 && t.contains("boolean") => {}
            Some(t) => self.problems.push(format!(
                "step `{id}`: its guard `{text}` is {} but a guard reads a boolean",
                shown(&t)
            )),
            None => self.problems.push(format!(
                "step `{id}`: its guard `{text}` has no type; a guard reads a boolean"
            )),
        }
        self.guarded.insert(id, (text, runs_if, from.required));
    }

    fn retries(&mut self, id: &str, step: &Value) {
        let Some(n) = step.get("retries") else { return };
        if n.as_u64()
            .is_none_or(|n| n > u64::from(PipelineStep::MAX_RETRIES))
        {
            self.problems.push(format!(
                "step `{id}`: `retries` is a whole number, at most {}",
                PipelineStep::MAX_RETRIES
            ));
        }
    }

    /// Where `text` (read by step `i` for `what`: an input or its guard)
    /// points, when it points somewhere known. A step with a guard may be
    /// skipped: what it writes may be absent.
    fn source(&mut self, i: usize, what: &str, text: &str) -> Option<Slot<'a>> {
        let id = self.ids[i];
        let problem = match Reference::parse(text) {
            None => {
                format!("step `{id}`: `{text}` is not `$inputs.<field>` or `$step.<id>.<field>`")
            }
            Some(Reference::Output(_)) => format!(
                "step `{id}`: {what} reads `{text}`, but `$outputs` is where results go; read `$inputs.<field>` or `$step.<id>.<field>`"
            ),
            Some(Reference::Error(f))
                if self.handler[i] && Reference::ERROR_FIELDS.contains(&f) =>
            {
                return Some(Slot {
                    root: &ERROR_FIELD,
                    schema: &ERROR_FIELD,
                    required: true,
                });
            }
            Some(Reference::Error(_)) if self.handler[i] => format!(
                "step `{id}`: `{text}`: `$error` has the fields `step`, `message` and `code`"
            ),
            Some(Reference::Error(_)) => {
                format!("step `{id}`: `{text}` is read by error handlers only (`on_error`)")
            }
            Some(Reference::Input(f)) => match Slot::of(self.inputs, f) {
                Some(slot) => return Some(slot),
                None => format!("step `{id}`: `{text}` is not a field of the pipeline's input"),
            },
            Some(Reference::Step(s, f)) => match self.ids.iter().position(|x| *x == s) {
                Some(j) if self.reads[i].contains(&j) => match self.earlier.get(s) {
                    Some(Some(out)) => match Slot::of(out, f) {
                        Some(mut slot) => {
                            slot.required &= !self.guarded.contains_key(s);
                            return Some(slot);
                        }
                        None => format!(
                            "step `{id}`: `{text}`: `{f}` is not an output field of step `{s}`"
                        ),
                    },
                    // The earlier step's target is unknown, which is reported there.
                    _ => return None,
                },
                Some(j) if j == i => format!("step `{id}`: `{text}` refers to the step itself"),
                Some(j) if self.handler[j] => format!(
                    "step `{id}`: `{text}` refers to error handler `{s}`, which runs only when a step fails"
                ),
                Some(j) if j > i => {
                    format!("step `{id}`: `{text}` refers to step `{s}`, which runs later")
                }
                Some(_) if self.handler[i] => format!(
                    "step `{id}`: `{text}` refers to step `{s}`, which may not have run when a step it handles fails (an error handler reads the steps every step it handles waits for)"
                ),
                Some(_) => format!(
                    "step `{id}`: `{text}` refers to step `{s}`, which `{id}` does not wait for (they may run at the same time): add `{s}` to its `after`"
                ),
                None => format!("step `{id}`: `{text}` names no step"),
            },
        };
        self.problems.push(problem);
        None
    }

    /// Target output `field` written to `dest`.
    fn output(
        &mut self,
        id: &'a str,
        t_name: &str,
        t_out: Option<&'a Value>,
        field: &str,
        dest: &'a Value,
    ) {
        let from = t_out.and_then(|s| Slot::of(s, field));
        if t_out.is_some() && from.is_none() {
            self.problems.push(format!(
                "step `{id}`: `{field}` is not an output field of `{t_name}`"
            ));
        }
        let name = match dest.as_str().and_then(Reference::parse) {
            Some(Reference::Output(name)) => name,
            // The seed's way of naming a step output for later steps.
            Some(Reference::Step(s, f)) if s == id && f == field => return,
            _ => {
                self.problems.push(format!(
                    "step `{id}`: output `{field}` goes to {dest}; write `$outputs.<name>` (or `$step.{id}.{field}`)"
                ));
                return;
            }
        };
        let writers = self.produced.entry(name).or_default();
        if let Some(first) = writers.first()
            && !(writers.len() == 1 && exclusive(&self.guarded, first, id))
        {
            self.problems.push(format!(
                "pipeline output `{name}` is written by step `{first}` and by step `{id}` (two steps may write one output only as the two sides of a `when`/`unless` pair on the same boolean)"
            ));
        }
        writers.push(id);
        let Some(to) = Slot::of(self.outputs, name) else {
            self.problems.push(format!(
                "step `{id}`: `$outputs.{name}` is not a field of the pipeline's output"
            ));
            return;
        };
        if let Some(from) = from {
            let (types, absent) = misfit(from, to);
            if let Some((have, want)) = types {
                self.problems.push(format!(
                    "step `{id}`: output `{field}` of `{t_name}` is {have} but `$outputs.{name}` is {want}"
                ));
            }
            if absent {
                self.problems.push(format!(
                    "step `{id}`: output `{field}` of `{t_name}` may be absent but `$outputs.{name}` is required"
                ));
            }
        }
    }

    /// Required output `r` is written whichever way the guards go: by a
    /// step without a guard, or by both sides of a pair on a boolean that
    /// is always there.
    fn required_output(&mut self, r: &str) {
        let problem = match self.produced.get(r).map(Vec::as_slice) {
            None | Some([]) => format!(
                "required output `{r}` is written by no step (map a step output to `$outputs.{r}`)"
            ),
            Some([one]) if !self.guarded.contains_key(one) => return,
            Some([a, b])
                if exclusive(&self.guarded, a, b) && self.guarded.get(a).is_some_and(|g| g.2) =>
            {
                return;
            }
            Some(writers) => format!(
                "required output `{r}` may be left unwritten: step `{}` runs only when its guard holds; write it from a step without a guard, or from both sides of a `when`/`unless` pair on a boolean that is always there",
                writers[0]
            ),
        };
        self.problems.push(problem);
    }
}

/// Steps `a` and `b` are the two sides of one boolean: one runs when it is
/// true, the other when it is false.
fn exclusive(guarded: &BTreeMap<&str, (&str, bool, bool)>, a: &str, b: &str) -> bool {
    match (guarded.get(a), guarded.get(b)) {
        (Some(x), Some(y)) => x.0 == y.0 && x.1 != y.1,
        _ => false,
    }
}
