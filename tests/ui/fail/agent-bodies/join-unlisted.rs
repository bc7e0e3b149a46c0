//! An agent running an unlisted skill inside `join!`.

use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub y: String,
    pub confidence: f64,
}

/// Executors run it.
#[skill(reusable_by(executor = "execute"))]
pub async fn listed(input: In) -> Out {
    Out { y: input.x, confidence: 1.0 }
}

/// Executors run it too; the agents below do not list it.
#[skill(reusable_by(executor = "execute"), ambient(file_write = "writes its scratch file"))]
pub async fn unlisted(input: In) -> Out {
    let _ = std::fs::write("scratch", &input.x);
    Out { y: input.x, confidence: 1.0 }
}

/// The agent.
#[agent(id = "agent.test.a", name = "A", role = "executor", domain = "core", version = "1.0.0", owner = "t", skills(listed))]
pub async fn a(ctx: AgentCtx, input: In) -> Out {
    let (a, _) = tokio::join!(ctx.run::<unlisted>(In { x: input.x.clone() }), async { 1 });
    a.unwrap()
}

fn main() {}
