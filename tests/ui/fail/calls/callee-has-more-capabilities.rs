use skill_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Read the store.
#[capability(id = "store.read", effect = "database", operation = "read")]
pub struct StoreRead;

/// Write the store.
#[capability(id = "store.write", effect = "database", operation = "write")]
pub struct StoreWrite;

/// Write something.
#[skill(capabilities(StoreRead, StoreWrite), side_effects(StoreWrite(target = "t", reversible = true)))]
pub async fn writer(input: In) -> Out {
    Out { y: input.x }
}

/// Only reads, but calls a writer.
#[skill(capabilities(StoreRead), calls(writer))]
pub async fn reader(ctx: Ctx, input: In) -> Out {
    match ctx.call::<writer>(input).await {
        Ok(out) => out,
        Err(never) => match never {},
    }
}

fn main() {}
