//! The local stores the seed skills work on: small, real, and under the example's
//! control (JSON and Markdown files in `data/`, in-memory tables behind locks).

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

/// Lock a mutex even if a panicking holder poisoned it: every writer here leaves
/// the data consistent before it can panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One page of the SEO page table.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct PageRecord {
    pub url: String,
    /// PageRole: R1 router (listing) ... R4 expert content.
    pub role: String,
    pub has_expert_content: bool,
    pub product_count: u32,
    /// The page's `<link rel="canonical">` target, when it has one.
    #[serde(default)]
    pub canonical: Option<String>,
}

/// A row of the `__seo_routes` table.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct RouteRow {
    pub role: Option<String>,
}

/// A row of the `__seo_audit_log` table.
#[derive(Clone, Debug, Serialize)]
pub struct AuditLogEntry {
    pub trace_id: String,
    pub audited: usize,
    pub violations: usize,
}

/// The SEO database: pages (read), the audit log (write), routes (upsert).
#[derive(Debug, Default)]
pub struct SeoDb {
    pub pages: BTreeMap<String, PageRecord>,
    pub audit_log: Mutex<Vec<AuditLogEntry>>,
    pub routes: Mutex<BTreeMap<String, RouteRow>>,
    /// The routes table before each sync that wrote it, by job id, so the
    /// `revert_route_changes` rollback action can restore it.
    pub routes_before: Snapshots<BTreeMap<String, RouteRow>>,
}

/// The state before recent jobs, by job id; only the most recent
/// [`Snapshots::KEEP`] are kept.
#[derive(Debug)]
pub struct Snapshots<T>(Mutex<VecDeque<(String, T)>>);

impl<T> Default for Snapshots<T> {
    fn default() -> Self {
        Snapshots(Mutex::default())
    }
}

impl<T> Snapshots<T> {
    pub const KEEP: usize = 64;

    pub fn save(&self, job_id: &str, state: T) {
        let mut s = lock(&self.0);
        if s.len() == Self::KEEP {
            s.pop_front();
        }
        s.push_back((job_id.to_owned(), state));
    }

    pub fn take(&self, job_id: &str) -> Option<T> {
        let mut s = lock(&self.0);
        let i = s.iter().position(|(j, _)| j == job_id)?;
        s.remove(i).map(|(_, t)| t)
    }
}

impl SeoDb {
    /// Load `pages.json` and `routes.json` from `dir`.
    pub fn load(dir: &Path) -> io::Result<SeoDb> {
        let pages: Vec<PageRecord> = read_json(&dir.join("pages.json"))?;
        let routes: BTreeMap<String, RouteRow> = read_json(&dir.join("routes.json"))?;
        Ok(SeoDb {
            pages: pages.into_iter().map(|p| (p.url.clone(), p)).collect(),
            audit_log: Mutex::default(),
            routes: Mutex::new(routes),
            routes_before: Snapshots::default(),
        })
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "resource loading: the app loads the stores before any skill runs"
)]
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> io::Result<T> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

/// Resolve `relative` under `root`, refusing anything that could leave it by
/// its spelling (`..`, an absolute path, a prefix). What it names on disk is
/// checked by [`read_inside`].
pub(crate) fn inside(root: &Path, relative: &str) -> Option<PathBuf> {
    let rel = Path::new(relative);
    let safe = !relative.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
    safe.then(|| root.join(rel))
}

/// The most a data file read by a skill may hold.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Read the file `relative` names under `root`, confined to it by what is on
/// disk, not only by the spelling: the resolved path (symlinks followed) must
/// stay under the resolved root, the file must be a regular file (a FIFO or a
/// device would block or never end), and at most [`MAX_FILE_BYTES`] are read.
/// The file is opened without following a last symlink and without blocking,
/// so a swap between the check and the open cannot escape or hang.
/// `NotFound` when nothing is there; `InvalidInput` when the path leaves the
/// root or names something that is not a regular file; `FileTooLarge` past
/// the cap.
#[expect(
    clippy::disallowed_methods,
    reason = "the one confined file read of the example stores, behind their capabilities"
)]
pub(crate) fn read_inside(root: &Path, relative: &str) -> io::Result<String> {
    use std::io::Read;
    let refuse =
        |why: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("`{relative}` {why}"));
    let path =
        inside(root, relative).ok_or_else(|| refuse("is not a path inside the data root"))?;
    let root = std::fs::canonicalize(root)?;
    let resolved = std::fs::canonicalize(&path)?;
    if !resolved.starts_with(&root) {
        return Err(refuse("leads outside the data root"));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc_flags::O_NOFOLLOW | libc_flags::O_NONBLOCK);
    }
    let file = options.open(&resolved)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse("is not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "`{relative}` is {} bytes, over the limit of {MAX_FILE_BYTES}",
                meta.len()
            ),
        ));
    }
    let mut text = String::new();
    file.take(MAX_FILE_BYTES).read_to_string(&mut text)?;
    Ok(text)
}

/// The two `open(2)` flags [`read_inside`] needs, as Linux and the BSDs
/// number them (std does not export them, and a libc dependency for two
/// constants is not worth it).
#[cfg(unix)]
mod libc_flags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const O_NOFOLLOW: i32 = 0o400_000;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub const O_NOFOLLOW: i32 = 0x100;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const O_NONBLOCK: i32 = 0o4000;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub const O_NONBLOCK: i32 = 0x4;
}

/// An Obsidian-style vault: a folder of Markdown notes.
#[derive(Debug)]
pub struct Vault {
    pub root: PathBuf,
}

impl Vault {
    pub fn new(root: PathBuf) -> Self {
        Vault { root }
    }

    /// Every note, as (path relative to the vault with `/` separators, text), sorted.
    #[expect(
        clippy::disallowed_methods,
        reason = "the Vault resource is what obsidian.read and vault.search grant"
    )]
    pub fn notes(&self) -> io::Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        let mut dirs = vec![self.root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let path = entry.path();
                // The entry's own type: a symlink is neither followed into a
                // directory (no escape, no loop) nor read as a note.
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    dirs.push(path);
                } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
                    let rel = path.strip_prefix(&self.root).unwrap_or(&path);
                    let rel: Vec<String> = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    let rel = rel.join("/");
                    let text = read_inside(&self.root, &rel)?;
                    out.push((rel, text));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// A Remix `app/routes` folder (flat-routes naming).
#[derive(Debug)]
pub struct RoutesDir {
    pub root: PathBuf,
}

impl RoutesDir {
    pub fn new(root: PathBuf) -> Self {
        RoutesDir { root }
    }
}

/// RAG source documents: `<root>/<namespace with ':' as '_'>/<document id>.md`.
#[derive(Debug)]
pub struct RagCorpus {
    pub root: PathBuf,
}

impl RagCorpus {
    pub fn new(root: PathBuf) -> Self {
        RagCorpus { root }
    }

    pub fn namespace_dir(&self, namespace: &str) -> PathBuf {
        self.root.join(namespace.replace(':', "_"))
    }
}

/// One published index version of a namespace.
#[derive(Clone, Debug, Default)]
pub struct IndexVersion {
    pub version: u64,
    /// document id -> (content hash, embedding)
    pub vectors: BTreeMap<String, (u64, Vec<f32>)>,
}

/// An in-memory vector store; each namespace's index is replaced atomically.
#[derive(Debug, Default)]
pub struct VectorStore {
    pub namespaces: Mutex<BTreeMap<String, IndexVersion>>,
    /// (namespace, index) before each reindex, by job id, for the
    /// `rollback_to_previous_version` rollback action.
    pub previous: Snapshots<(String, Option<IndexVersion>)>,
}

/// A key-value cache (the seed's `redis::rag_version`).
#[derive(Debug, Default)]
pub struct VersionCache {
    pub entries: Mutex<BTreeMap<String, String>>,
}
