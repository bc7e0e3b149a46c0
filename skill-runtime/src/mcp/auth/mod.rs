//! Who an HTTP request is from: an [`Authenticator`] turns a request's
//! headers into the [`Caller`] its tools are listed for and its jobs run as.
//!
//! Two come with the crate: [`ApiKeys`] (service-to-service: a file of
//! hashed keys, each naming its caller) and, with feature `mcp-jwt`,
//! `JwtAuth` (OAuth 2.1 / OIDC bearer tokens checked against a JWKS). Any
//! other scheme is one implementation of the trait away. Without an
//! authenticator a server runs every request as its own caller, which
//! `skill-examples mcp` allows on loopback only.

pub(crate) mod authenticator;
#[cfg(feature = "mcp-jwt")]
mod jwt;
mod keys;

pub use self::authenticator::{AuthError, Authenticator, LEVEL_SCOPES, bearer, caller_of};
#[cfg(feature = "mcp-jwt")]
pub use self::jwt::{CHECKED_FOR, JwksSource, JwtAuth, JwtConfig, MAX_LEEWAY, REFETCH_AFTER};
pub use self::keys::{ApiKeys, KeyEntry, NewKey};
