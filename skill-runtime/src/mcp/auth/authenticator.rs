//! The authenticator trait, its errors, and how credentials become a caller.

use std::collections::BTreeSet;
use std::sync::Arc;

use hyper::http::request::Parts;
use skill_core::manifest::PermissionLevel;

use crate::exec::policy::BoxFuture;
use crate::model::caller::{Caller, Source};

/// Turns a request into its caller.
///
/// Implementations read the request's headers (`Authorization`, usually)
/// and answer the caller, or why there is none. The error's words reach the
/// client (in `WWW-Authenticate`): they must say what is wrong without
/// repeating the credential.
pub trait Authenticator: Send + Sync + 'static {
    /// The caller `request` is from.
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Caller, AuthError>>;

    /// The authorization servers a client gets its tokens from (RFC 9728's
    /// `authorization_servers`); none for schemes without one (API keys).
    fn authorization_servers(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A shared authenticator is one: the same one may sign in the MCP
/// endpoint's callers and the console's.
impl<A: Authenticator + ?Sized> Authenticator for Arc<A> {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Caller, AuthError>> {
        (**self).authenticate(request)
    }

    fn authorization_servers(&self) -> Vec<String> {
        (**self).authorization_servers()
    }
}

/// Why a request has no caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// It carries no credentials: 401, with where to get some.
    #[error("the request carries no credentials")]
    Missing,
    /// Its credentials do not hold (expired, wrong signature, wrong audience,
    /// unknown key, ...): 401 with `error="invalid_token"`.
    #[error("{0}")]
    Invalid(String),
    /// The authenticator could not decide (its key set is unreachable): 503.
    #[error("{0}")]
    Unavailable(String),
}

/// The bearer credential of `request`, if its `Authorization` header is one
/// (the scheme's name in any case, one header only).
pub fn bearer(request: &Parts) -> Result<&str, AuthError> {
    let mut values = request.headers.get_all(hyper::header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(AuthError::Missing);
    };
    if values.next().is_some() {
        return Err(AuthError::Invalid(
            "the request has more than one Authorization header".to_owned(),
        ));
    }
    let value = value
        .to_str()
        .map_err(|_| AuthError::Invalid("the Authorization header is not text".to_owned()))?;
    match value.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim())
        }
        _ => Err(AuthError::Invalid(
            "the Authorization header is not `Bearer <token>`".to_owned(),
        )),
    }
}

/// The scopes that set a caller's permission level: `skills:read`,
/// `skills:execute`, `skills:admin` (the highest held wins).
pub const LEVEL_SCOPES: [(&str, PermissionLevel); 3] = [
    ("skills:read", PermissionLevel::Read),
    ("skills:execute", PermissionLevel::Execute),
    ("skills:admin", PermissionLevel::Admin),
];

/// The caller a set of scopes (and an optional role and subject) describe:
/// every scope is an MCP permission (`seo:read` grants the tools that need
/// `seo:read`); the level scopes of [`LEVEL_SCOPES`] set the permission
/// level; the role, when given, is the agent role `reusable_by` is checked
/// against. The source is `webhook`, as for every MCP call.
pub fn caller_of(
    subject: Option<String>,
    role: Option<skill_core::manifest::AgentRole>,
    scopes: BTreeSet<String>,
) -> Caller {
    let level = LEVEL_SCOPES
        .iter()
        .filter(|(s, _)| scopes.contains(*s))
        .map(|(_, l)| *l)
        .max();
    Caller {
        agent_role: role,
        permission_level: level,
        permissions: Some(Arc::new(scopes)),
        user_id: subject,
        source: Source::Webhook,
        ..Caller::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut b = hyper::Request::builder();
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn a_bearer_credential_is_read_strictly() {
        assert_eq!(bearer(&parts(&[])), Err(AuthError::Missing));
        assert_eq!(
            bearer(&parts(&[("authorization", "Bearer abc")])),
            Ok("abc")
        );
        assert_eq!(
            bearer(&parts(&[("authorization", "bearer  abc ")])),
            Ok("abc")
        );
        for bad in ["Basic abc", "Bearer", "Bearer  ", "abc"] {
            assert!(matches!(
                bearer(&parts(&[("authorization", bad)])),
                Err(AuthError::Invalid(_))
            ));
        }
        let two = parts(&[("authorization", "Bearer a"), ("authorization", "Bearer b")]);
        assert!(matches!(bearer(&two), Err(AuthError::Invalid(_))));
    }

    #[test]
    fn scopes_make_permissions_and_the_highest_level() {
        let scopes: BTreeSet<String> = ["seo:read", "skills:read", "skills:execute"]
            .map(str::to_owned)
            .into();
        let c = caller_of(Some("ann".into()), None, scopes);
        assert_eq!(c.permission_level, Some(PermissionLevel::Execute));
        assert!(c.permissions.unwrap().contains("seo:read"));
        assert_eq!(c.user_id.as_deref(), Some("ann"));
        assert_eq!(c.source, Source::Webhook);
    }
}
