//! Conditions in every form the macro accepts: typed closures (compiled as
//! functions), an untyped parameter, a block body with a return type, `Self`
//! in the body, and a path to a function (which takes the caller too); each checked through the typed
//! condition slices.

use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub n: usize,
}

fn short(i: &In, _caller: &Caller) -> bool {
    i.x.len() < 10
}

/// Count the characters.
#[skill(
    precondition(code = "EMPTY", message = "x must not be empty", check = |i: &In| !i.x.is_empty()),
    precondition(code = "UNTYPED", message = "x is ascii", check = |i| In::is_ascii(i)),
    precondition(code = "SHORT", message = "x is short", check = short),
    precondition(code = "ROLE", message = "any caller", check = |_i: &In, c: &Caller| -> bool { let _ = c; true }),
    postcondition(check = |o: &Out| o.n < 10),
    validation_rule(id = "named", severity = "warning", message = "the skill has a name",
                    check = |_i: &In, _o: &Out| !<Self as Skill>::MANIFEST.name.is_empty()),
)]
pub async fn count(input: In) -> Out {
    Out { n: input.x.len() }
}

impl In {
    fn is_ascii(&self) -> bool {
        self.x.is_ascii()
    }
}

fn main() {
    use skill_runtime::Skill;
    let good = In { x: "abc".into() };
    let empty = In { x: String::new() };
    let caller = Caller::default();
    let pre = <count as Skill>::PRECONDITIONS;
    assert_eq!(pre.len(), 4);
    assert!(pre.iter().all(|p| p.check.holds(&good, &caller)));
    assert!(!pre[0].check.holds(&empty, &caller));
    assert!(!pre[1].check.holds(&In { x: "é".into() }, &caller));
    assert!(!pre[2].check.holds(&In { x: "0123456789".into() }, &caller));
    let post = <count as Skill>::POSTCONDITIONS;
    assert!(post[0].check.holds(&good, &Out { n: 3 }));
    assert!(!post[0].check.holds(&good, &Out { n: 12 }));
    let rules = <count as Skill>::VALIDATION_RULES;
    assert!(rules[0].check.holds(&good, &Out { n: 3 }));
}
