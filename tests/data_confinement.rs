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
    // search_notes is tagged `requires_review`: the operator approves.
    seed_skills::runtime_builder(registry, &dir.join("data"))
        .expect("example data")
        .approver(skill_runtime::policy::ApproveAll {
            by: "the test's operator".into(),
        })
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
    std::os::unix::fs::symlink("/dev/zero", vault.join("zero.md")).unwrap();
    std::fs::write(vault.join("notes.txt"), "not a note").unwrap();
    mkfifo(&vault.join("fifo.md"));
}

fn mkfifo(path: &Path) {
    let fifo = std::process::Command::new("mkfifo")
        .arg(path)
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
        "zero.md",
        "notes.txt",
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

/// A folder of the vault swapped, again and again, between a real folder and
/// a link to one outside, while notes under it are read: no read ever
/// returns what is outside (the open is relative to a handle, and refuses
/// any link on the way, so there is no gap between a check and the open).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_never_leads_out() {
    let dir = temp_dir("swap-race");
    hostile_vault(&dir);
    let (vault, outside) = (dir.join("data/vault"), dir.join("outside"));
    std::fs::create_dir_all(vault.join("real")).unwrap();
    std::fs::write(vault.join("real/note.md"), "inside").unwrap();
    std::fs::write(outside.join("note.md"), "SECRET outside").unwrap();
    std::os::unix::fs::symlink(&outside, vault.join("link")).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, vault) = (stop.clone(), vault.clone());
        std::thread::spawn(move || {
            // Each rename is atomic: `shelf` is, in turn, the real folder
            // and the link.
            let shelf = vault.join("shelf");
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for held in ["real", "link"] {
                    let _ = std::fs::rename(vault.join(held), &shelf);
                    let _ = std::fs::rename(&shelf, vault.join(held));
                    std::thread::yield_now();
                }
                let _ = std::fs::rename(vault.join("real"), &shelf);
                let _ = std::fs::rename(vault.join("link"), vault.join("real"));
                std::thread::yield_now();
                let _ = std::fs::rename(vault.join("real"), vault.join("link"));
                let _ = std::fs::rename(&shelf, vault.join("real"));
            }
        })
    };
    let rt = runtime(&dir);
    let (mut inside, mut refused, mut escapes) = (0u32, 0u32, 0u32);
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < until {
        {
            match read(&rt, "real/note.md").await {
                Ok(v) if v["content"] == "inside" => inside += 1,
                Ok(v) => {
                    escapes += 1;
                    eprintln!("escaped: {v}");
                }
                Err(_) => refused += 1,
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!("{inside} reads inside, {refused} refused, {escapes} escapes");
    assert_eq!(escapes, 0, "{escapes} reads left the vault");
    assert!(inside > 0, "reads got through while the folder was real");
    assert!(
        refused > 0,
        "reads were refused while the folder was a link"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A routes folder with a FIFO, a link to `/dev/zero` and a link out among
/// its route modules: the sync lists and reads only the regular files, in
/// bounded time, and the rest of the folder syncs.
#[tokio::test]
async fn routes_sync_reads_only_route_modules_and_never_blocks() {
    let dir = temp_dir("routes-hostile");
    hostile_vault(&dir);
    let routes = dir.join("data/remix/app/routes");
    mkfifo(&routes.join("fifo.tsx"));
    std::os::unix::fs::symlink("/dev/zero", routes.join("zero.tsx")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside/secret.md"), routes.join("escape.tsx")).unwrap();
    let rt = runtime(&dir);
    let call = rt.invoke(JobEnvelope::new("routes_sync", json!({ "dryRun": true })));
    let done = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the sync does not hang on a FIFO or /dev/zero")
        .expect("the sync succeeds");
    let added = done.data["added"].to_string();
    for hostile in ["/fifo", "/zero", "/escape"] {
        assert!(!added.contains(hostile), "{hostile} synced: {added}");
    }
    assert!(done.data["routes"].as_u64().unwrap() > 0, "{}", done.data);
    let _ = std::fs::remove_dir_all(&dir);
}
