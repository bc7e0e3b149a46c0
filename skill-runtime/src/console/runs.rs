//! The runs: records filtered and paged, one run's stages as a timeline,
//! and latency and failures per skill drawn from the same records.

use std::fmt::Write;

use hyper::StatusCode;
use serde_json::Value;

use super::html::{self, badge, esc, json_block, micros, table, url_part};
use super::pages::{Shown, unavailable};
use super::service::{Shared, Viewer};
use crate::queue::records::{RecordPage, RecordQuery};

/// Runs listed per page.
const PER_PAGE: usize = 50;

impl Shared {
    /// A page of the records `query` asks for, of those `viewer` may see
    /// (an admin every caller's, anyone else its own: its user id).
    async fn page(
        &self,
        viewer: &Viewer,
        mut query: RecordQuery,
    ) -> Result<(Vec<Value>, RecordPage), (StatusCode, String)> {
        if !viewer.sees_all {
            match &viewer.caller.user_id {
                Some(own) => query.user = Some(own.clone()),
                None => return Ok((Vec::new(), RecordPage::default())),
            }
        }
        let page = self
            .console
            .fleet
            .records_page(&query)
            .await
            .map_err(unavailable)?;
        let records = page
            .records
            .iter()
            .filter_map(|t| serde_json::from_str::<Value>(t).ok())
            .collect();
        Ok((records, page))
    }

    /// `/runs?skill=&status=&caller=&before=`: the records that match,
    /// newest first, a page at a time, read through the store's indexes.
    pub(super) async fn runs_page(&self, viewer: &Viewer, query: &[(String, String)]) -> Shown {
        let get = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.trim())
                .filter(|v| !v.is_empty())
        };
        let (skill, status, caller) = (get("skill"), get("status"), get("caller"));
        let until = get("until");
        // "Ended before" a time: the page starts at the records' cursor for
        // it (a cursor already given, paging on, takes precedence).
        let before = match (get("before"), until) {
            (Some(b), _) => Some(b.to_owned()),
            (None, Some(t)) => {
                let time = utc(t).ok_or_else(|| {
                    (
                        StatusCode::BAD_REQUEST,
                        format!("`{t}` is not a time as YYYY-MM-DDTHH:MM (UTC)"),
                    )
                })?;
                Some(
                    self.console
                        .fleet
                        .records_before(time)
                        .await
                        .map_err(unavailable)?,
                )
            }
            (None, None) => None,
        };
        let asked = RecordQuery {
            skill: skill.map(str::to_owned),
            status: status.map(str::to_owned),
            user: caller.map(str::to_owned),
            before: before.clone(),
            limit: PER_PAGE,
            ..RecordQuery::default()
        };
        let (records, page) = self.page(viewer, asked).await?;
        let base = &self.console.base;
        // A run's link carries the cursor of the record above it, so that
        // its page starts reading right there (a store without an index
        // by job finds it at once).
        let above = std::iter::once(before).chain(page.cursors.iter().cloned().map(Some));
        let rows: Vec<Vec<String>> = records
            .iter()
            .zip(above)
            .map(|(r, above)| {
                let id = r["job_id"].as_str().unwrap_or_default();
                let from = above.map_or(String::new(), |c| format!("?before={}", url_part(&c)));
                vec![
                    esc(r["completed_at"].as_str().unwrap_or_default()),
                    esc(r["skill"].as_str().unwrap_or_default()),
                    badge(r["status"].as_str().unwrap_or_default()),
                    esc(&who(r)),
                    micros(r["duration_us"].as_u64().unwrap_or_default()),
                    format!(
                        "<a href=\"{base}/runs/{}{from}\"><code>{}</code></a>",
                        url_part(id),
                        esc(id)
                    ),
                ]
            })
            .collect();
        let mut body = format!(
            "<form class=filters method=get action=\"{base}/runs\">\
             <input type=text name=skill placeholder=skill aria-label=skill value=\"{}\">\
             <select name=status aria-label=status><option value=\"\">any status</option>",
            esc(skill.unwrap_or_default())
        );
        for s in ["succeeded", "failed", "cancelled", "expired"] {
            let selected = if status == Some(s) { " selected" } else { "" };
            let _ = write!(body, "<option{selected}>{s}</option>");
        }
        let _ = write!(
            body,
            "</select><input type=text name=caller placeholder=\"caller (user id)\" aria-label=caller value=\"{}\">\
             <label>ended before (UTC) <input type=datetime-local name=until value=\"{}\"></label>\
             <button>Filter</button></form>",
            esc(caller.unwrap_or_default()),
            esc(until.unwrap_or_default())
        );
        body.push_str(&table(
            &["completed", "skill", "status", "caller", "took", "job"],
            &rows,
            "No run matches.",
        ));
        body.push_str("<p class=muted>");
        if page.cut_short {
            body.push_str("Only part of the records was read for this page. ");
        }
        // Older pages keep the time asked for (shown in the form); the
        // newest page drops it.
        let link = |before: Option<&str>, label: &str| {
            let mut q = String::new();
            for (k, v) in [
                ("skill", skill),
                ("status", status),
                ("caller", caller),
                ("until", until.filter(|_| before.is_some())),
                ("before", before),
            ] {
                if let Some(v) = v {
                    let _ = write!(q, "&{k}={}", url_part(v));
                }
            }
            format!(
                " <a href=\"{base}/runs?{}\">{label}</a>",
                q.trim_start_matches('&')
            )
        };
        if get("before").is_some() || until.is_some() {
            body.push_str(&link(None, "newest"));
        }
        if let Some(next) = &page.next {
            body.push_str(&link(Some(next), "older"));
        }
        body.push_str("</p>");
        Ok(("Runs".to_owned(), body))
    }

    /// `/runs/ID`: one run: who ran what and how it ended, its stages as a
    /// timeline, a pipeline's or an agent's steps, its output or error.
    pub(super) async fn run_page(
        &self,
        viewer: &Viewer,
        id: &str,
        query: &[(String, String)],
    ) -> Shown {
        let id = html::url_decode(id).unwrap_or_default();
        let before = query
            .iter()
            .find(|(k, _)| k == "before")
            .map(|(_, v)| v.clone());
        let asked = RecordQuery {
            job_id: Some(id.clone()),
            before,
            limit: 1,
            ..RecordQuery::default()
        };
        let (records, _) = self.page(viewer, asked).await?;
        let Some(r) = records.first() else {
            return Err((
                StatusCode::NOT_FOUND,
                format!("no run {id} among the runs you may see"),
            ));
        };
        let text = |k: &str| esc(r[k].as_str().unwrap_or("—"));
        let mut body = String::new();
        let facts = [
            ("skill", format!("{} {}", text("skill"), text("version"))),
            ("status", badge(r["status"].as_str().unwrap_or_default())),
            ("caller", esc(&who(r))),
            ("started", text("started_at")),
            ("completed", text("completed_at")),
            (
                "took",
                micros(r["duration_us"].as_u64().unwrap_or_default()),
            ),
            ("trace", format!("<code>{}</code>", text("trace_id"))),
        ];
        body.push_str("<table>");
        for (k, v) in facts {
            let _ = write!(body, "<tr><th>{k}</th><td>{v}</td></tr>");
        }
        body.push_str("</table><h2>Stages</h2>");
        body.push_str(&timeline(r["steps"].as_array().map_or(&[], Vec::as_slice)));
        if let Some(steps) = r["pipeline_steps"].as_array().filter(|s| !s.is_empty()) {
            body.push_str("<h2>Steps</h2>");
            let rows: Vec<Vec<String>> = steps
                .iter()
                .map(|s| {
                    vec![
                        esc(s["id"].as_str().unwrap_or_default()),
                        esc(s["skill_name"].as_str().unwrap_or_default()),
                        badge(s["status"].as_str().unwrap_or_default()),
                        micros(s["duration_us"].as_u64().unwrap_or_default()),
                        esc(s["error"]["message"].as_str().unwrap_or_default()),
                    ]
                })
                .collect();
            body.push_str(&table(
                &["step", "skill", "status", "took", "error"],
                &rows,
                "",
            ));
        }
        for (title, key) in [
            ("Error", "error"),
            ("Output", "output"),
            ("Progress", "progress"),
            ("Input", "params"),
        ] {
            if !r[key].is_null() {
                let _ = write!(body, "<h2>{title}</h2>{}", json_block(&r[key]));
            }
        }
        Ok((format!("Run {id}"), body))
    }
}

/// Who ran a record: its caller's user id, else its role and level.
fn who(record: &Value) -> String {
    let c = &record["caller"];
    if let Some(id) = c["user_id"].as_str() {
        return id.to_owned();
    }
    let role = c["agent_role"].as_str().unwrap_or("no role");
    let level = c["permission_level"].as_str().unwrap_or("no level");
    format!("{role}, {level}")
}

/// A run's stages as bars on one time line, each as long as it took.
fn timeline(steps: &[Value]) -> String {
    let total: u64 = steps
        .iter()
        .map(|s| s["duration_us"].as_u64().unwrap_or(0))
        .sum::<u64>()
        .max(1);
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            let us = s["duration_us"].as_u64().unwrap_or(0);
            let pct = (us * 100 / total).max(1);
            vec![
                esc(s["step"].as_str().unwrap_or_default()),
                esc(s["outcome"].as_str().unwrap_or_default()),
                format!(
                    "<span class=bar><span style=\"width:{pct}%\"></span></span> {}",
                    micros(us)
                ),
                esc(s["detail"].as_str().unwrap_or_default()),
            ]
        })
        .collect();
    table(
        &["stage", "outcome", "took", "detail"],
        &rows,
        "No stage noted.",
    )
}

/// A time as a browser's `datetime-local` writes it (`2026-12-07T08:15`,
/// seconds optional), read as UTC.
fn utc(text: &str) -> Option<std::time::SystemTime> {
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(text, f).ok())
        .map(|t| {
            let ms = t.and_utc().timestamp_millis().max(0) as u64;
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browsers_local_time_is_read_as_utc() {
        let t = utc("2026-12-07T07:55").unwrap();
        assert_eq!(html::time(t), "2026-12-07 07:55:00");
        assert!(utc("2026-12-07T07:55:02").is_some());
        assert!(utc("yesterday").is_none());
    }
}
