//! API keys for service-to-service callers: a JSON file of keys, each kept
//! as its SHA-256 digest (never the key itself), each naming the caller it
//! stands for.
//!
//! A key is 32 random bytes: guessing one is out of reach, so a fast digest
//! is the right store (a slow password hash protects low-entropy secrets,
//! which these are not), and the digest comparison is constant-time. The
//! file is read at every request and compared with what was read before by
//! its bytes (not its time or length, which a writer can keep), so a key
//! removed from it stops working at the next request, without a restart; a
//! file that cannot be read (gone, not a regular file, not a key file)
//! refuses every key (503) rather than keep serving stale ones.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hyper::http::request::Parts;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use skill_core::manifest::{AgentRole, PermissionLevel};

use super::authenticator::{AuthError, Authenticator, bearer};
use crate::exec::policy::BoxFuture;
use crate::model::caller::{Caller, Source};
use crate::sync::lock;

/// One key of the file: the caller it stands for, and its digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// Who the key is for; the caller's user id.
    pub name: String,
    /// `sha256:` and the hex digest of the key.
    pub hash: String,
    /// The agent role the caller acts as (`reusable_by` is checked against it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<AgentRole>,
    /// The caller's permission level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<PermissionLevel>,
    /// The MCP permissions granted (`seo:read`, ...).
    #[serde(default)]
    pub grants: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    keys: Vec<KeyEntry>,
}

/// A key just made: the key, shown once, and the entry stored for it.
#[derive(Debug)]
pub struct NewKey {
    /// The key: `sk_` and 64 hex digits. Not stored anywhere.
    pub key: String,
    /// What the file keeps of it.
    pub entry: KeyEntry,
}

/// API keys read from a file (see the module's documentation).
pub struct ApiKeys {
    path: PathBuf,
    loaded: Mutex<Loaded>,
}

struct Loaded {
    /// The file's bytes when it was last read, if it could be.
    bytes: Option<Vec<u8>>,
    keys: Result<Vec<KeyEntry>, String>,
}

/// The most a key file may weigh.
const MAX_KEY_FILE: u64 = 16 << 20;

impl ApiKeys {
    /// The keys of the file at `path`, which must read as a key file.
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<ApiKeys> {
        let path = path.into();
        let bytes = crate::files::read_bounded(&path, MAX_KEY_FILE)?;
        let keys = parse(&path, &bytes).map_err(std::io::Error::other)?;
        Ok(ApiKeys {
            loaded: Mutex::new(Loaded {
                bytes: Some(bytes),
                keys: Ok(keys),
            }),
            path,
        })
    }

    /// Make a key for caller `name` and add it to the file at `path`
    /// (created when missing, readable by its owner only), written whole
    /// then renamed into place so a server never reads half of it.
    pub fn add(
        path: &Path,
        name: &str,
        role: Option<AgentRole>,
        level: Option<PermissionLevel>,
        grants: Vec<String>,
    ) -> std::io::Result<NewKey> {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !plain {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("`{name}` is not a key name: letters, digits, `-`, `_`, `.`"),
            ));
        }
        let mut file = if path.exists() {
            let bytes = crate::files::read_bounded(path, MAX_KEY_FILE)?;
            KeyFile {
                keys: parse(path, &bytes).map_err(std::io::Error::other)?,
            }
        } else {
            KeyFile::default()
        };
        if file.keys.iter().any(|k| k.name == name) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "a key named `{name}` is in {} already; remove it first",
                    path.display()
                ),
            ));
        }
        let bytes: [u8; 32] = rand::random();
        let key = format!("sk_{}", hex(&bytes));
        let entry = KeyEntry {
            name: name.to_owned(),
            hash: digest(&key),
            role,
            level,
            grants,
        };
        file.keys.push(entry.clone());
        let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
        write_private(path, &text)?;
        Ok(NewKey { key, entry })
    }

    /// The entry `key` matches, in the file as it is now (parsed again when
    /// its bytes changed).
    fn find(&self, key: &str) -> Result<Option<KeyEntry>, AuthError> {
        let now = crate::files::read_bounded(&self.path, MAX_KEY_FILE);
        let mut loaded = lock(&self.loaded);
        match now {
            Ok(bytes) if loaded.bytes.as_ref() == Some(&bytes) => {}
            Ok(bytes) => {
                loaded.keys = parse(&self.path, &bytes);
                loaded.bytes = Some(bytes);
            }
            Err(e) => {
                loaded.keys = Err(e.to_string());
                loaded.bytes = None;
            }
        }
        let keys = loaded
            .keys
            .as_ref()
            .map_err(|e| AuthError::Unavailable(format!("the API key file cannot be read: {e}")))?;
        let presented = digest(key);
        // Every entry compared, each in constant time.
        let mut found = None;
        for k in keys {
            if same(k.hash.as_bytes(), presented.as_bytes()) {
                found = Some(k.clone());
            }
        }
        Ok(found)
    }
}

impl Authenticator for ApiKeys {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Caller, AuthError>> {
        Box::pin(async move {
            let key = bearer(request)?;
            let Some(k) = self.find(key)? else {
                return Err(AuthError::Invalid("the API key is not known".to_owned()));
            };
            Ok(Caller {
                agent_role: k.role,
                permission_level: k.level,
                permissions: Some(std::sync::Arc::new(k.grants.into_iter().collect())),
                user_id: Some(k.name),
                source: Source::Webhook,
                ..Caller::default()
            })
        })
    }
}

/// The keys of a key file's `bytes` (read from `path`).
fn parse(path: &Path, bytes: &[u8]) -> Result<Vec<KeyEntry>, String> {
    let value = crate::files::parse_json(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: KeyFile =
        serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))?;
    for k in &file.keys {
        let hex_digest = k.hash.strip_prefix("sha256:").unwrap_or_default();
        if hex_digest.len() != 64 || !hex_digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "{}: key `{}` has no `sha256:` digest of 64 hex digits (a file never holds a key itself)",
                path.display(),
                k.name
            ));
        }
    }
    Ok(file.keys)
}

/// `sha256:` and the hex digest of `key`.
fn digest(key: &str) -> String {
    format!("sha256:{}", hex(&Sha256::digest(key.as_bytes())))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths
/// only.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Write `text` to `path` through a file beside it, renamed into place;
/// readable by its owner only.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_equality_is_equality() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }

    #[test]
    fn a_key_is_stored_as_its_digest_and_found_by_it() {
        let dir = std::env::temp_dir().join(format!("skill-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys.json");
        let _ = std::fs::remove_file(&path);
        let made = ApiKeys::add(&path, "ci-bot", None, None, vec!["seo:read".into()]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&made.key), "the file holds the key itself");
        assert!(made.key.starts_with("sk_") && made.key.len() == 67);
        let keys = ApiKeys::open(&path).unwrap();
        assert_eq!(keys.find(&made.key).unwrap().unwrap().name, "ci-bot");
        assert_eq!(keys.find("sk_nope").unwrap(), None);
        assert!(ApiKeys::add(&path, "ci-bot", None, None, vec![]).is_err());
        assert!(ApiKeys::add(&path, "no spaces", None, None, vec![]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
