//! How a pipeline's steps wait for each other, one rule for the macro
//! (`#[pipeline]`'s checks), the registry's rules over files, and the
//! runtime that runs the steps: a step waits for the steps its `after`
//! names, each written above it (so no cycle can be written), or, without
//! `after`, for the step written before it. Error handlers
//! (`on_error(...)`) are written below every step of the flow and wait for
//! nothing: they run when a step they name fails.

use std::collections::BTreeSet;

/// A step's guard: the reference to a boolean (`$inputs.<field>` or
/// `$step.<id>.<field>`), and the value it must have for the step to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// Where the boolean is read.
    pub source: &'static str,
    /// `true` for `when`, `false` for `unless`.
    pub runs_if: bool,
}

impl Guard {
    /// The key the guard is written with: `when` or `unless`.
    pub const fn key(self) -> &'static str {
        if self.runs_if { "when" } else { "unless" }
    }
}

/// A reference in a step's mapping or guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `$inputs.<field>`: a field of the pipeline's input.
    Input(&'a str),
    /// `$step.<id>.<field>`: an output field of an earlier step.
    Step(&'a str, &'a str),
    /// `$outputs.<name>`: a field of the pipeline's output (a destination).
    Output(&'a str),
    /// `$error.<field>`: what an error handler reads of the step that
    /// failed, one of [`Reference::ERROR_FIELDS`].
    Error(&'a str),
}

impl<'a> Reference<'a> {
    /// The fields of `$error`: the failed step's id, its error's message
    /// and its error's code, each a string.
    pub const ERROR_FIELDS: &'static [&'static str] = &["step", "message", "code"];

    /// `None` when `text` is none of the four forms.
    pub fn parse(text: &'a str) -> Option<Reference<'a>> {
        let field = |s: &'a str| (!s.is_empty() && !s.contains('.')).then_some(s);
        if let Some(rest) = text.strip_prefix("$inputs.") {
            return field(rest).map(Reference::Input);
        }
        if let Some(rest) = text.strip_prefix("$outputs.") {
            return field(rest).map(Reference::Output);
        }
        if let Some(rest) = text.strip_prefix("$error.") {
            return field(rest).map(Reference::Error);
        }
        let rest = text.strip_prefix("$step.")?;
        let (id, f) = rest.split_once('.')?;
        Some(Reference::Step(field(id)?, field(f)?))
    }
}

/// One entry of a step's waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The step at this index, written above.
    On(usize),
    /// A step written below: refused, it could close a cycle.
    Later,
    /// No step has this id.
    Unknown,
    /// Named already in the same list.
    Twice,
    /// An error handler: no step waits for one or is handled by one.
    Handler,
}

/// How one step is written: its `after(...)` and its `on_error(...)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape<'a> {
    /// The steps it waits for; `None`: the step written before it.
    pub after: Option<&'a [&'a str]>,
    /// `Some`: an error handler, of these steps.
    pub on_error: Option<&'a [&'a str]>,
}

/// The steps' waits and what each may read, by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Each step's waits ([`waits`]); an error handler's are empty.
    pub waits: Vec<Vec<Wait>>,
    /// Each error handler's `on_error` entries, as waits; empty for a step
    /// of the flow.
    pub handles: Vec<Vec<Wait>>,
    /// The steps each step may read: for a step of the flow, its
    /// [`ancestors`]; for an error handler, its [`handler_reads`].
    pub reads: Vec<BTreeSet<usize>>,
}

impl Plan {
    /// The plan of the steps `ids`, written as `shapes`.
    pub fn new(ids: &[&str], shapes: &[Shape<'_>]) -> Plan {
        let handler: Vec<bool> = shapes.iter().map(|s| s.on_error.is_some()).collect();
        let mark = |w: Vec<Wait>| -> Vec<Wait> {
            w.into_iter()
                .map(|w| match w {
                    Wait::On(j) if handler.get(j) == Some(&true) => Wait::Handler,
                    Wait::Later | Wait::On(_) | Wait::Unknown | Wait::Twice | Wait::Handler => w,
                })
                .collect()
        };
        let mut plan = Plan::default();
        for (i, s) in shapes.iter().enumerate() {
            let own = mark(waits(ids, i, s.after));
            plan.waits.push(if handler[i] { Vec::new() } else { own });
            plan.handles.push(
                s.on_error
                    .map(|h| mark(waits(ids, i, Some(h))))
                    .unwrap_or_default(),
            );
        }
        let flow = ancestors(&plan.waits);
        plan.reads = flow
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if handler[i] {
                    handler_reads(&flow, &on(&plan.handles[i]))
                } else {
                    a.clone()
                }
            })
            .collect();
        plan
    }

    /// The plan of the steps `ids`, each written with its `after` and
    /// `on_error` lists (`None`: not written), in the order of `ids`.
    pub fn of_lists(
        ids: &[&str],
        after: &[Option<Vec<&str>>],
        on_error: &[Option<Vec<&str>>],
    ) -> Plan {
        let shapes: Vec<Shape<'_>> = after
            .iter()
            .zip(on_error)
            .map(|(a, h)| Shape {
                after: a.as_deref(),
                on_error: h.as_deref(),
            })
            .collect();
        Plan::new(ids, &shapes)
    }

    /// Error handler `i`'s steps, by index.
    pub fn handled(&self, i: usize) -> Vec<usize> {
        self.handles.get(i).map(|h| on(h)).unwrap_or_default()
    }
}

/// The steps the waits name, by index.
pub fn on(w: &[Wait]) -> Vec<usize> {
    w.iter()
        .filter_map(|w| match w {
            Wait::On(j) => Some(*j),
            _ => None,
        })
        .collect()
}

/// The waits of step `i` of the steps `ids`: each entry of its `after`, in
/// order, or, without `after`, the step written before it.
pub fn waits(ids: &[&str], i: usize, after: Option<&[&str]>) -> Vec<Wait> {
    let Some(after) = after else {
        return i.checked_sub(1).map(Wait::On).into_iter().collect();
    };
    after
        .iter()
        .enumerate()
        .map(|(k, a)| match ids.iter().position(|id| id == a) {
            None => Wait::Unknown,
            Some(j) if j >= i => Wait::Later,
            Some(_) if after[..k].contains(a) => Wait::Twice,
            Some(j) => Wait::On(j),
        })
        .collect()
}

/// Each step's ancestors: the steps it waits for, and theirs (by index).
/// `waits` holds each step's [`waits`], in the order the steps are written.
pub fn ancestors(waits: &[Vec<Wait>]) -> Vec<BTreeSet<usize>> {
    let mut out: Vec<BTreeSet<usize>> = Vec::with_capacity(waits.len());
    for w in waits {
        let mut all = BTreeSet::new();
        for wait in w {
            if let Wait::On(j) = *wait {
                all.insert(j);
                all.extend(out.get(j).into_iter().flatten().copied());
            }
        }
        out.push(all);
    }
    out
}

/// What an error handler may read of the steps: those that completed
/// before any step it handles started, which are the steps every one of
/// them waits for (`handled` by index, `ancestors` from [`ancestors`]).
pub fn handler_reads(ancestors: &[BTreeSet<usize>], handled: &[usize]) -> BTreeSet<usize> {
    let mut sets = handled.iter().filter_map(|&h| ancestors.get(h));
    let Some(first) = sets.next() else {
        return BTreeSet::new();
    };
    sets.fold(first.clone(), |all, s| {
        all.intersection(s).copied().collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_in_four_forms_only() {
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
        assert_eq!(
            Reference::parse("$error.code"),
            Some(Reference::Error("code"))
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

    #[test]
    fn a_step_waits_for_the_one_before_or_for_what_after_names() {
        let ids = ["a", "b", "c", "d"];
        assert_eq!(waits(&ids, 0, None), []);
        assert_eq!(waits(&ids, 2, None), [Wait::On(1)]);
        assert_eq!(
            waits(&ids, 1, Some(&["a", "c", "z", "a"])),
            [Wait::On(0), Wait::Later, Wait::Unknown, Wait::Twice]
        );
        let all: Vec<Vec<Wait>> = vec![
            waits(&ids, 0, None),
            waits(&ids, 1, Some(&["a"])),
            waits(&ids, 2, Some(&["a"])),
            waits(&ids, 3, Some(&["b", "c"])),
        ];
        let anc = ancestors(&all);
        assert_eq!(anc[2], BTreeSet::from([0]));
        assert_eq!(anc[3], BTreeSet::from([0, 1, 2]));
        assert_eq!(handler_reads(&anc, &[1, 2]), BTreeSet::from([0]));
        assert_eq!(handler_reads(&anc, &[3]), BTreeSet::from([0, 1, 2]));
        assert_eq!(handler_reads(&anc, &[]), BTreeSet::new());
    }

    #[test]
    fn a_handler_waits_for_nothing_and_reads_what_ran_before_its_steps() {
        let ids = ["a", "b", "c", "fix"];
        let shapes = [
            Shape::default(),
            Shape::default(),
            Shape {
                after: Some(&["a", "fix"]),
                on_error: None,
            },
            Shape {
                after: None,
                on_error: Some(&["b", "c"]),
            },
        ];
        let plan = Plan::new(&ids, &shapes);
        assert_eq!(plan.waits[3], []);
        assert_eq!(plan.waits[2], [Wait::On(0), Wait::Later]);
        assert_eq!(plan.handled(3), [1, 2]);
        assert_eq!(plan.reads[3], BTreeSet::from([0]));
        let shapes = [
            Shape::default(),
            Shape {
                after: None,
                on_error: Some(&["a"]),
            },
            Shape {
                after: Some(&["b"]),
                on_error: None,
            },
        ];
        let plan = Plan::new(&ids[..3], &shapes);
        assert_eq!(plan.waits[2], [Wait::Handler]);
    }
}
