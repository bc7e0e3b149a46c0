//! The example skills read their data confined to its root, by what is on
//! disk: a symlink out of the vault, a symlinked directory, a link loop and a
//! FIFO are refused (or skipped by a search) without leaking, hanging or
//! breaking the other notes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skill_runtime::{InvokeError, JobEnvelope, Registry, Runtime};
use skill_tests::temp_dir;

/// The example runtime over a copy of the example data in `dir/data`.
fn runtime(dir: &Path) -> Runtime {
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    seed_skills::runtime_builder(registry, &dir.join("data"))
        .expect("example data")
        .build()
        .expect("runtime starts")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The example data, its vault replaced by one note and every way out of it.
fn hostile_vault(dir: &Path) {
    let data = skill_tests::root().join(seed_skills::DATA_DIR);
    copy_dir(&data, &dir.join("data"));
    // The script ops' root sits beside the data.
    copy_dir(&data.join("../ops"), &dir.join("ops"));
    let (vault, outside) = (dir.join("data/vault"), dir.join("outside"));
    std::fs::remove_dir_all(&vault).unwrap();
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(vault.join("ok.md"), "hello from the vault").unwrap();
    std::fs::write(outside.join("secret.md"), "the secret outside the vault").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), vault.join("escape.md")).unwrap();
    std::os::unix::fs::symlink(&outside, vault.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(&vault, vault.join("loop")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", vault.join("passwd.md")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(vault.join("fifo.md"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success());
}

async fn read(rt: &Runtime, path: &str) -> Result<serde_json::Value, InvokeError> {
    let call = rt.invoke(JobEnvelope::new("read_note", json!({ "path": path })));
    // A read that blocks (a FIFO) would hang here: bounded, so it fails instead.
    tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap_or_else(|_| panic!("reading `{path}` hung"))
        .map(|r| (*r.data).clone())
}

#[tokio::test]
async fn reads_stay_in_the_vault_and_never_block() {
    let dir = temp_dir("confinement");
    hostile_vault(&dir);
    let rt = runtime(&dir);

    let ok = read(&rt, "ok.md").await.expect("a plain note reads");
    assert_eq!(ok["content"], "hello from the vault");

    for path in [
        "escape.md",
        "linkdir/secret.md",
        "passwd.md",
        "fifo.md",
        "../outside/secret.md",
    ] {
        let e = read(&rt, path).await.expect_err(path);
        let InvokeError::Failed { code, message, .. } = &e else {
            panic!("{path}: {e:?}")
        };
        assert_eq!(code, "invalid_path", "{path}: {message}");
        assert!(
            !message.contains("secret outside") && !message.contains("root:"),
            "{path} leaked: {message}"
        );
    }

    // The search walks the vault without following links: the loop does not
    // break it, the link out is not searched, the FIFO is not opened.
    let call = rt.invoke(JobEnvelope::new(
        "search_notes",
        json!({ "query": "vault" }),
    ));
    let found = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the search does not hang")
        .expect("the search succeeds");
    assert_eq!(found.data["results"], json!(["ok.md"]));
    let _ = std::fs::remove_dir_all(&dir);
}
