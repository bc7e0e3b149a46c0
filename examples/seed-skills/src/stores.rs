//! The local stores the seed skills work on: small, real, and under the example's
//! control (JSON and Markdown files in `data/`, in-memory tables behind locks).

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
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
    /// The job that wrote it, which the `remove_audit_entry` rollback
    /// action finds it by.
    pub job_id: String,
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

/// The most a data file read by a skill may hold.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The kinds of file a vault and a corpus hold: Markdown notes.
pub const NOTE_KINDS: &[&str] = &["md"];

/// The kinds of file a Remix routes folder holds: route modules.
pub const ROUTE_KINDS: &[&str] = &["tsx", "ts", "jsx", "js"];

/// Read the file `relative` names under `root`: a regular file of one of
/// `kinds`, at most [`MAX_FILE_BYTES`], reached without leaving the root or
/// passing through a link, whatever is swapped meanwhile (see
/// [`confined`](crate::confined)). `NotFound` when nothing is there;
/// `InvalidInput` when the path is not one the store reads; `FileTooLarge`
/// past the cap.
pub(crate) fn read_inside(root: &Path, relative: &str, kinds: &[&str]) -> io::Result<String> {
    crate::confined::read(root, relative, kinds, MAX_FILE_BYTES)
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

    /// Every note, as (path relative to the vault with `/` separators, text),
    /// sorted. Links are neither followed nor read.
    pub fn notes(&self) -> io::Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for rel in crate::confined::list(&self.root, NOTE_KINDS, true)? {
            let text = read_inside(&self.root, &rel, NOTE_KINDS)?;
            out.push((rel, text));
        }
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
