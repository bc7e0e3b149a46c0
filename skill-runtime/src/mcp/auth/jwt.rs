//! OAuth 2.1 / OIDC bearer tokens: JWTs checked against the issuer's keys
//! (a JWKS), as the MCP authorization specification asks of a resource
//! server.
//!
//! What is checked, in order: the token is a JWT; its algorithm is an
//! asymmetric one (RS/PS 256-512, ES256/384, EdDSA; `none` and HMAC are
//! refused, so a token "signed" with the public key as an HMAC secret is
//! refused before any key is looked at); its key is in the JWKS by `kid`
//! (an unknown `kid` fetches the set once more, at most every
//! [`REFETCH_AFTER`], then is refused) and is of that algorithm's family
//! (and of that algorithm, when the key says which); no `crit` header (it
//! names extensions this server does not implement, and RFC 7515 says a
//! token that needs one is refused); the signature; `iss`; `aud` (this
//! resource, RFC 8707); `exp` and `nbf` within a small leeway; `sub`. The
//! JWT crate is `jsonwebtoken` (the maintained one, on the pure-Rust
//! RustCrypto backend); the set is fetched with hyper's client over rustls.
//!
//! The key set is fetched again on a timer ([`JwtConfig::refresh_every`]),
//! so a key the issuer withdrew stops verifying any token within that
//! interval, and for an unknown `kid`: one fetch at a time, at most one
//! attempt per [`JwtConfig::refetch_after`] whether it succeeds or fails,
//! and a request waits for a fetch at most [`WAIT_FOR_KEYS`], so an issuer
//! that fails or hangs costs neither it nor the server more than that.

use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper::http::request::Parts;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use skill_core::manifest::AgentRole;

use super::authenticator::{AuthError, Authenticator, bearer, caller_of};
use crate::exec::policy::BoxFuture;
use crate::model::caller::Caller;
use crate::sync::lock;

/// The algorithms a token may be signed with: asymmetric ones only.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The least time between two fetches of the key set for unknown key ids,
/// by default: a stream of tokens with made-up `kid`s costs the issuer one
/// request per this long, not one per token.
pub const REFETCH_AFTER: Duration = Duration::from_secs(30);

/// How often the key set is fetched again, by default.
pub const REFRESH_EVERY: Duration = Duration::from_secs(30);

/// The longest a request waits for a fetch of the key set: past it, a token
/// naming a key not in the set is answered 503 while the fetch goes on.
pub const WAIT_FOR_KEYS: Duration = Duration::from_secs(2);

/// The longest one fetch of the key set may take.
const FETCH_WITHIN: Duration = Duration::from_secs(10);

/// The most a key set may weigh.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// The longest the leeway on `exp` and `nbf` may be.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// Where the issuer's keys are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JwksSource {
    /// Fetched from this URL (`https://`, or `http://` for a local issuer).
    Url(String),
    /// Read from this file.
    File(PathBuf),
}

impl JwksSource {
    /// A URL when `s` starts with `http://` or `https://`, else a file path.
    pub fn parse(s: &str) -> JwksSource {
        if s.starts_with("http://") || s.starts_with("https://") {
            JwksSource::Url(s.to_owned())
        } else {
            JwksSource::File(PathBuf::from(s))
        }
    }
}

/// How tokens are checked and read.
#[derive(Clone, Debug)]
pub struct JwtConfig {
    /// The issuer's keys.
    pub jwks: JwksSource,
    /// The issuer (`iss`) tokens must come from; also the authorization
    /// server the metadata document names.
    pub issuer: String,
    /// The audience (`aud`) tokens must be for: this resource's identifier,
    /// usually its URL.
    pub audience: String,
    /// The claim that names the caller's agent role (`executor`, ...), if
    /// tokens carry one.
    pub role_claim: Option<String>,
    /// Clock skew allowed on `exp` and `nbf`, at most [`MAX_LEEWAY`].
    pub leeway: Duration,
    /// The least time between two fetches for unknown key ids (1 s to an
    /// hour; [`REFETCH_AFTER`] by default), counted from the last attempt,
    /// whether it succeeded or not.
    pub refetch_after: Duration,
    /// How often the key set is fetched again (1 s to an hour;
    /// [`REFRESH_EVERY`] by default): a key withdrawn from the set stops
    /// verifying tokens, remembered ones included, within this long.
    pub refresh_every: Duration,
}

impl JwtConfig {
    /// Tokens of `issuer` for `audience`, checked with the keys at `jwks`; no
    /// role claim; 30 seconds of leeway.
    pub fn new(jwks: JwksSource, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtConfig {
            jwks,
            issuer: issuer.into(),
            audience: audience.into(),
            role_claim: None,
            leeway: Duration::from_secs(30),
            refetch_after: REFETCH_AFTER,
            refresh_every: REFRESH_EVERY,
        }
    }
}

/// Bearer JWTs checked against a JWKS (see the module's documentation).
///
/// A client sends the same token with every request: a token that passed is
/// remembered (by its SHA-256, at most [`CHECKED_FOR`] and never past its
/// `exp`, and forgotten when the key set changes), so the signature is
/// verified once per token, not per request.
pub struct JwtAuth {
    shared: Arc<Shared>,
}

struct Shared {
    config: JwtConfig,
    keys: RwLock<Keys>,
    /// When the set was last asked for, and whether a fetch is under way.
    fetch: Mutex<Fetch>,
    /// Counts finished fetches, successful or not: requests waiting for one
    /// watch it.
    fetched: tokio::sync::watch::Sender<u64>,
    checked: Mutex<HashMap<[u8; 32], (Caller, Instant)>>,
}

/// How long a token that passed is taken without its signature checked
/// again.
pub const CHECKED_FOR: Duration = Duration::from_secs(60);

/// The most tokens remembered at once.
const MAX_CHECKED: usize = 10_000;

struct Keys {
    set: JwkSet,
    /// The set as fetched, to tell a changed set from the same one.
    text: Vec<u8>,
}

struct Fetch {
    attempted: Instant,
    running: bool,
}

/// Whether a fetch was started.
enum Started {
    /// One is under way (started now, or before).
    Running,
    /// The last attempt was too recent.
    NotDue,
}

impl JwtAuth {
    /// Check tokens as `config` says, with the key set fetched (or read)
    /// now: an issuer that cannot be reached is an error at start, not a
    /// refusal of every token later. The set is fetched again every
    /// [`JwtConfig::refresh_every`] from then on, on the current tokio
    /// runtime, for as long as the `JwtAuth` lives.
    pub async fn connect(config: JwtConfig) -> Result<JwtAuth, String> {
        if config.leeway > MAX_LEEWAY {
            return Err(format!(
                "a leeway of {} s is over the {} s allowed",
                config.leeway.as_secs(),
                MAX_LEEWAY.as_secs()
            ));
        }
        let hour = Duration::from_secs(1)..=Duration::from_secs(3600);
        if !hour.contains(&config.refetch_after) {
            return Err("the refetch interval is 1 s to an hour".to_owned());
        }
        if !hour.contains(&config.refresh_every) {
            return Err("the refresh interval is 1 s to an hour".to_owned());
        }
        let (set, text) = load(&config.jwks).await?;
        let shared = Arc::new(Shared {
            config,
            keys: RwLock::new(Keys { set, text }),
            fetch: Mutex::new(Fetch {
                attempted: Instant::now(),
                running: false,
            }),
            fetched: tokio::sync::watch::Sender::new(0),
            checked: Mutex::new(HashMap::new()),
        });
        tokio::spawn(refresh(Arc::downgrade(&shared)));
        Ok(JwtAuth { shared })
    }
}

/// Fetch the key set of `shared` every `refresh_every` while it lives.
async fn refresh(shared: Weak<Shared>) {
    let every = match shared.upgrade() {
        Some(s) => s.config.refresh_every,
        None => return,
    };
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(s) = shared.upgrade() else { return };
        // A fetch for an unknown key a moment ago counts as this one.
        let _ = s.start_fetch(every / 2);
    }
}

impl Shared {
    /// The key for a token of `alg` with key id `kid`, fetching the set once
    /// more when the id is unknown (at most one attempt every
    /// [`JwtConfig::refetch_after`]), waiting at most [`WAIT_FOR_KEYS`].
    async fn key(
        self: &Arc<Self>,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, AuthError> {
        if let Some(key) = self.find(kid, alg)? {
            return Ok(key);
        }
        let mut fetched = self.fetched.subscribe();
        if let Started::Running = self.start_fetch(self.config.refetch_after) {
            match tokio::time::timeout(WAIT_FOR_KEYS, fetched.changed()).await {
                Ok(_) => {
                    if let Some(key) = self.find(kid, alg)? {
                        return Ok(key);
                    }
                }
                Err(_) => {
                    return Err(AuthError::Unavailable(format!(
                        "the issuer's key set did not arrive within {} s",
                        WAIT_FOR_KEYS.as_secs()
                    )));
                }
            }
        }
        Err(AuthError::Invalid(match kid {
            Some(kid) => format!("the token's key `{kid}` is not one of the issuer's keys"),
            None => "the token names no key (`kid`) and the issuer has several".to_owned(),
        }))
    }

    /// Start a fetch of the key set unless one is under way or the last
    /// attempt was less than `gap` ago. The fetch runs on its own task: it
    /// replaces the set when it succeeds (forgetting the remembered tokens
    /// when the set changed), and counts as an attempt either way.
    fn start_fetch(self: &Arc<Self>, gap: Duration) -> Started {
        {
            let mut f = lock(&self.fetch);
            if f.running {
                return Started::Running;
            }
            if f.attempted.elapsed() < gap {
                return Started::NotDue;
            }
            f.running = true;
            f.attempted = Instant::now();
        }
        let shared = self.clone();
        tokio::spawn(async move {
            match load(&shared.config.jwks).await {
                Ok((set, text)) => {
                    let changed = crate::sync::read(&shared.keys).text != text;
                    if changed {
                        *crate::sync::write(&shared.keys) = Keys { set, text };
                        lock(&shared.checked).clear();
                    }
                }
                Err(e) => tracing::warn!("the issuer's key set could not be fetched again: {e}"),
            }
            lock(&shared.fetch).running = false;
            shared.fetched.send_modify(|n| *n += 1);
        });
        Started::Running
    }

    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Result<Option<DecodingKey>, AuthError> {
        let keys = crate::sync::read(&self.keys);
        let jwk = match kid {
            Some(kid) => keys.set.find(kid),
            None if keys.set.keys.len() == 1 => keys.set.keys.first(),
            None => None,
        };
        let Some(jwk) = jwk else {
            return Ok(None);
        };
        if let Some(declared) = &jwk.common.key_algorithm
            && format!("{declared:?}") != format!("{alg:?}")
        {
            return Err(AuthError::Invalid(format!(
                "the token is signed with {alg:?}, but its key is for {declared:?}"
            )));
        }
        let key = DecodingKey::from_jwk(jwk)
            .map_err(|e| AuthError::Invalid(format!("the issuer's key cannot be read: {e}")))?;
        if key.family() != alg.family() {
            return Err(AuthError::Invalid(format!(
                "the token is signed with {alg:?}, which its key's type cannot verify"
            )));
        }
        Ok(Some(key))
    }

    async fn check(self: &Arc<Self>, token: &str) -> Result<Caller, AuthError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((caller, until)) = lock(&self.checked).get(&digest)
            && Instant::now() < *until
        {
            return Ok(caller.clone());
        }
        let (caller, exp) = self.verify(token).await?;
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let left = Duration::from_secs(exp.saturating_sub(now_unix)).min(CHECKED_FOR);
        let mut checked = lock(&self.checked);
        if checked.len() >= MAX_CHECKED {
            let now = Instant::now();
            checked.retain(|_, (_, until)| *until > now);
            if checked.len() >= MAX_CHECKED {
                checked.clear();
            }
        }
        checked.insert(digest, (caller.clone(), Instant::now() + left));
        Ok(caller)
    }

    /// `token` checked whole: its caller, and its `exp`.
    async fn verify(self: &Arc<Self>, token: &str) -> Result<(Caller, u64), AuthError> {
        let header = decode_header(token)
            .map_err(|e| AuthError::Invalid(format!("the token is not a JWT: {e}")))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(AuthError::Invalid(format!(
                "tokens signed with {:?} are refused: only asymmetric algorithms (RS, PS, ES, EdDSA) are",
                header.alg
            )));
        }
        if let Some(crit) = &header.crit {
            return Err(AuthError::Invalid(format!(
                "the token's `crit` header names extensions this server does not implement ({})",
                crit.join(", ")
            )));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut v = Validation::new(header.alg);
        v.set_issuer(&[&self.config.issuer]);
        v.set_audience(&[&self.config.audience]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.validate_nbf = true;
        v.leeway = self.config.leeway.as_secs();
        let data = decode::<Map<String, Value>>(token, &key, &v).map_err(|e| {
            AuthError::Invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
                ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
                ErrorKind::InvalidIssuer => format!(
                    "the token is not from the issuer this server trusts ({})",
                    self.config.issuer
                ),
                ErrorKind::InvalidAudience => format!(
                    "the token is not for this resource (its audience is not {})",
                    self.config.audience
                ),
                ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
                ErrorKind::MissingRequiredClaim(c) => format!("the token has no `{c}` claim"),
                other => format!("the token is refused: {other:?}"),
            })
        })?;
        let exp = data.claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        Ok((self.caller(data.claims)?, exp))
    }

    /// The caller the claims describe (see [`caller_of`]).
    fn caller(&self, claims: Map<String, Value>) -> Result<Caller, AuthError> {
        let subject = claims.get("sub").and_then(Value::as_str).map(str::to_owned);
        let mut scopes: BTreeSet<String> = BTreeSet::new();
        if let Some(s) = claims.get("scope").and_then(Value::as_str) {
            scopes.extend(s.split_whitespace().map(str::to_owned));
        }
        if let Some(list) = claims.get("scp").and_then(Value::as_array) {
            scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        let role = match &self.config.role_claim {
            None => None,
            Some(claim) => match claims.get(claim) {
                None | Some(Value::Null) => None,
                Some(Value::String(r)) => Some(AgentRole::parse(r).ok_or_else(|| {
                    let roles: Vec<&str> = AgentRole::ALL.iter().map(|r| r.as_str()).collect();
                    AuthError::Invalid(format!(
                        "the token's `{claim}` claim names role `{r}`, which is not one of {}",
                        roles.join(", ")
                    ))
                })?),
                Some(_) => {
                    return Err(AuthError::Invalid(format!(
                        "the token's `{claim}` claim is not a role name"
                    )));
                }
            },
        };
        Ok(caller_of(subject, role, scopes))
    }
}

impl Authenticator for JwtAuth {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Caller, AuthError>> {
        Box::pin(async move { self.shared.check(bearer(request)?).await })
    }

    fn authorization_servers(&self) -> Vec<String> {
        vec![self.shared.config.issuer.clone()]
    }
}

/// The key set at `source`, and its text: read, or fetched (within
/// [`FETCH_WITHIN`] and 1 MiB).
async fn load(source: &JwksSource) -> Result<(JwkSet, Vec<u8>), String> {
    let text = match source {
        JwksSource::File(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                crate::files::read_bounded(&path, MAX_JWKS_BYTES as u64)
                    .map_err(|e| format!("the key set {}: {e}", path.display()))
            })
            .await
            .map_err(|e| e.to_string())??
        }
        JwksSource::Url(url) => tokio::time::timeout(FETCH_WITHIN, fetch(url))
            .await
            .map_err(|_| {
                format!(
                    "the key set at {url} did not arrive within {} s",
                    FETCH_WITHIN.as_secs()
                )
            })??,
    };
    if text.len() > MAX_JWKS_BYTES {
        return Err(format!("the key set is over {MAX_JWKS_BYTES} bytes"));
    }
    crate::files::refuse_duplicate_keys(&text)
        .map_err(|e| format!("the key set is not a JWKS: {e}"))?;
    let set: JwkSet =
        serde_json::from_slice(&text).map_err(|e| format!("the key set is not a JWKS: {e}"))?;
    Ok((set, text))
}

async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    // No Nagle delay on any write of the fetch (every HTTP path of the crate
    // sets TCP_NODELAY).
    let mut tcp = hyper_util::client::legacy::connect::HttpConnector::new();
    tcp.set_nodelay(true);
    tcp.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(provider)
        .map_err(|e| e.to_string())?
        .https_or_http()
        .enable_http1()
        .wrap_connector(tcp);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build::<_, Empty<Bytes>>(https);
    let response = client
        .get(uri)
        .await
        .map_err(|e| format!("the key set at {url} cannot be fetched: {e}"))?;
    if !response.status().is_success() {
        return Err(format!(
            "the key set at {url} answered {}",
            response.status()
        ));
    }
    let body = Limited::new(response.into_body(), MAX_JWKS_BYTES)
        .collect()
        .await
        .map_err(|e| format!("the key set at {url} cannot be read: {e}"))?;
    Ok(body.to_bytes().to_vec())
}
