//! The library crates publish: `cargo package --list` of each holds its
//! license files, its readme, and every file its sources `include_str!`.

use std::path::{Component, Path, PathBuf};

use skill_tests::{cargo, root, run_ok};

/// Every `include_str!("...")`/`include_bytes!("...")` path in `dir`'s
/// sources, relative to `crate_dir`.
fn included(dir: &Path, crate_dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            included(&path, crate_dir, out);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for macro_name in ["include_str!(\"", "include_bytes!(\""] {
            for (at, _) in text.match_indices(macro_name) {
                let rest = &text[at + macro_name.len()..];
                let Some(end) = rest.find('"') else { continue };
                let mut resolved = PathBuf::new();
                for part in path.parent().unwrap().join(&rest[..end]).components() {
                    match part {
                        Component::ParentDir => {
                            resolved.pop();
                        }
                        other => resolved.push(other),
                    }
                }
                out.push(
                    resolved
                        .strip_prefix(crate_dir)
                        .unwrap_or(&resolved)
                        .to_path_buf(),
                );
            }
        }
    }
}

#[test]
fn each_library_crate_packages_what_it_needs() {
    for krate in ["skill-core", "skill-macros", "skill-runtime", "skill-build"] {
        let out = run_ok(cargo().args(["package", "--list", "--allow-dirty", "-p", krate]));
        let listed = String::from_utf8_lossy(&out.stdout);
        let listed: Vec<&str> = listed.lines().collect();
        for needed in ["LICENSE-MIT", "LICENSE-APACHE", "README.md", "Cargo.toml"] {
            assert!(
                listed.contains(&needed),
                "{krate} does not package {needed}: {listed:?}"
            );
        }
        let crate_dir = root().join(krate);
        let mut files = Vec::new();
        included(&crate_dir.join("src"), &crate_dir, &mut files);
        for file in files {
            let file = file.to_string_lossy().into_owned();
            assert!(
                !file.starts_with(".."),
                "{krate} includes {file}, outside its package"
            );
            assert!(
                listed.contains(&file.as_str()),
                "{krate} does not package {file}"
            );
        }
    }
}
