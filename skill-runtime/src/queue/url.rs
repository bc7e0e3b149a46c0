//! The URL of a store (Redis, PostgreSQL), which may carry a password:
//! written out, in a message, a log line or a `Debug` dump, it never shows
//! it.

use std::fmt;

/// A store's URL. It prints with its password masked
/// (`redis://fleet:***@db:6379/0`, `postgres://app:***@db/skills?sslmode=require`),
/// in `Display` and `Debug` alike, so that no log line, error or dump of a
/// configuration repeats it; [`SecretUrl::expose`] gives the URL itself, for
/// the client that connects with it.
///
/// ```
/// use skill_runtime::queue::SecretUrl;
///
/// let url = SecretUrl::from("redis://fleet:s3cret-pw@db:6379/0");
/// assert_eq!(url.to_string(), "redis://fleet:***@db:6379/0");
/// assert_eq!(format!("{url:?}"), "\"redis://fleet:***@db:6379/0\"");
/// assert_eq!(url.expose(), "redis://fleet:s3cret-pw@db:6379/0");
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// The URL itself, password included: for the client that connects.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL as it may be shown: the password of its user information,
    /// and the value of any `password=` query parameter, replaced by `***`.
    pub fn shown(&self) -> String {
        masked(&self.0)
    }
}

/// `url` with its password masked (see [`SecretUrl::shown`]); each of a
/// cluster's comma-separated nodes.
fn masked(url: &str) -> String {
    if url.contains(',') {
        return url.split(',').map(masked_one).collect::<Vec<_>>().join(",");
    }
    masked_one(url)
}

fn masked_one(url: &str) -> String {
    let mut out = match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let info = &url[scheme + 3..at];
            let user = match info.split_once(':') {
                // `user:password`: the user is kept.
                Some((user, _)) => format!("{user}:***"),
                // One word before `@` is a password to Redis (`AUTH pw`).
                None => "***".to_owned(),
            };
            format!("{}://{user}@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    };
    if let Some(q) = out.find('?') {
        let (base, query) = out.split_at(q + 1);
        let query: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out = format!("{base}{}", query.join("&"));
    }
    out
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.shown(), f)
    }
}

impl From<String> for SecretUrl {
    fn from(url: String) -> SecretUrl {
        SecretUrl(url)
    }
}

impl From<&String> for SecretUrl {
    fn from(url: &String) -> SecretUrl {
        SecretUrl(url.clone())
    }
}

impl From<&str> for SecretUrl {
    fn from(url: &str) -> SecretUrl {
        SecretUrl(url.to_owned())
    }
}

impl std::str::FromStr for SecretUrl {
    type Err = std::convert::Infallible;

    fn from_str(url: &str) -> Result<SecretUrl, Self::Err> {
        Ok(SecretUrl::from(url))
    }
}

#[cfg(test)]
mod tests {
    use super::masked;

    #[test]
    fn passwords_stay_out_of_what_is_shown() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            ("redis://:hunter2@db:6379", "redis://:***@db:6379"),
            ("rediss://u:p@h/1", "rediss://u:***@h/1"),
            ("redis://tok3n@h", "redis://***@h"),
            ("redis://u:p@ss@h", "redis://u:***@h"),
            (
                "redis://u:pw@h1:7000,redis://u:pw@h2:7001",
                "redis://u:***@h1:7000,redis://u:***@h2:7001",
            ),
            (
                "postgres://h/db?user=a&password=s3cret&sslmode=require",
                "postgres://h/db?user=a&password=***&sslmode=require",
            ),
        ] {
            assert_eq!(masked(url), shown, "{url}");
        }
    }
}
