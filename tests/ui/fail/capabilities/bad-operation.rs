use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

// One wrong word is one error, at the word; the skills that use the
// capability, its side effect and its resource add none.

/// Purge notes.
#[capability(id = "notes.purge", effect = "file", operation = "purge")]
pub struct NotesPurge;

/// Purge.
#[skill(
    capabilities(NotesPurge),
    side_effects(NotesPurge(target = "notes", reversible = true, description = "Purges")),
)]
pub async fn purge(ctx: Ctx, input: In) -> Out {
    let _ = ctx.resource::<NotesPurge>();
    Out { y: input.x }
}

/// Calls purge.
#[skill(calls(purge), capabilities(NotesPurge),
    side_effects(NotesPurge(target = "notes", reversible = true, description = "Purges")))]
pub async fn outer(ctx: Ctx, input: In) -> Out {
    let _ = purge(&ctx, input).await;
    Out { y: String::new() }
}

fn main() {}
