//! Durable runs (pipelines, agents): the latest runs the fleet's run store
//! keeps, one run's nodes as a timeline with its errors, budget and
//! artifacts, and an artifact opened or downloaded.

use std::fmt::Write;

use hyper::{Response, StatusCode};

use super::html::{badge, esc, json_block, micros, table, url_decode, url_part};
use super::pages::{Shown, unavailable};
use super::service::{Shared, Viewer, plain};
use crate::mcp::http::reply::Body;
use crate::model::graph::{GraphState, GraphStatus};

/// Durable runs listed.
const LISTED: usize = 50;

fn status_word(status: GraphStatus) -> &'static str {
    match status {
        GraphStatus::Running => "running",
        GraphStatus::Succeeded => "succeeded",
        GraphStatus::Failed => "failed",
        GraphStatus::Skipped => "skipped",
    }
}

/// Microseconds since the epoch of an RFC 3339 time.
fn micros_of(time: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(time)
        .ok()
        .map(|t| t.timestamp_micros())
}

impl Shared {
    /// Whether `viewer` may see `state`: an admin, or the caller of its job.
    fn sees_run(viewer: &Viewer, state: &GraphState) -> bool {
        viewer.sees_runs_of(state.job.caller.user_id.as_deref())
    }

    /// `/pipelines`: the latest durable runs, newest first.
    pub(super) async fn pipelines_page(&self, viewer: &Viewer) -> Shown {
        let store = self.console.fleet.run_store();
        let states = store.recent(LISTED).await.map_err(unavailable)?;
        let base = &self.console.base;
        let rows: Vec<Vec<String>> = states
            .iter()
            .filter(|s| Shared::sees_run(viewer, s))
            .map(|s| {
                let id = s.job.job_id.as_str();
                vec![
                    format!(
                        "<a href=\"{base}/pipelines/{}\"><code>{}</code></a>",
                        url_part(id),
                        esc(id)
                    ),
                    esc(&s.job.skill),
                    badge(status_word(s.status)),
                    format!("{} of {}", s.visited_nodes.len(), s.nodes.len()),
                    esc(s.current_node.as_deref().unwrap_or("—")),
                    s.retry_count.to_string(),
                    esc(s.nodes.first().map_or("—", |n| n.started_at.as_str())),
                ]
            })
            .collect();
        let body = table(
            &[
                "run",
                "pipeline",
                "status",
                "nodes done",
                "at",
                "resumed",
                "started",
            ],
            &rows,
            "No durable run is kept.",
        );
        Ok(("Durable runs".to_owned(), body))
    }

    /// `/pipelines/ID`: the run's nodes on one time line, its errors, what
    /// it spent, its artifacts, its input and output.
    pub(super) async fn pipeline_page(&self, viewer: &Viewer, id: &str) -> Shown {
        let id = url_decode(id).unwrap_or_default();
        let store = self.console.fleet.run_store();
        let state = store.load(&id).await.map_err(unavailable)?;
        let Some(state) = state.filter(|s| Shared::sees_run(viewer, s)) else {
            return Err((
                StatusCode::NOT_FOUND,
                format!("no durable run {id} among the runs you may see"),
            ));
        };
        let base = &self.console.base;
        let mut body = String::from("<table>");
        for (k, v) in [
            ("pipeline", esc(&state.job.skill)),
            ("status", badge(status_word(state.status))),
            ("caller", esc(&state.job.caller.principal())),
            ("nodes done", esc(&state.visited_nodes.join(" → "))),
            ("at", esc(state.current_node.as_deref().unwrap_or("—"))),
            ("resumed", state.retry_count.to_string()),
            (
                "spent",
                format!(
                    "{} tokens ({} left), {} documents retrieved, {} API calls",
                    state.budget.tokens_used,
                    state.budget.tokens_remaining,
                    state.budget.docs_retrieved,
                    state.budget.api_calls
                ),
            ),
        ] {
            let _ = write!(body, "<tr><th>{k}</th><td>{v}</td></tr>");
        }
        body.push_str("</table><h2>Timeline</h2>");
        body.push_str(&timeline(&state));
        if !state.errors.is_empty() {
            body.push_str("<h2>Errors</h2>");
            let rows: Vec<Vec<String>> = state
                .errors
                .iter()
                .map(|e| {
                    vec![
                        esc(&e.node),
                        esc(&e.timestamp),
                        esc(&e.message),
                        if e.recoverable { "yes" } else { "no" }.to_owned(),
                    ]
                })
                .collect();
            body.push_str(&table(&["node", "at", "error", "recoverable"], &rows, ""));
        }
        if !state.artifacts.is_empty() {
            body.push_str("<h2>Artifacts</h2>");
            let rows: Vec<Vec<String>> = state
                .artifacts
                .iter()
                .map(|a| {
                    let open = match &a.uri {
                        Some(key) if viewer.sees_all => {
                            let key = url_part(key);
                            format!(
                                "<a href=\"{base}/artifacts/{key}\">open</a> · \
                                 <a href=\"{base}/artifacts/{key}?download\">download</a>"
                            )
                        }
                        Some(key) => esc(key),
                        None => "—".to_owned(),
                    };
                    vec![esc(&a.name), esc(&a.kind), open]
                })
                .collect();
            body.push_str(&table(&["name", "kind", "file"], &rows, ""));
        }
        if let Some(output) = &state.output {
            let _ = write!(body, "<h2>Output</h2>{}", json_block(output));
        }
        if !state.intermediate.is_empty() {
            let each = serde_json::Value::Object(state.intermediate.clone());
            let _ = write!(body, "<h2>Each node's output</h2>{}", json_block(&each));
        }
        let _ = write!(body, "<h2>Input</h2>{}", json_block(&state.input));
        Ok((format!("Durable run {id}"), body))
    }

    /// `/artifacts/KEY`: an R3 file as text (`?download`: as a file), for
    /// an admin (an artifact's key does not say whose run made it).
    pub(super) async fn artifact(
        &self,
        viewer: &Viewer,
        key: &str,
        download: bool,
    ) -> Response<Body> {
        if !viewer.sees_all {
            return plain(
                StatusCode::FORBIDDEN,
                "artifacts are shown to admins".to_owned(),
            );
        }
        let key = url_decode(key).unwrap_or_default();
        match self.console.fleet.artifact(&key).await {
            Ok(Some(text)) => {
                let mut r = plain(StatusCode::OK, text);
                if download {
                    let name: String = key
                        .rsplit('/')
                        .next()
                        .unwrap_or("artifact")
                        .chars()
                        .filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
                        .collect();
                    if let Ok(v) = format!("attachment; filename=\"{name}\"").parse() {
                        r.headers_mut()
                            .insert(hyper::header::CONTENT_DISPOSITION, v);
                    }
                }
                r
            }
            Ok(None) => plain(StatusCode::NOT_FOUND, format!("no file {key} is kept")),
            Err(e) => plain(StatusCode::NOT_FOUND, e.to_string()),
        }
    }
}

/// Each node's runs as bars on the run's time line (plain SVG): where each
/// started and how long it took, red for a failure, a ring for a result
/// replayed from an earlier run.
fn timeline(state: &GraphState) -> String {
    let spans: Vec<(&str, i64, i64, GraphStatus, bool)> = state
        .nodes
        .iter()
        .filter_map(|n| {
            let (start, end) = (micros_of(&n.started_at)?, micros_of(&n.completed_at)?);
            Some((n.node.as_str(), start, end.max(start), n.status, n.replayed))
        })
        .collect();
    let Some(first) = spans.iter().map(|s| s.1).min() else {
        return "<p class=muted>No node has run yet.</p>".to_owned();
    };
    let last = spans.iter().map(|s| s.2).max().unwrap_or(first);
    let total = (last - first).max(1) as f64;
    let (label_w, bar_w, row_h) = (180.0, 560.0, 26.0);
    let height = row_h * spans.len() as f64 + 8.0;
    let width = label_w + bar_w + 110.0;
    let mut svg = format!(
        "<svg role=img aria-label=\"the run's nodes in time\" class=timeline width=\"{width}\" \
         height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    for (i, (node, start, end, status, replayed)) in spans.iter().enumerate() {
        let y = row_h * i as f64 + 4.0;
        let x = label_w + (start - first) as f64 / total * bar_w;
        let w = ((end - start) as f64 / total * bar_w).max(2.0);
        let color = match status {
            GraphStatus::Failed => "#b42318",
            GraphStatus::Skipped => "#a15c07",
            _ => "#2454d6",
        };
        let stroke = if *replayed {
            " stroke=\"#1d2330\" stroke-dasharray=\"3 2\""
        } else {
            ""
        };
        let took = micros((end - start) as u64);
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\">{}</text><rect data-node=\"{}\" x=\"{x:.1}\" y=\"{y}\" \
             width=\"{w:.1}\" height=\"18\" fill=\"{color}\"{stroke}><title>{}: {} in {took}{}</title></rect>\
             <text x=\"{}\" y=\"{}\">{took}</text>",
            y + 14.0,
            esc(node),
            esc(node),
            esc(node),
            status_word(*status),
            if *replayed { " (replayed)" } else { "" },
            label_w + bar_w + 8.0,
            y + 14.0,
        );
    }
    svg.push_str("</svg>");
    svg
}
