//! An agent's KPIs, computed from its run records: `task_success_rate`
//! (succeeded over all runs), `avg_processing_time` (mean duration in
//! milliseconds), and the mean of a declared output field over succeeded
//! runs; each with its status against its thresholds.

use serde::Serialize;
use serde_json::Value;
use skill_core::agent::{KpiStatus, kpi_status};

use crate::agent::contract::{AgentContract, KpiSource};
use crate::agent::registry::AgentRegistry;

/// What KPIs read from one run record of the agent.
#[derive(Clone, Copy, Debug)]
pub struct KpiRun<'a> {
    /// Whether the run succeeded.
    pub succeeded: bool,
    /// How long it took.
    pub duration_us: u64,
    /// The output, when the run succeeded.
    pub output: Option<&'a Value>,
}

/// One KPI's value and status.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KpiValue {
    /// The measure's id.
    pub metric_id: &'static str,
    /// `None` when no run gave a value (no runs, or no output had the field).
    pub value: Option<f64>,
    /// The unit.
    pub unit: &'static str,
    /// The value aimed at.
    pub target: f64,
    /// The warning threshold.
    pub threshold_warning: f64,
    /// The critical threshold.
    pub threshold_critical: f64,
    /// `higher_is_better` or `lower_is_better`.
    pub direction: &'static str,
    /// `None` with no value.
    pub status: Option<KpiStatus>,
    /// Runs the value was computed from.
    pub samples: u64,
}

/// The KPIs of `agent` over `runs` (its records), in declaration order.
pub fn kpis<'a>(agent: &AgentContract, runs: &[KpiRun<'a>]) -> Vec<KpiValue> {
    agent
        .kpis
        .iter()
        .map(|k| {
            let (sum, n) = match k.source {
                KpiSource::SuccessRate => (
                    runs.iter().filter(|r| r.succeeded).count() as f64,
                    runs.len() as u64,
                ),
                KpiSource::ProcessingTime => (
                    runs.iter().map(|r| r.duration_us as f64 / 1000.0).sum(),
                    runs.len() as u64,
                ),
                KpiSource::OutputMean(field) => runs
                    .iter()
                    .filter_map(|r| r.output?.pointer(field)?.as_f64())
                    .fold((0.0, 0), |(s, n), v| (s + v, n + 1)),
            };
            let value = (n > 0).then(|| sum / n as f64);
            KpiValue {
                metric_id: k.metric_id,
                value,
                unit: k.unit,
                target: k.target,
                threshold_warning: k.threshold_warning,
                threshold_critical: k.threshold_critical,
                direction: k.direction.as_str(),
                status: value
                    .map(|v| kpi_status(k.direction, v, k.threshold_warning, k.threshold_critical)),
                samples: n,
            }
        })
        .collect()
}

impl AgentRegistry {
    /// Each agent's KPIs over `runs`, run records of any jobs as (the
    /// record's skill or agent name, what KPIs read): each agent reads its own.
    pub fn kpis<'a>(&self, runs: &[(&str, KpiRun<'a>)]) -> Vec<(&'static str, Vec<KpiValue>)> {
        self.agents()
            .iter()
            .map(|a| {
                let c = a.contract();
                let own: Vec<KpiRun<'a>> = runs
                    .iter()
                    .filter(|(name, _)| *name == c.id)
                    .map(|(_, run)| *run)
                    .collect();
                (c.id, kpis(c, &own))
            })
            .collect()
    }
}
