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

/// A KPI without its direction.
#[agent(id = "agent.test.a", name = "A", role = "executor", domain = "core", version = "1.0.0", owner = "t",
    kpi(metric_id = "task_success_rate", target = 0.95, warning = 0.85, critical = 0.7, unit = "percentage"))]
pub async fn a(input: In) -> Out {
    Out { y: input.x }
}

fn main() {}
