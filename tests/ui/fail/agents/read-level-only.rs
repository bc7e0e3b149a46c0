use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// Only executors may run this.
#[skill(reusable_by(executor = "execute"))]
pub async fn exec_only(input: In) -> Out {
    Out { y: input.x }
}

/// Analyzers may read it, not execute it.
#[skill(reusable_by(executor = "execute", analyzer = "read"))]
pub async fn read_for_analyzers(input: In) -> Out {
    Out { y: input.x }
}

/// An analyzer listing a skill analyzers may only read.
#[agent(id = "agent.test.analyze", name = "A", role = "analyzer", domain = "core", version = "1.0.0", owner = "t",
    skills(read_for_analyzers))]
pub async fn analyze(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
