//! Export the skill registry from a build script.
//!
//! A skills crate cannot export its own registry (it would be its own
//! build-dependency), so a downstream package lists the skills crates as
//! build-dependencies and exports from its `build.rs`:
//!
//! ```no_run
//! // In build.rs `fn main`, naming the skills crates (build-dependencies):
//! // skill_build::export_or_exit(skill_build::link!(seed_skills, team_skills));
//! skill_build::export_or_exit(skill_build::link!());
//! ```
//!
//! This writes `$OUT_DIR/skill-registry.json` and `$OUT_DIR/capabilities.json`
//! (and `op-registry.json` when there are ops, `agent-registry.json` when there
//! are agents), and the same registry bytes to
//! `$SKILL_REGISTRY_OUT` when that is set (with the other files beside it). Every
//! problem (a crate listed in `link!` that contributed nothing, duplicate
//! skills, dangling call targets, invalid schemas) fails the build.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::path::{Path, PathBuf};
use std::{env, fs, io};

use skill_runtime::Registry;

#[cfg(feature = "audit")]
#[cfg_attr(docsrs, doc(cfg(feature = "audit")))]
pub mod audit;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
pub mod diff;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod formats;
pub mod scaffold;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod unified;

/// The skills crates a build script expects to contribute, as listed in [`link!`].
#[derive(Clone, Copy, Debug)]
pub struct Linked {
    crates: &'static [&'static str],
}

impl Linked {
    #[doc(hidden)]
    pub const fn new(crates: &'static [&'static str]) -> Self {
        Linked { crates }
    }

    /// The crate names, as written in `link!`.
    pub fn crates(&self) -> &'static [&'static str] {
        self.crates
    }
}

/// Reference every skills crate so the linker keeps their registrations (an
/// unreferenced crate's `inventory` entries are silently dropped), and record
/// which crates the export must find skills or capabilities from.
#[macro_export]
macro_rules! link {
    ($($krate:ident),* $(,)?) => {{
        $(
            #[allow(unused_imports)]
            use $krate as _;
        )*
        $crate::Linked::new(&[$(::core::stringify!($krate)),*])
    }};
}

/// What went wrong in an export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The linked skills do not form a valid registry.
    #[error("{0}")]
    Registry(#[from] skill_runtime::registry::RegistryError),
    #[error(
        "crate `{0}` is listed in skill_build::link! but contributed no skills or capabilities; \
         is it the right crate, and does it define skills?"
    )]
    /// A crate listed in `link!` registered no skill, op or agent.
    NothingFrom(String),
    /// The linked agents do not form a valid agent registry.
    #[error("{0}")]
    Agents(#[from] skill_runtime::agents::AgentRegistryError),
    /// Agents break the cross rules against the skill registry.
    #[error("the agent registry breaks its rules:\n{}", .0.join("\n"))]
    AgentRules(Vec<String>),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A variable cargo sets for build scripts is missing: not run by cargo.
    #[error("{0} is not set; skill_build::export runs from a build script")]
    MissingEnv(&'static str),
}

/// The files an export wrote.
#[derive(Debug)]
pub struct Exported {
    /// Where `skill-registry.json` was written.
    pub registry: PathBuf,
    /// Where `capabilities.json` was written.
    pub capabilities: PathBuf,
    /// The copy at `$SKILL_REGISTRY_OUT`, when that is set.
    pub extra: Option<PathBuf>,
    /// How many skills the registry holds.
    pub skills: usize,
    /// How many agents `agent-registry.json` holds.
    pub agents: usize,
}

/// Build the registry of `linked` crates and check that each contributed.
pub fn registry(linked: Linked) -> Result<Registry, ExportError> {
    let registry = Registry::from_inventory()?;
    let contributing = registry.contributing_crates();
    if let Some(missing) = linked.crates.iter().find(|c| !contributing.contains(*c)) {
        return Err(ExportError::NothingFrom((*missing).to_owned()));
    }
    Ok(registry)
}

/// Export from a build script: write the registry and catalog into `$OUT_DIR`
/// and, when set, the registry into `$SKILL_REGISTRY_OUT`.
pub fn export(linked: Linked) -> Result<Exported, ExportError> {
    println!("cargo::rerun-if-env-changed=SKILL_REGISTRY_OUT");
    let out_dir = env::var_os("OUT_DIR").ok_or(ExportError::MissingEnv("OUT_DIR"))?;
    let extra = env::var_os("SKILL_REGISTRY_OUT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    export_to(linked, Path::new(&out_dir), extra.as_deref())
}

/// Like [`export`], with the directories given.
pub fn export_to(
    linked: Linked,
    dir: &Path,
    extra: Option<&Path>,
) -> Result<Exported, ExportError> {
    let registry = registry(linked)?;
    let bytes = registry.export();
    let agents = agent_registry(&registry)?;
    let out = Exported {
        registry: dir.join("skill-registry.json"),
        capabilities: dir.join("capabilities.json"),
        extra: extra.map(Path::to_path_buf),
        skills: registry.skills().len(),
        agents: agents.as_ref().map_or(0, |(n, _)| *n),
    };
    write_if_changed(&out.registry, &bytes)?;
    if let Some((_, agent_bytes)) = &agents {
        write_if_changed(&dir.join("agent-registry.json"), agent_bytes)?;
    }
    write_if_changed(&out.capabilities, &registry.export_capabilities())?;
    if registry.has_ops() {
        write_if_changed(&dir.join("op-registry.json"), &registry.export_ops())?;
    }
    if let Some(path) = &out.extra {
        write_if_changed(path, &bytes)?;
        let beside = path.with_file_name("capabilities.json");
        if beside != *path {
            write_if_changed(&beside, &registry.export_capabilities())?;
        }
        let ops = path.with_file_name("op-registry.json");
        if registry.has_ops() && ops != *path {
            write_if_changed(&ops, &registry.export_ops())?;
        }
        let agent_file = path.with_file_name("agent-registry.json");
        if let Some((_, agent_bytes)) = &agents
            && agent_file != *path
        {
            write_if_changed(&agent_file, agent_bytes)?;
        }
    }
    Ok(out)
}

/// The agents every linked crate declares, checked against the skill
/// registry (listed skills admit the agent's role, escalation targets are
/// agents, one agent per id), as the count and canonical bytes of
/// `agent-registry.json`; `None` when no crate declares an agent.
pub fn agent_registry(skills: &Registry) -> Result<Option<(usize, String)>, ExportError> {
    let agents = skill_runtime::agents::AgentRegistry::from_inventory()?;
    if agents.is_empty() {
        return Ok(None);
    }
    let skills_json = skills.to_json();
    let json = agents.to_json(&skills_json);
    let findings = skill_runtime::agents::check_agents(&json, Some(&skills_json));
    if !findings.is_empty() {
        return Err(ExportError::AgentRules(findings));
    }
    Ok(Some((
        agents.agents().len(),
        skill_runtime::export::canonical(&json),
    )))
}

/// [`export`], printing any error and exiting non-zero, which fails the build.
pub fn export_or_exit(linked: Linked) -> Exported {
    match export(linked) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: skill registry export failed\n{e}");
            std::process::exit(1);
        }
    }
}

/// Write only when the bytes differ, so an unchanged registry does not touch the
/// file's modification time (and does not trigger downstream rebuilds).
fn write_if_changed(path: &Path, bytes: &str) -> Result<(), ExportError> {
    if fs::read(path).is_ok_and(|old| old == bytes.as_bytes()) {
        return Ok(());
    }
    let err = |source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(err)?;
    }
    fs::write(path, bytes).map_err(err)
}

/// Ambient-authority functions that a skills crate should reach only through
/// declared capabilities: the crate-wide backstop of `#[skill]`'s body scan,
/// which cannot see module-level imports or helper functions. Each entry is
/// `(path, kind)`; a path that does not resolve in every crate
/// ([`resolves_everywhere`] says which) is written with `allow-invalid = true`,
/// so the list works in crates without tokio and on other platforms.
pub const DISALLOWED_METHODS: &[(&str, &str)] = &[
    ("std::fs::read", "file read"),
    ("std::fs::read_to_string", "file read"),
    ("std::fs::read_dir", "file read"),
    ("std::fs::read_link", "file read"),
    ("std::fs::metadata", "file read"),
    ("std::fs::symlink_metadata", "file read"),
    ("std::fs::canonicalize", "file read"),
    ("std::fs::exists", "file read"),
    ("std::fs::File::open", "file read"),
    ("std::fs::write", "file write"),
    ("std::fs::create_dir", "file write"),
    ("std::fs::create_dir_all", "file write"),
    ("std::fs::remove_file", "file write"),
    ("std::fs::remove_dir", "file write"),
    ("std::fs::remove_dir_all", "file write"),
    ("std::fs::rename", "file write"),
    ("std::fs::copy", "file write"),
    ("std::fs::hard_link", "file write"),
    ("std::fs::soft_link", "file write"),
    ("std::fs::set_permissions", "file write"),
    ("std::fs::File::create", "file write"),
    ("std::fs::File::create_new", "file write"),
    ("std::fs::File::options", "file write"),
    ("std::fs::OpenOptions::open", "file write"),
    ("std::os::unix::fs::symlink", "file write"),
    ("std::os::unix::fs::chown", "file write"),
    ("std::os::unix::fs::lchown", "file write"),
    ("std::os::unix::fs::chroot", "file write"),
    ("std::net::TcpStream::connect", "network"),
    ("std::net::TcpStream::connect_timeout", "network"),
    ("std::net::TcpListener::bind", "network"),
    ("std::net::UdpSocket::bind", "network"),
    ("std::os::unix::net::UnixStream::connect", "network"),
    ("std::os::unix::net::UnixListener::bind", "network"),
    ("std::os::unix::net::UnixDatagram::bind", "network"),
    ("std::process::Command::new", "process"),
    ("std::process::exit", "process"),
    ("std::process::abort", "process"),
    ("std::env::set_var", "environment mutation"),
    ("std::env::remove_var", "environment mutation"),
    ("std::env::set_current_dir", "environment mutation"),
    ("tokio::fs::read", "file read"),
    ("tokio::fs::read_to_string", "file read"),
    ("tokio::fs::read_dir", "file read"),
    ("tokio::fs::metadata", "file read"),
    ("tokio::fs::File::open", "file read"),
    ("tokio::fs::write", "file write"),
    ("tokio::fs::create_dir", "file write"),
    ("tokio::fs::create_dir_all", "file write"),
    ("tokio::fs::remove_file", "file write"),
    ("tokio::fs::remove_dir", "file write"),
    ("tokio::fs::remove_dir_all", "file write"),
    ("tokio::fs::rename", "file write"),
    ("tokio::fs::copy", "file write"),
    ("tokio::fs::File::create", "file write"),
    ("tokio::fs::OpenOptions::open", "file write"),
    ("tokio::net::TcpStream::connect", "network"),
    ("tokio::net::TcpListener::bind", "network"),
    ("tokio::net::UdpSocket::bind", "network"),
    ("tokio::net::UnixStream::connect", "network"),
    ("tokio::net::UnixListener::bind", "network"),
    ("tokio::process::Command::new", "process"),
];

/// Whether `path` names a function in every crate on every platform: `std`,
/// except its platform modules (`std::os::unix`); not another crate's.
pub fn resolves_everywhere(path: &str) -> bool {
    path.starts_with("std::") && !path.starts_with("std::os::")
}

/// The `clippy.toml` for a skills crate: every [`DISALLOWED_METHODS`] entry, so
/// a use anywhere in the crate (helpers included) needs an explicit
/// `#[expect(clippy::disallowed_methods, reason = "...")]` naming the capability
/// that covers it. Clippy reads it from the crate's directory or any parent.
pub fn clippy_toml() -> String {
    let mut out = String::from(
        "# Generated by skill_build::clippy_toml() (`skill-registry backstop DIR`); do not edit by hand.\n\
         # Ambient authority in a skills crate goes through declared capabilities:\n\
         # a use needs #[expect(clippy::disallowed_methods, reason = \"...\")].\n\
         disallowed-methods = [\n",
    );
    for (path, kind) in DISALLOWED_METHODS {
        let invalid = if resolves_everywhere(path) {
            ""
        } else {
            ", allow-invalid = true"
        };
        out.push_str(&format!(
            "    {{ path = \"{path}\", reason = \"ambient {kind}: declare a capability for it on the skill and say which in an #[expect] reason\"{invalid} }},\n"
        ));
    }
    // The runtime's own functions that reach the outside world, held to the
    // same rule (a crate may not enable the features that define them).
    for (path, _, kind) in skill_runtime::capability::RUNTIME_AMBIENT {
        out.push_str(&format!(
            "    {{ path = \"{path}\", reason = \"ambient {}: the runtime's own I/O; declare a capability for it on the skill and say which in an #[expect] reason\", allow-invalid = true }},\n",
            kind.as_str().replace('_', " ")
        ));
    }
    out.push_str("]\n");
    out
}
