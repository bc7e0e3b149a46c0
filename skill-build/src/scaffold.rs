//! A new skills crate, and the crate-wide backstop every skills crate gets:
//! `skill-registry new DIR` and `skill-registry backstop DIR [--check]`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::clippy_toml;

/// Where the new crate's `skill-runtime` comes from.
#[derive(Clone, Debug)]
pub enum RuntimeDep {
    /// The published crate, `skill-runtime = "<this version>"`.
    Registry,
    /// A local checkout's `skill-runtime` directory.
    Path(PathBuf),
}

/// What went wrong writing or checking a crate's files.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The directory exists and is not empty.
    #[error("{0} already exists and is not empty; choose a new directory")]
    NotEmpty(PathBuf),
    /// The package name is not a valid crate name.
    #[error("crate name `{0}` is not a valid package name; use letters, digits, `-` and `_`")]
    BadName(String),
    /// The crate's `clippy.toml` is missing or differs from the current list.
    #[error("{path} is missing or stale: run `skill-registry backstop {dir}` to write it")]
    Stale {
        /// The `clippy.toml`.
        path: PathBuf,
        /// The crate's directory, as given.
        dir: String,
    },
    /// A file could not be read or written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

fn write(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    let err = |source| ScaffoldError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(err)?;
    }
    fs::write(path, text).map_err(err)
}

/// Write a skills crate in `dir` (which must not exist or be empty): its
/// `Cargo.toml`, a `src/lib.rs` with one skill, and the backstop
/// `clippy.toml`. Returns the files written.
pub fn new_crate(
    dir: &Path,
    name: Option<&str>,
    runtime: &RuntimeDep,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    if fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
    }
    let name = match name {
        Some(n) => n.to_owned(),
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let valid = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(ScaffoldError::BadName(name));
    }
    let dep = match runtime {
        RuntimeDep::Registry => format!("\"{}\"", env!("CARGO_PKG_VERSION")),
        RuntimeDep::Path(p) => format!("{{ path = {:?} }}", p.display().to_string()),
    };
    let files = [
        (
            dir.join("Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
                 [dependencies]\nskill-runtime = {dep}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\
                 schemars = \"1\"\n"
            ),
        ),
        (dir.join("src/lib.rs"), LIB_RS.to_owned()),
        (dir.join("clippy.toml"), clippy_toml()),
    ];
    for (path, text) in &files {
        write(path, text)?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// Write `dir/clippy.toml` (the backstop), or with `check` only compare it.
pub fn backstop(dir: &Path, check: bool) -> Result<PathBuf, ScaffoldError> {
    let path = dir.join("clippy.toml");
    let expected = clippy_toml();
    if check {
        let actual = fs::read_to_string(&path).unwrap_or_default();
        if actual != expected {
            return Err(ScaffoldError::Stale {
                path,
                dir: dir.display().to_string(),
            });
        }
        return Ok(path);
    }
    write(&path, &expected)?;
    Ok(path)
}

const LIB_RS: &str = r#"//! Skills. Each `#[skill]` is collected into the registry of any app that
//! links this crate (`skill_build::link!` in the app's `build.rs`).
//!
//! The backstop: `cargo clippy -- -D warnings` refuses ambient file, network,
//! process and environment calls anywhere in this crate (see `clippy.toml`);
//! reach resources through capabilities declared on the skill.

use skill_runtime::prelude::*;

/// Who to greet.
#[derive(Deserialize, JsonSchema)]
pub struct GreetInput {
    /// The name to greet.
    pub name: String,
}

/// The greeting.
#[derive(Serialize, JsonSchema)]
pub struct GreetOutput {
    pub greeting: String,
}

/// Greet someone by name.
#[skill(version = "0.1.0", domain = "core")]
pub async fn greet(input: GreetInput) -> GreetOutput {
    GreetOutput {
        greeting: format!("Hello, {}!", input.name),
    }
}
"#;
