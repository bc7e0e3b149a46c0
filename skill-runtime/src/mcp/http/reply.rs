//! A response's body, and a JSON-RPC error as an HTTP answer.

use std::convert::Infallible;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

/// A response's body.
pub type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// A JSON-RPC error `code` with `message` for request `id`, answered with
/// `status`.
pub(super) fn rpc_error(
    status: StatusCode,
    id: Value,
    code: i64,
    message: String,
) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(full(body.to_string()))
        .expect("a status, a header and a body make a response")
}

/// `text` as a whole body.
pub(super) fn full(text: String) -> Body {
    Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed()
}
