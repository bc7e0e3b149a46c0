//! Conditions in every form the macro accepts: typed closures (compiled as
//! functions), an untyped parameter, a block body with a return type, `Self`
//! in the body, paths to functions of either form (the input alone, or with
//! the caller; the output alone, or the input and the output), and a closure
//! whose types are written as other paths to the same types; each checked
//! through the typed condition slices.

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

fn not_blank(i: &In) -> bool {
    !i.x.trim().is_empty()
}

fn small(o: &Out) -> bool {
    o.n < 100
}

fn counted(i: &In, o: &Out) -> bool {
    i.x.len() == o.n
}

/// Count the characters.
#[skill(
    precondition(code = "EMPTY", message = "x must not be empty", check = |i: &In| !i.x.is_empty()),
    precondition(code = "UNTYPED", message = "x is ascii", check = |i| In::is_ascii(i)),
    precondition(code = "SHORT", message = "x is short", check = short),
    precondition(code = "ROLE", message = "any caller", check = |_i: &In, c: &Caller| -> bool { let _ = c; true }),
    precondition(code = "BLANK", message = "x is not blank", check = not_blank),
    postcondition(check = |o: &Out| o.n < 10),
    postcondition(check = small),
    postcondition(check = |i: &self::In, o: &crate::Out| i.x.len() >= o.n),
    validation_rule(id = "counted", severity = "error", message = "n counts x", check = counted),
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
    assert_eq!(pre.len(), 5);
    assert!(!pre[4].check.holds(&In { x: "  ".into() }, &caller));
    assert!(pre.iter().all(|p| p.check.holds(&good, &caller)));
    assert!(!pre[0].check.holds(&empty, &caller));
    assert!(!pre[1].check.holds(&In { x: "é".into() }, &caller));
    assert!(!pre[2].check.holds(&In { x: "0123456789".into() }, &caller));
    let post = <count as Skill>::POSTCONDITIONS;
    assert!(post[0].check.holds(&good, &Out { n: 3 }));
    assert!(!post[0].check.holds(&good, &Out { n: 12 }));
    assert!(!post[1].check.holds(&good, &Out { n: 100 }));
    assert!(post[2].check.holds(&good, &Out { n: 3 }));
    assert!(!post[2].check.holds(&good, &Out { n: 4 }));
    let rules = <count as Skill>::VALIDATION_RULES;
    assert!(rules[0].check.holds(&good, &Out { n: 3 }));
    assert!(!rules[0].check.holds(&good, &Out { n: 2 }));
    assert!(rules[1].check.holds(&good, &Out { n: 3 }));
}
