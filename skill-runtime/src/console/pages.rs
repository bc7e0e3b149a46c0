//! The queue's page, and a person's decision on a parked job posted from it.

use std::fmt::Write;

use hyper::{Response, StatusCode};

use super::html::{self, bar, csrf_field, esc, table, url_part};
use super::service::{Shared, Viewer, plain, redirect};
use crate::mcp::http::reply::Body;
use crate::model::approval::Decision;
use crate::queue::api::Decided;

/// Dead letters, and delayed jobs, listed.
const DEAD_LISTED: usize = 50;

/// Said where the queue's jobs are not shown to a viewer.
const HIDDEN: &str = "The queue's jobs are shown to admins and to those who decide on them.";

/// A page's title and body, or why it is not shown.
pub(super) type Shown = Result<(String, String), (StatusCode, String)>;

/// A store's failure, as a page says it.
pub(super) fn unavailable(e: impl std::fmt::Display) -> (StatusCode, String) {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the fleet's store did not answer: {e}"),
    )
}

impl Shared {
    /// `/queue`: depth by priority, running jobs (live), jobs waiting for a
    /// person (with Approve and Deny for a viewer who decides), workers and
    /// schedules.
    pub(super) async fn queue_page(&self, viewer: &Viewer, query: &[(String, String)]) -> Shown {
        let status = self.queue().status().await.map_err(unavailable)?;
        let schedules = self.console.fleet.schedules().await.map_err(unavailable)?;
        let base = &self.console.base;
        let mut body = notice(query);
        body.push_str("<div class=cards id=depth data-live>");
        for (priority, n) in &status.waiting {
            let _ = write!(
                body,
                "<div class=card>waiting, {}<b>{n}</b></div>",
                priority.as_str()
            );
        }
        for (what, n) in [
            ("delayed", status.delayed),
            ("in flight", status.in_flight),
            ("dead letters", status.dead_letters),
            ("workers", status.workers.len() as u64),
        ] {
            let _ = write!(body, "<div class=card>{what}<b>{n}</b></div>");
        }
        body.push_str("</div><h2>Running</h2><div id=running data-live>");
        let running: Vec<Vec<String>> = status
            .running
            .iter()
            .filter(|_| viewer.sees_queue())
            .map(|r| {
                vec![
                    format!("<code>{}</code>", esc(&r.job_id)),
                    esc(&r.worker),
                    bar(r.progress.done, r.progress.total),
                    esc(r.progress.message.as_deref().unwrap_or_default()),
                ]
            })
            .collect();
        let none = match viewer.sees_queue() {
            true => "No job reports progress now.",
            false => HIDDEN,
        };
        body.push_str(&table(
            &["job", "worker", "progress", "doing"],
            &running,
            none,
        ));
        body.push_str("</div><h2>Waiting for a person</h2>");
        let parked = match viewer.sees_queue() {
            true => &status.awaiting_approval[..],
            false => &[],
        };
        let ids: Vec<&str> = parked.iter().map(|a| a.job_id.as_str()).collect();
        let jobs = match ids.is_empty() {
            true => Vec::new(),
            false => self
                .console
                .fleet
                .parked_jobs(&ids)
                .await
                .map_err(unavailable)?,
        };
        let awaiting: Vec<Vec<String>> = parked
            .iter()
            .zip(jobs.iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(a, job)| {
                let id = url_part(&a.job_id);
                let mut row = vec![
                    format!("<code>{}</code>", esc(&a.job_id)),
                    self.what(job.and_then(Option::as_ref)),
                    format!(
                        "{} <span class=muted>({})</span>",
                        html::time(a.deadline),
                        html::from_now(a.deadline)
                    ),
                ];
                if viewer.decides {
                    let csrf = csrf_field(&viewer.csrf);
                    row.push(format!(
                        "<form method=post action=\"{base}/queue/{id}/approve\" class=inline>{csrf}\
                         <button class=approve>Approve</button></form> \
                         <form method=post action=\"{base}/queue/{id}/deny\" class=inline>{csrf}\
                         <input type=text name=reason placeholder=\"why not\" required aria-label=\"reason\"> \
                         <button class=deny>Deny</button></form>"
                    ));
                }
                row
            })
            .collect();
        let head: &[&str] = match viewer.decides {
            true => &["job", "what", "fails `approval_expired` at", "decision"],
            false => &["job", "what", "fails `approval_expired` at"],
        };
        let none = match viewer.sees_queue() {
            true => "No job waits for a person.",
            false => HIDDEN,
        };
        body.push_str(&table(head, &awaiting, none));
        body.push_str("<h2>Dead letters</h2>");
        body.push_str(&self.dead_letters(viewer).await?);
        body.push_str("<h2>Delayed</h2>");
        body.push_str(&self.delayed(viewer).await?);
        body.push_str("<h2>Workers</h2><div id=workers data-live>");
        let workers: Vec<Vec<String>> = match status.heartbeats.is_empty() {
            true => status
                .workers
                .iter()
                .map(|w| vec![esc(w), "—".to_owned()])
                .collect(),
            false => status
                .heartbeats
                .iter()
                .map(|h| {
                    vec![
                        esc(&h.worker),
                        format!(
                            "{} <span class=muted>({})</span>",
                            html::time(h.alive_until),
                            html::from_now(h.alive_until)
                        ),
                    ]
                })
                .collect(),
        };
        body.push_str(&table(
            &["worker", "alive until (its heartbeat moves it on)"],
            &workers,
            "No worker is alive.",
        ));
        body.push_str("</div>");
        body.push_str("<h2>Schedules</h2>");
        let schedules: Vec<Vec<String>> = schedules
            .iter()
            .map(|s| {
                vec![
                    esc(&s.schedule.id),
                    format!("<code>{}</code>", esc(&s.schedule.cron)),
                    esc(&s.schedule.skill),
                    esc(s.next_run.as_deref().unwrap_or("—")),
                    esc(s.last_run.as_deref().unwrap_or("—")),
                ]
            })
            .collect();
        body.push_str(&table(
            &["schedule", "cron (UTC)", "skill", "next tick", "last tick"],
            &schedules,
            "No worker registered a schedule.",
        ));
        Ok((format!("Queue `{}`", status.queue), body))
    }

    /// What a parked job is, for the person asked: its skill, who queued
    /// it, when, and its input with what the skill redacts hidden.
    fn what(&self, job: Option<&crate::model::envelope::JobEnvelope>) -> String {
        let Some(job) = job else {
            return "<span class=muted>no longer parked</span>".to_owned();
        };
        let skill = match (&job.intent, job.skill.as_ref()) {
            (Some(intent), "") => intent.clone(),
            (_, skill) => skill.to_owned(),
        };
        let name = skill.split('@').next().unwrap_or_default();
        let manifest = self.console.registry["skills"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == name));
        let hidden: Vec<&str> = manifest
            .and_then(|m| m["redaction"]["inputs"].as_array())
            .map(|f| f.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        let input = crate::exec::redact::redacted(&job.params, &hidden);
        let who = match (&job.caller.user_id, job.caller.agent_role) {
            (Some(user), _) => user.clone(),
            (None, Some(role)) => role.as_str().to_owned(),
            (None, None) => "an anonymous caller".to_owned(),
        };
        let when = job
            .created_at
            .map(|t| format!(", {}", html::time(t)))
            .unwrap_or_default();
        format!(
            "<b>{}</b> <span class=muted>queued by {}{when}</span><br><code>{}</code>",
            esc(&skill),
            esc(&who),
            esc(&input.to_string())
        )
    }

    /// The delayed jobs due soonest: when, which job, what.
    async fn delayed(&self, viewer: &Viewer) -> Result<String, (StatusCode, String)> {
        if !viewer.sees_queue() {
            return Ok(format!("<p class=muted>{HIDDEN}</p>"));
        }
        let delayed = self
            .console
            .fleet
            .delayed_jobs(DEAD_LISTED)
            .await
            .map_err(unavailable)?;
        let rows: Vec<Vec<String>> = delayed
            .iter()
            .map(|(due, job)| {
                vec![
                    format!(
                        "{} <span class=muted>({})</span>",
                        html::time(*due),
                        html::from_now(*due)
                    ),
                    job.as_ref().map_or("—".to_owned(), |j| {
                        format!("<code>{}</code>", esc(j.job_id.as_str()))
                    }),
                    self.what(job.as_ref()),
                ]
            })
            .collect();
        Ok(table(&["due", "job", "what"], &rows, "No job is delayed."))
    }

    /// The newest dead letters, with Retry and Discard for a viewer who
    /// decides.
    async fn dead_letters(&self, viewer: &Viewer) -> Result<String, (StatusCode, String)> {
        if !viewer.sees_queue() {
            return Ok(format!("<p class=muted>{HIDDEN}</p>"));
        }
        let dead = self
            .console
            .fleet
            .dead_letters(DEAD_LISTED)
            .await
            .map_err(unavailable)?;
        let base = &self.console.base;
        let rows: Vec<Vec<String>> = dead
            .iter()
            .map(|d| {
                let job = serde_json::from_str::<crate::model::envelope::JobEnvelope>(&d.message);
                let what = match &job {
                    Ok(job) => format!(
                        "<code>{}</code> {}",
                        esc(job.job_id.as_str()),
                        esc(&job.skill)
                    ),
                    Err(_) => "<span class=muted>not a job (poisoned)</span>".to_owned(),
                };
                let mut row = vec![
                    html::time(d.at),
                    what,
                    esc(&d.reason),
                    d.deliveries.to_string(),
                ];
                if viewer.decides {
                    let id = url_part(&d.id);
                    let csrf = csrf_field(&viewer.csrf);
                    let retry = match job {
                        Ok(_) => format!(
                            "<form method=post action=\"{base}/dead/{id}/retry\" class=inline>{csrf}\
                             <button>Retry</button></form> "
                        ),
                        Err(_) => String::new(),
                    };
                    row.push(format!(
                        "{retry}<form method=post action=\"{base}/dead/{id}/discard\" class=inline>{csrf}\
                         <button>Discard</button></form>"
                    ));
                }
                row
            })
            .collect();
        let head: &[&str] = match viewer.decides {
            true => &["given up", "job", "why", "deliveries", "action"],
            false => &["given up", "job", "why", "deliveries"],
        };
        Ok(table(head, &rows, "No dead letter."))
    }

    /// `POST /dead/ID/retry` (the job sent again as a new job) or
    /// `/dead/ID/discard`, by a viewer who decides; back to the queue,
    /// saying what became of it.
    pub(super) async fn act_on_dead(
        &self,
        viewer: &Viewer,
        id: &str,
        verb: &str,
    ) -> Response<Body> {
        if !viewer.decides {
            return plain(
                StatusCode::FORBIDDEN,
                format!(
                    "{} may not retry or discard dead letters: it takes the `admin` level or the `{}` permission",
                    viewer.name,
                    super::builder::DECIDE_PERMISSION
                ),
            );
        }
        let fleet = &self.console.fleet;
        let said = match verb {
            "retry" => match fleet.retry_dead(id).await {
                Ok(Some(again)) => format!("retried={}", url_part(again.as_str())),
                Ok(None) => "retried=".to_owned(),
                Err(e) => return plain(StatusCode::CONFLICT, e.to_string()),
            },
            _ => match fleet.discard_dead(id).await {
                Ok(true) => "discarded=1".to_owned(),
                Ok(false) => "discarded=0".to_owned(),
                Err(e) => return plain(StatusCode::SERVICE_UNAVAILABLE, unavailable(e).1),
            },
        };
        redirect(&format!(
            "{}/queue?dead={}&{said}",
            self.console.base,
            url_part(id)
        ))
    }

    /// `POST /queue/ID/approve` or `/queue/ID/deny` (with its `reason`): the
    /// decision recorded under the viewer's name, as `approve` and `deny`
    /// record theirs; back to the queue, saying what became of it.
    pub(super) async fn decide(
        &self,
        viewer: &Viewer,
        id: &str,
        verb: &str,
        reason: Option<&str>,
    ) -> Response<Body> {
        if !viewer.decides {
            return plain(
                StatusCode::FORBIDDEN,
                format!(
                    "{} may not decide on jobs: it takes the `admin` level or the `{}` permission",
                    viewer.name,
                    super::builder::DECIDE_PERMISSION
                ),
            );
        }
        let decision = match (verb, reason.map(str::trim)) {
            ("approve", _) => Decision::approved(&viewer.name),
            (_, Some(reason)) if !reason.is_empty() => Decision::denied(&viewer.name, reason),
            _ => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    "a denial needs its reason".to_owned(),
                );
            }
        };
        let how = match self.queue().decide(id, decision).await {
            Ok(Decided::Released) => "released",
            Ok(Decided::Recorded) => "recorded",
            Ok(Decided::AlreadyDecided) => "already",
            Ok(Decided::AlreadyDone) => "ended",
            Ok(Decided::Unknown) => "unknown",
            Err(e) => return plain(StatusCode::SERVICE_UNAVAILABLE, unavailable(e).1),
        };
        redirect(&format!(
            "{}/queue?job={}&{verb}={how}",
            self.console.base,
            url_part(id)
        ))
    }
}

/// What the last action did, from the query it redirected with.
fn notice(query: &[(String, String)]) -> String {
    let get = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if let Some(dead) = get("dead") {
        let (class, said) = match (get("retried"), get("discarded")) {
            (Some(""), _) => (
                "error",
                "was not kept any more (retried or discarded already)".to_owned(),
            ),
            (Some(again), _) => (
                "notice",
                format!("is sent again as job <code>{}</code>", esc(again)),
            ),
            (_, Some("1")) => ("notice", "is discarded".to_owned()),
            _ => ("error", "was not kept any more".to_owned()),
        };
        return format!(
            "<p class={class} role=status>Dead letter <code>{}</code> {said}.</p>",
            esc(dead)
        );
    }
    decision_notice(query)
}

/// What the last decision did.
fn decision_notice(query: &[(String, String)]) -> String {
    let job = query.iter().find(|(k, _)| k == "job").map(|(_, v)| v);
    let decided = query.iter().find(|(k, _)| k == "approve" || k == "deny");
    let (Some(job), Some((verb, how))) = (job, decided) else {
        return String::new();
    };
    let what = if verb == "approve" {
        "approved"
    } else {
        "denied"
    };
    let said = match how.as_str() {
        "released" => format!("is {what}: it is back in line"),
        "recorded" => format!("is {what} when a worker takes it"),
        "already" => "was decided already; that decision stands".to_owned(),
        "ended" => "has ended already".to_owned(),
        _ => "is not known to this queue".to_owned(),
    };
    let class = if matches!(how.as_str(), "released" | "recorded") {
        "notice"
    } else {
        "error"
    };
    format!(
        "<p class={class} role=status>Job <code>{}</code> {said}.</p>",
        esc(job)
    )
}
