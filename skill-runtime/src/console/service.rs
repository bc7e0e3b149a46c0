//! The console as one tower service: the checks every request goes through
//! (`Host`, the caller, and for a post its origin and its form's token),
//! then the page or the action its path names.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use skill_core::manifest::PermissionLevel;

use super::builder::{Console, DECIDE_PERMISSION};
use super::html::{self, Frame, esc};
use crate::mcp::LOOPBACK_HOSTS;
use crate::mcp::auth::AuthError;
use crate::mcp::http::reply::Body;
use crate::mcp::seal::Seals;
use crate::model::caller::Caller;
use crate::queue::api::Queue;

/// The cookie a signed-in browser sends its credential in.
const COOKIE: &str = "skill_console";

/// The largest form body read (a denial's reason and a token).
const MAX_FORM: usize = 16 * 1024;

/// How long a sign-in lasts in the browser.
const SIGNED_IN_SECS: u64 = 12 * 3600;

/// The console of a fleet as a tower service ([`Console::into_service`]).
#[derive(Clone)]
pub struct ConsoleService {
    shared: Arc<Shared>,
}

pub(super) struct Shared {
    pub(super) console: Console,
    /// Seals made with the fleet's secret: the forms' tokens.
    seals: Seals,
    /// The `Host` names accepted; `None`: any (an authenticator is set and
    /// the operator listed none).
    hosts: Option<Vec<String>>,
}

/// Who is looking at a page.
pub(super) struct Viewer {
    pub(super) caller: Caller,
    /// The name a decision is recorded under.
    pub(super) name: String,
    /// Whether it sees every caller's runs.
    pub(super) sees_all: bool,
    /// Whether it may approve or deny parked jobs.
    pub(super) decides: bool,
    /// Whether it signed in (and may sign out).
    pub(super) signed_in: bool,
    /// The token its forms carry.
    pub(super) csrf: String,
}

impl Console {
    /// The console as a tower service, to mount in an axum or tower app
    /// (`Router::new().nest_service("/console", console.into_service())`
    /// with [`Console::base_path`] `/console`).
    pub fn into_service(self) -> ConsoleService {
        ConsoleService::new(self)
    }

    /// Serve the console on `listener` until the process ends, with the
    /// connection limits of [`Console::limits`].
    pub async fn serve(self, listener: tokio::net::TcpListener) {
        let limits = self.limits.clone();
        crate::mcp::serve_app(listener, self.into_service(), limits).await;
    }
}

impl Viewer {
    /// Whether it sees the queue's jobs (running, waiting for a person):
    /// an admin, or one who decides on them; the others see the counts.
    pub(super) fn sees_queue(&self) -> bool {
        self.sees_all || self.decides
    }

    /// Whether it sees a run its caller `user` started: an admin sees every
    /// run, anyone else the runs of its own user id (a caller without one,
    /// none). The one rule for runs, durable runs and statistics.
    pub(super) fn sees_runs_of(&self, user: Option<&str>) -> bool {
        self.sees_all || (user.is_some() && user == self.caller.user_id.as_deref())
    }
}

impl ConsoleService {
    pub(super) fn new(console: Console) -> ConsoleService {
        let hosts = (console.authenticator.is_none() || !console.limits.allowed_hosts.is_empty())
            .then(|| {
                LOOPBACK_HOSTS
                    .iter()
                    .map(|h| (*h).to_owned())
                    .chain(console.limits.allowed_hosts.iter().cloned())
                    .collect()
            });
        let seals = Seals::shared(Arc::new(console.fleet.clone()));
        ConsoleService {
            shared: Arc::new(Shared {
                console,
                seals,
                hosts,
            }),
        }
    }
}

impl<B> tower_service::Service<Request<B>> for ConsoleService
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(shared.handle(request).await) })
    }
}

impl Shared {
    async fn handle<B>(&self, request: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = request.into_parts();
        if let Err(why) = self.host_allowed(&parts) {
            return plain(StatusCode::FORBIDDEN, why);
        }
        let base = self.console.base.as_str();
        let full = parts.uri.path();
        let path = match full.strip_prefix(base) {
            Some(rest) if !base.is_empty() => rest,
            _ => full,
        };
        let path = if path.is_empty() { "/" } else { path };
        let query = html::pairs(parts.uri.query().unwrap_or_default());
        let post = parts.method == Method::POST;
        if !post && parts.method != Method::GET && parts.method != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "GET or POST".to_owned());
        }
        let form = if post {
            if let Err(why) = same_origin(&parts, &self.console.limits.allowed_origins) {
                return plain(StatusCode::FORBIDDEN, why);
            }
            match read_form(body, &self.console.limits).await {
                Ok(form) => form,
                Err(response) => return response,
            }
        } else {
            Vec::new()
        };
        if path == "/login" {
            let again = query.iter().any(|(k, _)| k == "again");
            return match post {
                true => self.sign_in(&parts, &form).await,
                false => self.login_page(
                    StatusCode::OK,
                    again.then_some("Your sign-in no longer holds: sign in again."),
                ),
            };
        }
        if path == "/favicon.ico" {
            return plain(StatusCode::NO_CONTENT, String::new());
        }
        let viewer = match self.viewer(&parts).await {
            Ok(v) => v,
            Err(response) => return response,
        };
        if post {
            let token = field(&form, "csrf").unwrap_or_default();
            if !Shared::opens(&viewer, token) {
                return plain(
                    StatusCode::FORBIDDEN,
                    "the form's token does not hold: reload the page and try again".to_owned(),
                );
            }
            return self.act(path, &viewer, &form).await;
        }
        let frame = |title| Frame {
            base,
            title,
            viewer: Some(&viewer.name),
            signed_in: viewer.signed_in,
            csrf: &viewer.csrf,
        };
        let shown = match path {
            "/" | "/queue" => self.queue_page(&viewer, &query).await,
            "/runs" => self.runs_page(&viewer, &query).await,
            "/stats" => self.stats_page(&viewer, &query).await,
            "/skills" => Ok(self.skills_page()),
            "/pipelines" => self.pipelines_page(&viewer).await,
            _ => {
                if let Some(key) = path.strip_prefix("/artifacts/") {
                    let download = query.iter().any(|(k, _)| k == "download");
                    return self.artifact(&viewer, key, download).await;
                }
                if let Some(id) = path.strip_prefix("/runs/") {
                    self.run_page(&viewer, id, &query).await
                } else if let Some(id) = path.strip_prefix("/pipelines/") {
                    self.pipeline_page(&viewer, id).await
                } else if let Some(name) = path.strip_prefix("/skills/") {
                    self.skill_page(name)
                } else {
                    Err((StatusCode::NOT_FOUND, "no such page".to_owned()))
                }
            }
        };
        match shown {
            Ok((title, body)) => html_response(StatusCode::OK, html::page(&frame(&title), &body)),
            Err((status, why)) => html_response(
                status,
                html::page(
                    &frame("Not shown"),
                    &format!("<p class=error>{}</p>", esc(&why)),
                ),
            ),
        }
    }

    /// The `Host` header checked as the MCP endpoint checks it: one, and a
    /// loopback or listed name unless any is accepted.
    fn host_allowed(&self, parts: &Parts) -> Result<(), String> {
        let mut values = parts.headers.get_all(header::HOST).iter();
        let host = values.next().and_then(|v| v.to_str().ok());
        if values.next().is_some() {
            return Err("more than one Host header".to_owned());
        }
        let Some(hosts) = &self.hosts else {
            return Ok(());
        };
        let name = host.map(host_name).unwrap_or_default();
        match hosts.iter().any(|h| h.eq_ignore_ascii_case(name)) {
            true => Ok(()),
            false => Err(format!(
                "the console answers requests for {} only",
                hosts.join(", ")
            )),
        }
    }

    /// Who `parts` is from: the operator on a console without an
    /// authenticator; else the caller of its `Authorization` header or of
    /// its sign-in cookie (the login page, 401, without either).
    async fn viewer(&self, parts: &Parts) -> Result<Viewer, Response<Body>> {
        let Some(auth) = &self.console.authenticator else {
            let caller = Caller {
                permission_level: Some(PermissionLevel::Admin),
                user_id: Some(self.console.operator.clone()),
                ..Caller::default()
            };
            let csrf = self.seal("operator").await?;
            return Ok(Viewer {
                caller,
                name: self.console.operator.clone(),
                sees_all: true,
                decides: true,
                signed_in: false,
                csrf,
            });
        };
        let from_cookie = parts.headers.get(header::AUTHORIZATION).is_none();
        let credential = match from_cookie {
            true => cookie(parts).ok_or_else(|| self.to_sign_in(parts, false))?,
            false => crate::mcp::auth::bearer(parts)
                .map(str::to_owned)
                .map_err(|e| plain(StatusCode::UNAUTHORIZED, e.to_string()))?,
        };
        let caller = match auth.authenticate(&with_bearer(parts, &credential)).await {
            Ok(caller) => caller,
            Err(AuthError::Unavailable(why)) => {
                return Err(plain(StatusCode::SERVICE_UNAVAILABLE, why));
            }
            Err(e) if !from_cookie => return Err(plain(StatusCode::UNAUTHORIZED, e.to_string())),
            Err(_) => {
                let mut page = self.to_sign_in(parts, true);
                page.headers_mut()
                    .insert(header::SET_COOKIE, self.cookie_header("", 0, false));
                return Err(page);
            }
        };
        let admin = caller.permission_level == Some(PermissionLevel::Admin);
        let decides = admin
            || caller
                .permissions
                .as_ref()
                .is_some_and(|p| p.contains(DECIDE_PERMISSION));
        let name = caller.user_id.clone().unwrap_or_else(|| caller.principal());
        let csrf = self.seal(&credential).await?;
        Ok(Viewer {
            caller,
            name,
            sees_all: admin,
            decides,
            signed_in: from_cookie,
            csrf,
        })
    }

    /// The token of forms for `credential`.
    async fn seal(&self, credential: &str) -> Result<String, Response<Body>> {
        self.seals
            .seal(&["console form", credential], 16)
            .await
            .map_err(|e| plain(StatusCode::SERVICE_UNAVAILABLE, e.message.to_string()))
    }

    /// Whether `token` is `viewer`'s.
    fn opens(viewer: &Viewer, token: &str) -> bool {
        crate::mcp::seal::same_seal(&viewer.csrf, token)
    }

    /// A post: sign out, or a decision on a parked job.
    async fn act(&self, path: &str, viewer: &Viewer, form: &[(String, String)]) -> Response<Body> {
        if path == "/logout" {
            let mut to = redirect(&format!("{}/login", self.console.base));
            to.headers_mut()
                .insert(header::SET_COOKIE, self.cookie_header("", 0, false));
            return to;
        }
        if let Some((id, verb @ ("retry" | "discard"))) = path
            .strip_prefix("/dead/")
            .and_then(|rest| rest.rsplit_once('/'))
        {
            let id = html::url_decode(id).unwrap_or_default();
            return self.act_on_dead(viewer, &id, verb).await;
        }
        let decision = path
            .strip_prefix("/queue/")
            .and_then(|rest| rest.rsplit_once('/'));
        match decision {
            Some((id, verb @ ("approve" | "deny"))) => {
                let id = html::url_decode(id).unwrap_or_default();
                self.decide(viewer, &id, verb, field(form, "reason")).await
            }
            _ => plain(StatusCode::NOT_FOUND, "nothing to post here".to_owned()),
        }
    }

    /// A browser with no credential that holds sent to the login page (a
    /// page asked for), or refused 401 (a post); `again`: the credential it
    /// had no longer holds.
    fn to_sign_in(&self, parts: &Parts, again: bool) -> Response<Body> {
        match parts.method == Method::POST {
            true => plain(StatusCode::UNAUTHORIZED, "sign in first".to_owned()),
            false => redirect(&format!(
                "{}/login{}",
                self.console.base,
                if again { "?again" } else { "" }
            )),
        }
    }

    /// The login page, answered with `status`, saying `error` if any.
    fn login_page(&self, status: StatusCode, error: Option<&str>) -> Response<Body> {
        let Some(_) = &self.console.authenticator else {
            return redirect(&format!("{}/", self.console.base));
        };
        let base = &self.console.base;
        let error = error.map_or(String::new(), |e| format!("<p class=error>{}</p>", esc(e)));
        let body = format!(
            "{error}<form method=post action=\"{base}/login\">\
             <p><label>API key or token <input type=password name=credential \
             autocomplete=current-password required size=48></label></p>\
             <p><button>Sign in</button></p></form>\
             <p class=muted>The credential is kept in a cookie this console alone reads.</p>"
        );
        let frame = Frame {
            base,
            title: "Sign in",
            viewer: None,
            signed_in: false,
            csrf: "",
        };
        html_response(status, html::page(&frame, &body))
    }

    /// `POST /login`: the credential checked, then kept in the cookie.
    async fn sign_in(&self, parts: &Parts, form: &[(String, String)]) -> Response<Body> {
        let Some(auth) = &self.console.authenticator else {
            return redirect(&format!("{}/", self.console.base));
        };
        let credential = field(form, "credential").unwrap_or_default().trim();
        if credential.is_empty() {
            return self.login_page(StatusCode::UNAUTHORIZED, Some("give a key or a token"));
        }
        match auth.authenticate(&with_bearer(parts, credential)).await {
            Ok(_) => {
                let secure = origin(parts).is_some_and(|o| o.starts_with("https://"));
                let mut to = redirect(&format!("{}/", self.console.base));
                to.headers_mut().insert(
                    header::SET_COOKIE,
                    self.cookie_header(credential, SIGNED_IN_SECS, secure),
                );
                to
            }
            Err(AuthError::Unavailable(why)) => plain(StatusCode::SERVICE_UNAVAILABLE, why),
            Err(e) => self.login_page(StatusCode::UNAUTHORIZED, Some(&e.to_string())),
        }
    }

    /// The sign-in cookie holding `credential` for `secs` (0: removed).
    fn cookie_header(&self, credential: &str, secs: u64, secure: bool) -> HeaderValue {
        let path = if self.console.base.is_empty() {
            "/"
        } else {
            &self.console.base
        };
        let secure = if secure { "; Secure" } else { "" };
        let value = format!(
            "{COOKIE}={}; Path={path}; Max-Age={secs}; HttpOnly; SameSite=Strict{secure}",
            html::url_part(credential)
        );
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// The fleet's queue.
    pub(super) fn queue(&self) -> &dyn Queue {
        &self.console.fleet
    }
}

/// The host name of a `Host` value (`[::1]:80` is `::1`).
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// The request's `Origin`, if it sent one.
fn origin(parts: &Parts) -> Option<&str> {
    parts.headers.get(header::ORIGIN)?.to_str().ok()
}

/// A post from a page of this console: its `Origin` (which browsers send
/// with every post) names the host the request went to, or one the
/// operator allowed. A client that sends no `Origin` is not a browser a
/// page could drive; its form's token still has to hold.
fn same_origin(parts: &Parts, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = origin(parts) else {
        return Ok(());
    };
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let ours = ["http://", "https://"]
        .iter()
        .any(|scheme| origin.strip_prefix(scheme) == Some(host));
    match ours || allowed.iter().any(|a| a == origin) {
        true => Ok(()),
        false => Err(format!("a post from {origin} is not one of this console's")),
    }
}

/// The sign-in cookie's credential.
fn cookie(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .and_then(|(_, value)| html::url_decode(value))
        .filter(|v| !v.is_empty())
}

/// `parts` carrying `credential` as its bearer credential, for the
/// authenticator.
fn with_bearer(parts: &Parts, credential: &str) -> Parts {
    let mut request = Request::builder()
        .method(parts.method.clone())
        .uri(parts.uri.clone());
    for (name, value) in &parts.headers {
        if name != header::AUTHORIZATION && name != header::COOKIE {
            request = request.header(name, value);
        }
    }
    if let Ok(value) = HeaderValue::from_str(&format!("Bearer {credential}")) {
        request = request.header(header::AUTHORIZATION, value);
    }
    request
        .body(())
        .map(|r| r.into_parts().0)
        .unwrap_or_else(|_| Request::new(()).into_parts().0)
}

/// A form's field.
pub(super) fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The body of a post read as a form, within [`MAX_FORM`] and the
/// request body's time.
async fn read_form<B>(
    body: B,
    limits: &crate::mcp::HttpLimits,
) -> Result<Vec<(String, String)>, Response<Body>>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let read = tokio::time::timeout(limits.body_timeout, Limited::new(body, MAX_FORM).collect());
    match read.await {
        Ok(Ok(collected)) => {
            let bytes = collected.to_bytes();
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| plain(StatusCode::BAD_REQUEST, "the form is not UTF-8".to_owned()))?;
            Ok(html::pairs(text))
        }
        Ok(Err(_)) => Err(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a form of the console is {MAX_FORM} bytes at most"),
        )),
        Err(_) => Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            "the form did not arrive in time".to_owned(),
        )),
    }
}

/// A page.
pub(super) fn html_response(status: StatusCode, page: String) -> Response<Body> {
    let mut r = respond(status, "text/html; charset=utf-8", page);
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
                "content-security-policy",
                HeaderValue::from_static(
                    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                     connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
                ),
            );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    r
}

/// A plain-text answer.
pub(super) fn plain(status: StatusCode, text: String) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", text)
}

/// 303 to `to`.
pub(super) fn redirect(to: &str) -> Response<Body> {
    let mut r = plain(StatusCode::SEE_OTHER, format!("see {to}"));
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

fn respond(status: StatusCode, kind: &'static str, text: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, kind)
        .body(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed())
        .expect("a status, a header and a body make a response")
}
