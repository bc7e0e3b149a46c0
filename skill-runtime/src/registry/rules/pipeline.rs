//! The rules of pipelines: every step's target exists and is enabled, every
//! reference resolves to an earlier step or the pipeline's input and fits the
//! target's field type, every required input and output is written, no cycle;
//! and each pipeline's capability closure.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use skill_core::steps::{Wait, ancestors, waits};

use crate::registry::json::{array, label, str_of, strings};
use crate::registry::rules::finding::{At, Finding, subject};
use crate::registry::rules::index::Index;
use crate::registry::rules::schema::{accepts, property, required, shown, types_of};

/// What a pipeline can do: the union over every skill and op it reaches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Closure {
    /// Every capability the steps reach.
    pub capabilities: BTreeSet<String>,
    /// Every side effect the steps reach.
    pub side_effects: BTreeSet<String>,
    /// Some step's target (or a target's) is not in the checked documents:
    /// the sets above hold what the others reach, a part of the closure.
    pub partial: bool,
}

/// A reference in a step's mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `$inputs.<field>`: a field of the pipeline's input.
    Input(&'a str),
    /// `$step.<id>.<field>`: an output field of an earlier step.
    Step(&'a str, &'a str),
    /// `$outputs.<name>`: a field of the pipeline's output (a destination).
    Output(&'a str),
}

impl<'a> Reference<'a> {
    /// `None` when `text` is none of the three forms.
    pub fn parse(text: &'a str) -> Option<Reference<'a>> {
        let field = |s: &'a str| (!s.is_empty() && !s.contains('.')).then_some(s);
        if let Some(rest) = text.strip_prefix("$inputs.") {
            return field(rest).map(Reference::Input);
        }
        if let Some(rest) = text.strip_prefix("$outputs.") {
            return field(rest).map(Reference::Output);
        }
        let rest = text.strip_prefix("$step.")?;
        let (id, f) = rest.split_once('.')?;
        Some(Reference::Step(field(id)?, field(f)?))
    }
}

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
    all_ids: BTreeSet<&'a str>,
    /// Earlier steps' ids and their targets' output schemas.
    earlier: BTreeMap<&'a str, Option<&'a Value>>,
    /// Each step's ancestors, in the order written: the steps it waits for
    /// (`after`, or the step before it), and theirs.
    ancestors: Vec<BTreeSet<&'a str>>,
    /// The step being checked's ancestors.
    waits_for: BTreeSet<&'a str>,
    /// Pipeline output -> the step that writes it.
    produced: BTreeMap<&'a str, &'a str>,
    problems: Vec<String>,
    /// Step targets the checked documents do not hold.
    unresolved: Vec<String>,
}

fn check_steps<'a>(p: &'a Value, at: At, index: &'a Index<'a>, findings: &mut Vec<Finding>) {
    let steps = array(p, "steps");
    let mut c = StepCheck {
        index,
        inputs: p.get("inputs_schema").unwrap_or(&Value::Null),
        outputs: p.get("outputs_schema").unwrap_or(&Value::Null),
        all_ids: steps.iter().map(|s| str_of(s, "id")).collect(),
        earlier: BTreeMap::new(),
        ancestors: Vec::new(),
        waits_for: BTreeSet::new(),
        produced: BTreeMap::new(),
        problems: Vec::new(),
        unresolved: Vec::new(),
    };
    if steps.is_empty() {
        c.problems.push("has no steps".to_owned());
    }
    c.ancestors = c.waits(steps);
    for (i, step) in steps.iter().enumerate() {
        c.waits_for = c.ancestors[i].clone();
        c.step(step);
    }
    for r in required(c.outputs) {
        if !c.produced.contains_key(r) {
            c.problems.push(format!(
                "required output `{r}` is written by no step (map a step output to `$outputs.{r}`)"
            ));
        }
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
    fn step(&mut self, step: &'a Value) {
        let id = str_of(step, "id");
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
            self.input(id, &t_name, t_in, field, source);
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
        let mapping = step.get("outputs").and_then(Value::as_object);
        for (field, dest) in mapping.into_iter().flatten() {
            self.output(id, &t_name, t_out, field, dest);
        }
        self.earlier.insert(id, t_out);
    }

    /// Each step's ancestors ([`skill_core::steps`]), with a problem for
    /// each `after` entry that is not a step written above its step.
    fn waits(&mut self, steps: &'a [Value]) -> Vec<BTreeSet<&'a str>> {
        let ids: Vec<&'a str> = steps.iter().map(|s| str_of(s, "id")).collect();
        let mut all = Vec::with_capacity(steps.len());
        for (i, step) in steps.iter().enumerate() {
            let id = ids[i];
            let after: Option<Vec<&'a str>> = step.get("after").map(|after| {
                let list = after.as_array().map(Vec::as_slice).unwrap_or_default();
                if after.as_array().is_none() || list.iter().any(|a| !a.is_string()) {
                    self.problems
                        .push(format!("step `{id}`: `after` holds step ids"));
                }
                list.iter().filter_map(Value::as_str).collect()
            });
            let w = waits(&ids, i, after.as_deref());
            for (wait, a) in w.iter().zip(after.iter().flatten()) {
                match wait {
                    Wait::On(_) => {}
                    Wait::Later => self.problems.push(format!(
                        "step `{id}` waits for step `{a}`, which is written after it"
                    )),
                    Wait::Unknown => self
                        .problems
                        .push(format!("step `{id}`: `after` names no step `{a}`")),
                    Wait::Twice => self
                        .problems
                        .push(format!("step `{id}`: `after` names `{a}` twice")),
                }
            }
            all.push(w);
        }
        ancestors(&all)
            .into_iter()
            .map(|set| set.into_iter().map(|j| ids[j]).collect())
            .collect()
    }

    /// Target input `field` read from `source`.
    fn input(
        &mut self,
        id: &str,
        t_name: &str,
        t_in: Option<&'a Value>,
        field: &str,
        source: &'a Value,
    ) {
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
        let Some(from) = self.source(id, field, text) else {
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

    /// Where `text` (read by step `id` for its input `field`) points, when it
    /// points somewhere known.
    fn source(&mut self, id: &str, field: &str, text: &str) -> Option<Slot<'a>> {
        let problem = match Reference::parse(text) {
            None => {
                format!("step `{id}`: `{text}` is not `$inputs.<field>` or `$step.<id>.<field>`")
            }
            Some(Reference::Output(_)) => format!(
                "step `{id}`: input `{field}` reads `{text}`, but `$outputs` is where results go; read `$inputs.<field>` or `$step.<id>.<field>`"
            ),
            Some(Reference::Input(f)) => match Slot::of(self.inputs, f) {
                Some(slot) => return Some(slot),
                None => format!("step `{id}`: `{text}` is not a field of the pipeline's input"),
            },
            Some(Reference::Step(s, _))
                if self.earlier.contains_key(s) && !self.waits_for.contains(s) =>
            {
                format!(
                    "step `{id}`: `{text}` refers to step `{s}`, which `{id}` does not wait for (they may run at the same time): add `{s}` to its `after`"
                )
            }
            Some(Reference::Step(s, f)) => match self.earlier.get(s) {
                Some(Some(out)) => match Slot::of(out, f) {
                    Some(slot) => return Some(slot),
                    None => {
                        format!("step `{id}`: `{text}`: `{f}` is not an output field of step `{s}`")
                    }
                },
                // The earlier step's target is unknown, which is reported there.
                Some(None) => return None,
                None if s == id => format!("step `{id}`: `{text}` refers to the step itself"),
                None if self.all_ids.contains(s) => {
                    format!("step `{id}`: `{text}` refers to step `{s}`, which runs later")
                }
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
        if let Some(first) = self.produced.insert(name, id) {
            self.problems.push(format!(
                "pipeline output `{name}` is written by step `{first}` and by step `{id}`"
            ));
        }
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
}

/// The walk that computes closures, memoized in `done`; a cycle is a finding.
struct Walk<'a, 'f> {
    skills: &'a [Value],
    index: &'a Index<'a>,
    done: BTreeMap<String, Closure>,
    visiting: Vec<String>,
    findings: &'f mut Vec<Finding>,
}

impl Walk<'_, '_> {
    /// The closure of pipeline `p`.
    fn closure(&mut self, p: &Value) -> Closure {
        let me = label(p);
        if let Some(c) = self.done.get(&me) {
            return c.clone();
        }
        if let Some(first) = self.visiting.iter().position(|v| *v == me) {
            let mut cycle = self.visiting[first..].to_vec();
            cycle.push(me.clone());
            // `p` is borrowed from `skills` (through the index).
            let at = self.skills.iter().position(|s| std::ptr::eq(s, p));
            self.findings.push(Finding {
                subject: subject("pipeline", p),
                message: format!("steps form a cycle: {}", cycle.join(" -> ")),
                at: at.map(At::Skills),
                also: None,
                unresolved: false,
            });
            return Closure::default();
        }
        self.visiting.push(me.clone());
        let mut c = Closure::default();
        for step in array(p, "steps") {
            let Some(Ok((t, _))) = step.get("target").map(|t| self.index.target(t)) else {
                c.partial = true;
                continue;
            };
            let part = if str_of(t, "kind") == "pipeline" {
                self.closure(t)
            } else {
                Closure {
                    capabilities: strings(t, "capabilities"),
                    side_effects: strings(t, "side_effects"),
                    partial: false,
                }
            };
            c.partial |= part.partial;
            c.capabilities.extend(part.capabilities);
            c.side_effects.extend(part.side_effects);
        }
        self.visiting.pop();
        self.done.insert(me, c.clone());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_in_three_forms_only() {
        assert_eq!(
            Reference::parse("$inputs.path"),
            Some(Reference::Input("path"))
        );
        assert_eq!(
            Reference::parse("$step.read.content"),
            Some(Reference::Step("read", "content"))
        );
        assert_eq!(
            Reference::parse("$outputs.summary"),
            Some(Reference::Output("summary"))
        );
        for bad in [
            "inputs.path",
            "$inputs.",
            "$inputs.a.b",
            "$step.read",
            "$step..x",
            "$output.x",
        ] {
            assert_eq!(Reference::parse(bad), None, "{bad}");
        }
    }
}
