//! Agents as the contract allows: every listed skill run, a file written
//! because a listed skill may write it, output pointers in camelCase for a
//! `rename_all` output, and a crate that forbids unsafe code.
#![forbid(unsafe_code)]
#![allow(dead_code)]

use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Out {
    pub y: String,
    pub confidence_score: f64,
    pub human_required: bool,
}

/// Write files.
#[capability(id = "report.write", effect = "file", operation = "write")]
pub struct ReportWrite;

/// Executors run it.
#[skill(reusable_by(executor = "execute"))]
pub async fn first(input: In) -> Out {
    Out { y: input.x, confidence_score: 1.0, human_required: false }
}

/// Executors run it; it writes reports.
#[skill(reusable_by(executor = "execute"), capabilities(ReportWrite),
        side_effects(ReportWrite(target = "reports/", reversible = false)), destructive)]
pub async fn second(input: In) -> Out {
    Out { y: input.x, confidence_score: 0.5, human_required: false }
}

/// Runs both, and writes what a listed skill may write.
#[agent(id = "agent.test.both", name = "Both", role = "executor", domain = "core",
        version = "1.0.0", owner = "t", skills(first, second),
        pre_condition(code = "EMPTY", check = |i: &In| !i.x.is_empty()),
        post_condition(code = "LOST", check = |i: &In, o: &Out| o.y.len() >= i.x.len()),
        escalation(triggers(confidence_below(field = "/confidenceScore", value = 0.7),
                            human_required(field = "/humanRequired")),
                   target_agent = "agent.test.next", timeout_hours = 1),
        kpi(metric_id = "avg_confidence", field = "/confidenceScore", target = 0.9, warning = 0.7,
            critical = 0.5, unit = "ratio", direction = "higher"))]
pub async fn both(ctx: AgentCtx, input: In) -> Out {
    let a = ctx.run::<first>(In { x: input.x.clone() }).await.unwrap();
    let b = ctx.run::<second>(input).await.unwrap();
    let _ = std::fs::write("reports/last.txt", &a.y);
    Out { y: a.y + &b.y, confidence_score: b.confidence_score, human_required: false }
}

/// Parses an address: data, not the network.
#[skill]
pub async fn address(input: In) -> In {
    let ok = input.x.parse::<std::net::IpAddr>().is_ok()
        || input.x.parse::<std::net::SocketAddr>().is_ok();
    In { x: ok.to_string() }
}

fn main() {}
