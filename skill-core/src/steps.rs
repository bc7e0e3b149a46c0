//! How a pipeline's steps wait for each other, one rule for the macro
//! (`#[pipeline]`'s checks), the registry's rules over files, and the
//! runtime that runs the steps: a step waits for the steps its `after`
//! names, each written above it (so no cycle can be written), or, without
//! `after`, for the step written before it.

use std::collections::BTreeSet;

/// One entry of a step's waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The step at this index, written above.
    On(usize),
    /// A step written below: refused, it could close a cycle.
    Later,
    /// No step has this id.
    Unknown,
    /// Named already in the same `after`.
    Twice,
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

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
