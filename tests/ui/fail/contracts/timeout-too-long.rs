//! An escalation whose target has longer than 30 days: a stuck run.

use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// A listed skill.
#[skill(reusable_by(executor = "execute"))]
pub async fn listed(input: In) -> Out {
    Out { y: input.x }
}

/// Waits for ever.
#[agent(id = "agent.test.a", name = "A", role = "executor", domain = "core", version = "1.0.0", owner = "t", skills(listed), escalation(triggers(error_count_above = 3), target_agent = "agent.test.b", timeout_hours = 100000))]
pub async fn a(ctx: AgentCtx, input: In) -> Out {
    ctx.run::<listed>(input).await.unwrap()
}

fn main() {}
