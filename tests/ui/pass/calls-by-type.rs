//! The common forms of calling listed skills: direct, joined, through a
//! closure, a function pointer, a helper given the context (concrete or
//! generic), `ctx.call`, `ctx.all`; and an application context calling any
//! skill.
#![allow(dead_code)]

use skill_runtime::prelude::*;
use skill_runtime::{Authority, capability::Calls};

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

/// Echo.
#[skill]
pub async fn peek(input: Text) -> Text {
    input
}

/// Echo, loudly.
#[skill]
pub async fn shout(input: Text) -> Result<Text, Never> {
    Ok(Text { text: input.text.to_uppercase() })
}

/// Calls both, every way.
#[skill(calls(peek, shout))]
pub async fn both(ctx: Ctx, input: Text) -> Text {
    let t = peek(&ctx, input).await;
    let (a, b) = tokio::join!(peek(&ctx, Text { text: t.text.clone() }), shout(&ctx, t));
    let b = b.unwrap();
    // A closure captures the context (one that took it as a parameter would
    // return a future bound to a lifetime the closure cannot name).
    let f = |t: Text| peek(&ctx, t);
    let a = f(a).await;
    let a = pointed(&ctx, a).await;
    let steps = [peek, peek];
    let a = steps[1](&ctx, a).await;
    let a = helper(&ctx, a).await;
    let a = generic(&ctx, a).await;
    let b = ctx.call::<shout>(b).await.unwrap();
    // Concurrent calls within this one: the call awaits them all.
    let echoed = ctx
        .all([Text { text: "x".into() }, Text { text: "y".into() }].map(|t| peek(&ctx, t)))
        .await;
    assert_eq!(echoed.len(), 2);
    Text { text: format!("{}{}", a.text, b.text) }
}

/// A function pointer to a skill's function names the call's lifetime (its
/// future lives as long as the call, and no longer).
async fn pointed<'c>(ctx: &Ctx<'c, both>, t: Text) -> Text {
    let pointer: fn(&dyn Authority<'c, peek>, Text) -> _ = peek;
    pointer(ctx, t).await
}

async fn helper(ctx: &Ctx<'_, both>, t: Text) -> Text {
    peek(ctx, t).await
}

async fn generic<S: Calls<peek>>(ctx: &Ctx<'_, S>, t: Text) -> Text {
    peek(ctx, t).await
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let registry = std::sync::Arc::new(skill_runtime::Registry::from_inventory().unwrap());
    let runtime = skill_runtime::Runtime::builder(registry).build().unwrap();
    let out = rt.block_on(both(&runtime.context(), Text { text: "a".into() }));
    assert_eq!(out.text, "aA");
}
