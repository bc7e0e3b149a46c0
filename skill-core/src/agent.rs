//! The words of an agent contract (the AI-COS agent model, seed 002): a
//! tool's permission, a long-term memory's storage, a KPI's direction.

/// The longest an escalation may wait for its target, in hours (30 days):
/// an escalation nobody answers for longer is a stuck run. The least is 1.
pub const MAX_TIMEOUT_HOURS: u32 = 30 * 24;

/// How many hours an escalation written with `hours` waits: `hours` within
/// `1..=MAX_TIMEOUT_HOURS` (0, what an envelope that leaves it out says,
/// waits the least), so every path waits the same, and never forever.
pub fn timeout_hours(hours: u32) -> u32 {
    hours.clamp(1, MAX_TIMEOUT_HOURS)
}

words! {
    /// What an agent may do with an MCP tool (the seed's `Permission`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ToolPermission {
        Read = "read",
        Write = "write",
        Execute = "execute",
    }
}

words! {
    /// Where an agent's long-term memory persists (the seed's `Storage`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Storage {
        Supabase = "supabase",
        Redis = "redis",
        Vector = "vector",
    }
}

words! {
    /// Which way a KPI improves: its thresholds are ordered accordingly
    /// (`higher`: target > warning > critical; `lower`: the reverse).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Direction {
        Higher = "higher",
        Lower = "lower",
    }
}

words! {
    /// A KPI's value against its thresholds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub enum KpiStatus {
        Ok = "ok",
        Warning = "warning",
        Critical = "critical",
    }
}

/// Whether a KPI's thresholds are ordered for its direction: strictly, so
/// that each status covers some values.
pub fn thresholds_ordered(direction: Direction, target: f64, warning: f64, critical: f64) -> bool {
    match direction {
        Direction::Higher => target > warning && warning > critical,
        Direction::Lower => target < warning && warning < critical,
    }
}

/// `value`'s status: a value at or past a threshold has that threshold's
/// status (`higher`: at or below `critical` is critical, at or below
/// `warning` is a warning; `lower`: at or above).
pub fn kpi_status(direction: Direction, value: f64, warning: f64, critical: f64) -> KpiStatus {
    let past = |threshold: f64| match direction {
        Direction::Higher => value <= threshold,
        Direction::Lower => value >= threshold,
    };
    if past(critical) {
        KpiStatus::Critical
    } else if past(warning) {
        KpiStatus::Warning
    } else {
        KpiStatus::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_direction() {
        use Direction::*;
        use KpiStatus::*;
        assert_eq!(kpi_status(Higher, 0.96, 0.85, 0.70), Ok);
        assert_eq!(kpi_status(Higher, 0.85, 0.85, 0.70), Warning);
        assert_eq!(kpi_status(Higher, 0.70, 0.85, 0.70), Critical);
        assert_eq!(kpi_status(Lower, 4_000.0, 10_000.0, 30_000.0), Ok);
        assert_eq!(kpi_status(Lower, 12_000.0, 10_000.0, 30_000.0), Warning);
        assert_eq!(kpi_status(Lower, 30_000.0, 10_000.0, 30_000.0), Critical);
        assert!(thresholds_ordered(Higher, 0.95, 0.85, 0.70));
        assert!(!thresholds_ordered(Higher, 0.95, 0.70, 0.85));
        assert!(thresholds_ordered(Lower, 5_000.0, 10_000.0, 30_000.0));
        assert!(!thresholds_ordered(Lower, 0.95, 0.85, 0.70));
    }
}
