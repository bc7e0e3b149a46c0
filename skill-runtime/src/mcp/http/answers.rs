//! What an authenticated endpoint answers about authentication, as the MCP
//! authorization specification (2025-06-18 onward) makes it an OAuth 2.1
//! resource server: the protected resource metadata (RFC 9728), 401 with
//! `WWW-Authenticate` naming that metadata, 403 `insufficient_scope` naming
//! the scope a call needs (RFC 6750).

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::reply::{Body, rpc_error};
use crate::mcp::auth::authenticator::{AuthError, Authenticator, LEVEL_SCOPES};
use crate::mcp::server::McpServer;

/// Where the metadata document is found
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The URL of the endpoint: the configured one, or the request's `Host`
/// over `http` (a deployment behind TLS configures its URL).
fn resource(resource_url: Option<&str>, parts: &Parts) -> String {
    if let Some(url) = resource_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = parts
        .headers
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let path = parts.uri.path();
    let path = path.strip_prefix(WELL_KNOWN).unwrap_or(path);
    let path = if path.is_empty() || path == "/" {
        "/mcp"
    } else {
        path
    };
    format!("http://{host}{path}")
}

/// The metadata document's URL for the endpoint (RFC 9728 §3.1: the
/// well-known path between the host and the resource's path).
pub(super) fn metadata_url(resource_url: Option<&str>, parts: &Parts) -> String {
    let resource = resource(resource_url, parts);
    match resource.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            format!("{scheme}://{host}{WELL_KNOWN}{path}")
        }
        None => format!("{resource}{WELL_KNOWN}"),
    }
}

/// The protected resource metadata (RFC 9728): the resource, the
/// authorization servers its tokens come from, the scopes its tools need.
pub(super) fn metadata(
    server: &McpServer,
    authenticator: &dyn Authenticator,
    parts: &Parts,
) -> Response<Body> {
    let mut scopes: Vec<&str> = server.all_permissions().into_iter().collect();
    scopes.extend(LEVEL_SCOPES.iter().map(|(s, _)| *s));
    scopes.sort_unstable();
    scopes.dedup();
    let document = json!({
        "resource": resource(server.front.resource_url.as_deref(), parts),
        "authorization_servers": authenticator.authorization_servers(),
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
    });
    json_response(StatusCode::OK, &document, None)
}

/// A request without a caller: 401 with the challenge (503 when the
/// authenticator could not decide).
pub(super) fn refused(e: &AuthError, metadata_url: &str) -> Response<Body> {
    let challenge = match e {
        AuthError::Missing => format!("Bearer resource_metadata=\"{metadata_url}\""),
        AuthError::Invalid(why) => format!(
            "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata_url}\"",
            quoted(why)
        ),
        AuthError::Unavailable(why) => {
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                -32603,
                format!("the request cannot be authenticated now: {why}"),
            );
        }
    };
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": format!("unauthorized: {e}")},
    });
    json_response(StatusCode::UNAUTHORIZED, &body, Some(challenge))
}

/// A `tools/call` whose tool needs scopes the caller's token lacks: 403,
/// naming them.
pub(super) fn insufficient_scope(
    missing: &[&str],
    metadata_url: &str,
    id: Value,
) -> Response<Body> {
    let scope = missing.join(" ");
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata_url}\"",
        quoted(&scope)
    );
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32001,
            "message": format!("forbidden: the call needs scope `{scope}`, which the token lacks"),
            "data": {"missing_scopes": missing},
        },
    });
    json_response(StatusCode::FORBIDDEN, &body, Some(challenge))
}

/// `s` fit to stand inside a quoted string of a header: no quotes, no
/// backslashes, no control characters.
fn quoted(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

fn json_response(status: StatusCode, body: &Value, challenge: Option<String>) -> Response<Body> {
    let mut b = Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json");
    if let Some(c) = challenge {
        b = b.header(hyper::header::WWW_AUTHENTICATE, c);
    }
    b.body(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|e| match e {})
            .boxed(),
    )
    .expect("a status, headers and a body make a response")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(path: &str, host: &str) -> Parts {
        hyper::Request::builder()
            .uri(path)
            .header("host", host)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resource_path() {
        let p = parts("/mcp", "127.0.0.1:8080");
        assert_eq!(
            metadata_url(None, &p),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url(Some("https://mcp.example.com/tools/mcp/"), &p),
            "https://mcp.example.com/.well-known/oauth-protected-resource/tools/mcp"
        );
        assert_eq!(
            resource(
                None,
                &parts("/.well-known/oauth-protected-resource/mcp", "h:1")
            ),
            "http://h:1/mcp"
        );
        assert_eq!(quoted("a \"b\"\n"), "a 'b''");
    }
}
