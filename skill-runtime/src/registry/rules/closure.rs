//! Each pipeline's capability closure: what its steps reach, through
//! nested pipelines, with a cycle through them a finding.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::registry::json::{array, label, str_of, strings};
use crate::registry::rules::finding::{At, Finding, subject};
use crate::registry::rules::index::Index;

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

/// The walk that computes closures, memoized in `done`; a cycle is a finding.
pub(super) struct Walk<'a, 'f> {
    pub(super) skills: &'a [Value],
    pub(super) index: &'a Index<'a>,
    pub(super) done: BTreeMap<String, Closure>,
    pub(super) visiting: Vec<String>,
    pub(super) findings: &'f mut Vec<Finding>,
}

impl Walk<'_, '_> {
    /// The closure of pipeline `p`.
    pub(super) fn closure(&mut self, p: &Value) -> Closure {
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
