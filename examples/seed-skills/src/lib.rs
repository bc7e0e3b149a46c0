//! The skill examples of the seed documents, as real skills:
//!
//! - AI-COS skill model: [`seo_role_audit`], [`rag_reindex`], [`vlevel_calculator`],
//!   [`routes_sync`];
//! - Brain OS registry v2: [`search_notes`], [`read_note`], [`summarize_text`];
//! - Chimera workflows: [`echo`], [`normalize_handle`]; and [`count_slowly`],
//!   long-running work in miniature (progress, cancellation);
//! - AI-COS agent model: the agents [`vlevel_agent`] (`agent.seo.vlevel`) and
//!   [`seo_architect_agent`] (`agent.seo.architect`), and the skill
//!   [`canonical_check`] the first one lists.
//!
//! They work on local data under [`DATA_DIR`] (an Obsidian-style vault, a Remix
//! routes folder, RAG documents, an SEO page table), loaded by [`demo_resources`].

pub mod caps;
pub mod confined;
pub mod stores;

mod agents;
mod aicos;
mod brain;
mod chimera;
mod defaults;

pub use agents::*;
pub use aicos::*;
pub use brain::*;
pub use chimera::*;

use std::path::Path;
use std::sync::Arc;

use skill_runtime::{Registry, Resources, Runtime, RuntimeBuilder};

/// The example data shipped with this crate, relative to the repository
/// root, where the README's commands run. A path read at run time, not the
/// build machine's: a binary copied elsewhere takes `--data DIR`.
pub const DATA_DIR: &str = "examples/seed-skills/data";

/// The example data: `given`, else [`DATA_DIR`] under the working
/// directory, else under each folder above this program's file (so a
/// checkout's binary finds it from anywhere). Found at run time, never a
/// path of the machine that built the program; the error says where it
/// looked and how to say where it is.
pub fn data_dir(given: Option<&Path>) -> Result<std::path::PathBuf, String> {
    if let Some(dir) = given {
        return match dir.is_dir() {
            true => Ok(dir.to_path_buf()),
            false => Err(format!(
                "the example data folder {} is not a folder here (working directory {})",
                dir.display(),
                std::env::current_dir()
                    .map_or_else(|_| "unknown".into(), |d| d.display().to_string())
            )),
        };
    }
    let mut tried = vec![std::path::PathBuf::from(DATA_DIR)];
    if let Ok(exe) = std::env::current_exe() {
        tried.extend(exe.ancestors().skip(1).map(|a| a.join(DATA_DIR)));
    }
    tried.iter().find(|d| d.is_dir()).cloned().ok_or_else(|| {
        format!(
            "no example data found (looked for {DATA_DIR} under the working directory and above this program); pass --data DIR"
        )
    })
}

/// Every resource the seed skills' capabilities grant, over the data in `dir`,
/// and the script ops' root, `ops/` beside it (`examples/seed-skills/ops`),
/// when there is one: without it the script op refuses to run, saying so,
/// and everything else serves.
pub fn demo_resources(dir: &Path) -> std::io::Result<Resources> {
    let mut resources = Resources::new()
        .with(stores::SeoDb::load(&dir.join("seo"))?)
        .with(stores::Vault::new(dir.join("vault")))
        .with(stores::RoutesDir::new(dir.join("remix/app/routes")))
        .with(stores::RagCorpus::new(dir.join("rag")))
        .with(stores::VectorStore::default())
        .with(stores::VersionCache::default());
    let ops = dir.join("../ops");
    if ops.is_dir() {
        #[expect(
            clippy::disallowed_methods,
            reason = "set-up, not a handler: the root the script ops' capability (`caps::ScriptRun`) grants"
        )]
        let root = skill_runtime::op::ScriptRoot::new(ops)?;
        resources = resources.with(root);
    }
    Ok(resources)
}

/// A runtime for the seed skills: the resources over the data in `dir`, and the
/// rollback actions their postconditions declare.
pub fn runtime_builder(registry: Arc<Registry>, dir: &Path) -> std::io::Result<RuntimeBuilder> {
    Ok(Runtime::builder(registry)
        .resources(demo_resources(dir)?)
        .rollback("rollback_to_previous_version", rollback_to_previous_version)
        .rollback("revert_route_changes", revert_route_changes)
        .rollback("remove_audit_entry", remove_audit_entry))
}
