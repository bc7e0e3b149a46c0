use skill_runtime::prelude::*;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Num {
    pub n: i64,
}

/// Double a number.
#[skill(reusable_by(executor = "execute"))]
pub async fn double(input: Num) -> Num {
    Num { n: input.n * 2 }
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum Failed {
    /// It failed.
    #[error("failed")]
    Failed,
}

static RUN: std::sync::OnceLock<AgentCtx<'static, keeper>> = std::sync::OnceLock::new();

/// Keeps its run's context.
#[agent(
    id = "agent.test.keeper",
    name = "Keeper",
    role = "executor",
    domain = "core",
    version = "1.0.0",
    owner = "tests",
    skills(double)
)]
pub async fn keeper(ctx: AgentCtx, input: Num) -> Result<Num, Failed> {
    let _ = RUN.set(ctx);
    Ok(input)
}

fn main() {}
