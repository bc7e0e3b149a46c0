//! Latency and failures: per skill over the recent runs (a table and
//! bars), and for one skill (or all) over time: p50, p95 and p99 and the
//! failure rate in equal slices of the time the recent runs cover, drawn as
//! plain SVG.

use std::fmt::Write;

use super::html::{esc, micros, table, time, url_part};
use super::pages::{Shown, unavailable};
use super::service::{Shared, Viewer};
use crate::agent::kpi::{KpiRun, kpis};
use crate::exec::stats::{SkillStats, stats_from_records};
use crate::queue::records::{RecordQuery, Timing};

/// The most recent records the statistics are drawn from.
pub const RECENT: usize = 5000;

/// Slices of the time line.
const SLICES: usize = 24;

impl Shared {
    /// `/stats?skill=`: the recent runs `viewer` may see, per skill, and
    /// over time for the skill chosen (every skill's runs by default).
    pub(super) async fn stats_page(&self, viewer: &Viewer, query: &[(String, String)]) -> Shown {
        let all = self
            .console
            .fleet
            .timings(RECENT)
            .await
            .map_err(unavailable)?;
        let seen: Vec<&Timing> = all
            .iter()
            .filter(|t| viewer.sees_runs_of(t.user.as_deref()))
            .collect();
        let chosen = query
            .iter()
            .find(|(k, _)| k == "skill")
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty());
        let stats = stats_from_records(
            seen.iter()
                .map(|t| (t.skill.as_str(), t.duration_us, t.status != "succeeded")),
        );
        let base = &self.console.base;
        let mut body = String::new();
        let of: Vec<&Timing> = seen
            .iter()
            .copied()
            .filter(|t| chosen.is_none_or(|c| t.skill == c))
            .collect();
        let _ = write!(
            body,
            "<h2>Over time: {}</h2>{}",
            esc(chosen.unwrap_or("every skill")),
            over_time(&of)
        );
        body.push_str("<h2>Per skill</h2>");
        body.push_str(&bars(&stats));
        let rows: Vec<Vec<String>> = stats
            .iter()
            .map(|s| {
                vec![
                    format!(
                        "<a href=\"{base}/stats?skill={}\">{}</a>",
                        url_part(&s.skill),
                        esc(&s.skill)
                    ),
                    s.runs.to_string(),
                    format!(
                        "{} ({:.1}%)",
                        s.failures,
                        s.failures as f64 * 100.0 / s.runs.max(1) as f64
                    ),
                    micros(s.p50_us),
                    micros(s.p90_us),
                    micros(s.p99_us),
                    micros(s.max_us),
                ]
            })
            .collect();
        body.push_str(&table(
            &["skill", "runs", "failed", "p50", "p90", "p99", "max"],
            &rows,
            "No run yet.",
        ));
        let _ = write!(
            body,
            "<p class=muted>From the {} most recent runs you may see (of the {RECENT} most recent \
             runs of the fleet).</p>",
            seen.len()
        );
        body.push_str(&self.agents_kpis(viewer).await?);
        Ok(("Latency and failures".to_owned(), body))
    }
}

/// An agent's runs its KPIs are computed from, at most.
const KPI_RUNS: usize = 1000;

impl Shared {
    /// Each agent's KPIs over its newest runs the viewer may see, with
    /// their status against the agent's thresholds.
    async fn agents_kpis(&self, viewer: &Viewer) -> Result<String, (hyper::StatusCode, String)> {
        let Some(agents) = &self.console.agents else {
            return Ok(String::new());
        };
        let mut rows = Vec::new();
        for agent in agents.agents() {
            let id = agent.contract().id;
            let mut query = RecordQuery {
                skill: Some(id.to_owned()),
                limit: KPI_RUNS,
                ..RecordQuery::default()
            };
            if !viewer.sees_all {
                match &viewer.caller.user_id {
                    Some(own) => query.user = Some(own.clone()),
                    None => continue,
                }
            }
            let page = self
                .console
                .fleet
                .records_page(&query)
                .await
                .map_err(unavailable)?;
            let records: Vec<serde_json::Value> = page
                .records
                .iter()
                .filter_map(|t| serde_json::from_str(t).ok())
                .collect();
            let runs: Vec<(&str, KpiRun<'_>)> = records
                .iter()
                .map(|r| {
                    let run = KpiRun {
                        succeeded: r["status"] == "succeeded",
                        duration_us: r["duration_us"].as_u64().unwrap_or(0),
                        output: r.get("output"),
                    };
                    (id, run)
                })
                .collect();
            for k in kpis(
                agent.contract(),
                &runs.iter().map(|(_, r)| *r).collect::<Vec<_>>(),
            ) {
                rows.push(vec![
                    esc(id),
                    esc(k.metric_id),
                    k.value.map_or("—".to_owned(), |v| format!("{v:.3}")),
                    esc(k.unit),
                    format!(
                        "{} (warning {}, critical {})",
                        k.target, k.threshold_warning, k.threshold_critical
                    ),
                    k.status
                        .map_or("no data".to_owned(), |s| badge_of(s.as_str())),
                    k.samples.to_string(),
                ]);
            }
        }
        Ok(format!(
            "<h2>Agents' KPIs</h2>{}",
            table(
                &["agent", "kpi", "value", "unit", "target", "status", "runs"],
                &rows,
                "No agent.",
            )
        ))
    }
}

/// A KPI's status as a badge.
fn badge_of(status: &str) -> String {
    format!("<span class=\"badge kpi-{0}\">{0}</span>", esc(status))
}

/// The `q`th quantile of `sorted` (nearest rank).
fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// p50, p95 and p99 of `runs` as three lines over [`SLICES`] equal slices of
/// the time they cover, on a logarithmic scale, with each slice's failure
/// rate as a bar below (plain SVG).
fn over_time(runs: &[&Timing]) -> String {
    let timed: Vec<&&Timing> = runs.iter().filter(|t| t.completed_ms > 0).collect();
    let (Some(first), Some(last)) = (
        timed.iter().map(|t| t.completed_ms).min(),
        timed.iter().map(|t| t.completed_ms).max(),
    ) else {
        return "<p class=muted>No run yet.</p>".to_owned();
    };
    let span = (last - first).max(1);
    let mut slices: Vec<(Vec<u64>, u64)> = vec![(Vec::new(), 0); SLICES];
    for t in &timed {
        let i = (((t.completed_ms - first) as u128 * SLICES as u128 / (span as u128 + 1)) as usize)
            .min(SLICES - 1);
        slices[i].0.push(t.duration_us.max(1));
        slices[i].1 += u64::from(t.status != "succeeded");
    }
    for (durations, _) in &mut slices {
        durations.sort_unstable();
    }
    let lines: [(f64, &str, &str); 3] = [
        (0.50, "p50", "#2454d6"),
        (0.95, "p95", "#7f9ceb"),
        (0.99, "p99", "#b42318"),
    ];
    let max = slices
        .iter()
        .map(|(d, _)| quantile(d, 0.99))
        .max()
        .unwrap_or(1)
        .max(1);
    let min = slices
        .iter()
        .filter(|(d, _)| !d.is_empty())
        .map(|(d, _)| quantile(d, 0.5))
        .min()
        .unwrap_or(1)
        .clamp(1, max);
    let (left, width, top, height, fail_h) = (70.0, 720.0, 10.0, 200.0, 50.0);
    let lo = (min as f64).log10().floor();
    let hi = ((max as f64).log10().ceil()).max(lo + 1.0);
    let y_of = |us: u64| top + height - ((us as f64).log10() - lo) / (hi - lo) * height;
    let x_of = |i: usize| left + (i as f64 + 0.5) * width / SLICES as f64;
    let total_h = top + height + 30.0 + fail_h + 30.0;
    let mut svg = format!(
        "<svg role=img aria-label=\"latency over time\" class=over-time width=\"{}\" height=\"{total_h}\" \
         viewBox=\"0 0 {} {total_h}\">",
        left + width + 60.0,
        left + width + 60.0
    );
    // The scale: one line per power of ten.
    let mut decade = lo;
    while decade <= hi {
        let y = top + height - (decade - lo) / (hi - lo) * height;
        let _ = write!(
            svg,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e4e7ec\"/>\
             <text x=\"0\" y=\"{:.1}\">{}</text>",
            left + width,
            y + 4.0,
            micros(10f64.powf(decade) as u64)
        );
        decade += 1.0;
    }
    for (q, name, color) in lines {
        let points: Vec<String> = slices
            .iter()
            .enumerate()
            .filter(|(_, (d, _))| !d.is_empty())
            .map(|(i, (d, _))| format!("{:.1},{:.1}", x_of(i), y_of(quantile(d, q))))
            .collect();
        let _ = write!(
            svg,
            "<polyline data-line=\"{name}\" points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>",
            points.join(" ")
        );
    }
    for (i, (d, failed)) in slices.iter().enumerate() {
        if d.is_empty() {
            continue;
        }
        let rate = *failed as f64 / d.len() as f64;
        let h = (rate * fail_h).max(if *failed > 0 { 1.0 } else { 0.0 });
        let base_y = top + height + 30.0 + fail_h;
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#b42318\">\
             <title>{} runs, {failed} failed</title></rect>",
            x_of(i) - width / SLICES as f64 * 0.35,
            base_y - h,
            width / SLICES as f64 * 0.7,
            d.len()
        );
    }
    let _ = write!(
        svg,
        "<text x=\"0\" y=\"{:.1}\">failed</text><text x=\"{left}\" y=\"{:.1}\">{}</text>\
         <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></svg>",
        top + height + 30.0 + fail_h - 4.0,
        total_h - 4.0,
        time(std::time::UNIX_EPOCH + std::time::Duration::from_millis(first)),
        left + width,
        total_h - 4.0,
        time(std::time::UNIX_EPOCH + std::time::Duration::from_millis(last)),
    );
    svg.push_str(
        "<p class=muted>Lines: p50 (dark blue), p95 (light blue), p99 (red), on a logarithmic \
         scale; bars: the share of runs that failed in each slice.</p>",
    );
    svg
}

/// p50, p90 and p99 per skill as horizontal bars (plain SVG), scaled to the
/// slowest p99.
fn bars(stats: &[SkillStats]) -> String {
    if stats.is_empty() {
        return String::new();
    }
    let max = stats.iter().map(|s| s.p99_us).max().unwrap_or(1).max(1) as f64;
    let (label_w, bar_w, row_h) = (220.0, 520.0, 34.0);
    let height = row_h * stats.len() as f64 + 24.0;
    let width = label_w + bar_w + 120.0;
    let mut svg = format!(
        "<svg role=img aria-label=\"latency per skill\" class=per-skill width=\"{width}\" \
         height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    for (i, s) in stats.iter().enumerate() {
        let y = row_h * i as f64 + 4.0;
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\">{}</text>",
            y + 16.0,
            esc(&s.skill)
        );
        for (j, (us, color, name)) in [
            (s.p99_us, "#c7d4f7", "p99"),
            (s.p90_us, "#7f9ceb", "p90"),
            (s.p50_us, "#2454d6", "p50"),
        ]
        .iter()
        .enumerate()
        {
            let w = (*us as f64 / max * bar_w).max(1.0);
            let _ = write!(
                svg,
                "<rect x=\"{label_w}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" fill=\"{color}\">\
                 <title>{name}: {}</title></rect>",
                y + 2.0 + j as f64 * 2.0,
                22.0 - j as f64 * 4.0,
                micros(*us)
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            label_w + bar_w + 8.0,
            y + 16.0,
            micros(s.p99_us)
        );
    }
    svg.push_str("</svg><p class=muted>Dark: p50; middle: p90; light: p99.</p>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), 50);
        assert_eq!(quantile(&v, 0.95), 95);
        assert_eq!(quantile(&v, 0.99), 99);
        assert_eq!(quantile(&[7], 0.99), 7);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    #[test]
    fn runs_over_time_draw_three_lines_and_the_failures() {
        let runs: Vec<Timing> = (0..200)
            .map(|i| Timing {
                skill: "echo".to_owned(),
                status: if i % 10 == 0 { "failed" } else { "succeeded" }.to_owned(),
                duration_us: 100 + i * 10,
                completed_ms: 1_000_000 + i * 50,
                user: None,
            })
            .collect();
        let refs: Vec<&Timing> = runs.iter().collect();
        let svg = over_time(&refs);
        for line in ["p50", "p95", "p99"] {
            assert!(svg.contains(&format!("data-line=\"{line}\"")), "{line}");
        }
        assert!(svg.contains("failed</title>"));
        assert!(over_time(&[]).contains("No run yet"));
    }
}
