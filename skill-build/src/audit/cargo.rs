//! What the audit reads: the rlibs of one `cargo build` (the user's own
//! target directory and profile, so a warm build is reused), and the
//! targets a small probe linked against them prints
//! (`skill_runtime::__private_v2::audit_targets`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::{AuditError, Options};

/// One library of the build.
pub struct Rlib {
    /// The crate's name (`seed_skills`).
    pub krate: String,
    /// The `.rlib` file.
    pub path: PathBuf,
    /// A path package (the user's code, not a registry dependency).
    pub local: bool,
}

/// The libraries one build made, in one profile.
pub struct Build {
    /// Every library, one per crate name.
    pub rlibs: Vec<Rlib>,
    /// Native search paths build scripts asked for (for linking the probe).
    pub native: Vec<String>,
    /// The executables of path packages: (crate name, file).
    pub bins: Vec<(String, PathBuf)>,
}

/// Build what `options` names and list its libraries.
pub fn build(options: &Options) -> Result<Build, AuditError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--message-format=json-render-diagnostics"]);
    if let Some(path) = &options.manifest_path {
        cmd.arg("--manifest-path").arg(path);
    }
    for package in &options.packages {
        cmd.args(["--package", package]);
    }
    let out = cmd
        .stdout(Stdio::piped())
        .stderr(if options.quiet {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .output()
        .map_err(|e| AuditError::Build(format!("cannot run cargo: {e}")))?;
    if !out.status.success() {
        return Err(AuditError::Build(format!(
            "cargo build failed{}",
            if options.quiet {
                format!(":\n{}", String::from_utf8_lossy(&out.stderr))
            } else {
                String::new()
            }
        )));
    }
    let mut artifacts: Vec<(Value, Rlib)> = Vec::new();
    let mut native = Vec::new();
    let mut bins = Vec::new();
    let mut last_profile = Value::Null;
    for line in out.stdout.split(|b| *b == b'\n') {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        match message["reason"].as_str() {
            Some("compiler-artifact") => {
                last_profile = message["profile"].clone();
                let local = message["package_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("path+"));
                if let (true, Some(exe), Some(name)) = (
                    local,
                    message["executable"].as_str(),
                    message["target"]["name"].as_str(),
                ) && message["target"]["kind"] == serde_json::json!(["bin"])
                {
                    bins.push((name.replace('-', "_"), PathBuf::from(exe)));
                }
                let kinds = &message["target"]["kind"];
                let lib = kinds
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "lib" || k == "rlib"));
                let rlib = message["filenames"].as_array().and_then(|f| {
                    f.iter()
                        .filter_map(Value::as_str)
                        .find(|f| f.ends_with(".rlib"))
                });
                if let (true, Some(path), Some(name)) =
                    (lib, rlib, message["target"]["name"].as_str())
                {
                    let local = message["package_id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("path+"));
                    artifacts.push((
                        message["profile"].clone(),
                        Rlib {
                            krate: name.replace('-', "_"),
                            path: PathBuf::from(path),
                            local,
                        },
                    ));
                }
            }
            Some("build-script-executed") => {
                if let Some(paths) = message["linked_paths"].as_array() {
                    native.extend(paths.iter().filter_map(Value::as_str).map(str::to_owned));
                }
            }
            _ => {}
        }
    }
    // The profile of the package asked for (cargo reports it last); build
    // dependencies compiled in another profile are another program.
    let mut rlibs: Vec<Rlib> = Vec::new();
    for (profile, rlib) in artifacts {
        if profile != last_profile {
            continue;
        }
        rlibs.retain(|r| r.krate != rlib.krate);
        rlibs.push(rlib);
    }
    native.sort();
    native.dedup();
    Ok(Build {
        rlibs,
        native,
        bins,
    })
}

/// The handlers an executable defines in its own crate (`crate::..::_::
/// __skill_body_NAME`, by its symbol table): code the probe cannot link, so
/// the audit cannot check it.
pub fn handlers_in_bin(krate: &str, exe: &Path) -> Result<Vec<String>, AuditError> {
    use object::{Object, ObjectSymbol};
    let file = std::fs::File::open(exe)
        .map_err(|e| AuditError::Read(format!("cannot read {}: {e}", exe.display())))?;
    let cache = object::read::ReadCache::new(file);
    let obj = object::File::parse(&cache)
        .map_err(|e| AuditError::Read(format!("cannot read {}: {e}", exe.display())))?;
    let mut found: Vec<String> = obj
        .symbols()
        .filter_map(|s| s.name().ok().map(super::graph::demangle))
        .filter(|n| {
            n.strip_prefix(krate)
                .is_some_and(|rest| rest.starts_with("::"))
        })
        .filter_map(|n| {
            let (_, rest) = n.split_once("::_::__skill_body_")?;
            Some(rest.split("::").next().unwrap_or(rest).to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    Ok(found)
}

/// Link a probe against the build's path libraries and run it: the
/// targets, as JSON.
pub fn targets(build: &Build) -> Result<Value, AuditError> {
    let runtime = build
        .rlibs
        .iter()
        .find(|r| r.krate == "skill_runtime")
        .ok_or_else(|| {
            AuditError::Build("the build has no skill-runtime library: nothing to audit".into())
        })?;
    let deps = runtime.path.parent().unwrap_or(Path::new("."));
    // One directory per audit: two audits of one target directory at once
    // (two CI jobs, two tests) must not link or run each other's probe.
    static AUDITS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = AUDITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = deps
        .parent()
        .unwrap_or(deps)
        .join("skill-audit")
        .join(format!("{}-{n}", std::process::id()));
    let result = probe_in(&dir, build, runtime, deps);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Write, link and run the probe in `dir`.
fn probe_in(dir: &Path, build: &Build, runtime: &Rlib, deps: &Path) -> Result<Value, AuditError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| AuditError::Build(format!("cannot create {}: {e}", dir.display())))?;
    let linked: Vec<&Rlib> = build
        .rlibs
        .iter()
        .filter(|r| {
            r.local && !["skill_runtime", "skill_core", "skill_build"].contains(&r.krate.as_str())
        })
        .collect();
    let mut source = String::from(
        "// Written by `skill-registry audit`: links every path library so their\n// registrations are kept, and prints what each handler may reach.\n#![allow(unused_imports)]\n",
    );
    for r in &linked {
        source.push_str(&format!("use {} as _;\n", r.krate));
    }
    source.push_str(
        "fn main() {\n    match skill_runtime::__private_v2::audit_targets() {\n        Ok(json) => print!(\"{json}\"),\n        Err(e) => {\n            eprintln!(\"{e}\");\n            std::process::exit(2);\n        }\n    }\n}\n",
    );
    let main = dir.join("probe.rs");
    std::fs::write(&main, source)
        .map_err(|e| AuditError::Build(format!("cannot write {}: {e}", main.display())))?;
    let exe = dir.join("probe");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition=2021",
        "--crate-type=bin",
        "--crate-name=skill_audit_probe",
        "-Cdebuginfo=0",
    ])
    .arg(&main)
    .arg("-o")
    .arg(&exe)
    .arg("-L")
    .arg(format!("dependency={}", deps.display()))
    .arg("--extern")
    .arg(format!("skill_runtime={}", runtime.path.display()));
    for r in &linked {
        cmd.arg("--extern")
            .arg(format!("{}={}", r.krate, r.path.display()));
    }
    for n in &build.native {
        cmd.arg("-L").arg(n);
    }
    let out = cmd
        .output()
        .map_err(|e| AuditError::Build(format!("cannot run rustc: {e}")))?;
    if !out.status.success() {
        return Err(AuditError::Build(format!(
            "cannot link the audit's probe (is skill-runtime as new as skill-build?):\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let out = Command::new(&exe)
        .output()
        .map_err(|e| AuditError::Build(format!("cannot run {}: {e}", exe.display())))?;
    if !out.status.success() {
        return Err(AuditError::Build(format!(
            "the linked crates do not form a registry:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| AuditError::Build(format!("the probe printed no JSON: {e}")))
}
