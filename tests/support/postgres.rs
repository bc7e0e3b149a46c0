//! A PostgreSQL of the tests' own: a throwaway cluster (`initdb`) in a
//! directory under the system's temporary directory, on a free loopback port, run as the
//! `postgres` user when the tests run as root (PostgreSQL refuses root).
//! Each test starts its own (about a second): it may stop, kill and restart
//! it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::fleet::free_port;

/// The password of the tests' user, `skill`: URLs carry it, so the tests see
/// it masked wherever a URL is printed.
pub const PASSWORD: &str = "pg-s3cret-pw";

/// A PostgreSQL server. Dropping it stops it and removes its data.
pub struct PostgresServer {
    port: u16,
    dir: PathBuf,
    bin: PathBuf,
    /// More `-c name=value` settings (TLS).
    extra: Vec<String>,
    child: Option<Child>,
}

/// The directory of PostgreSQL's programs (`initdb`, `postgres`), which
/// Debian keeps out of `PATH`.
fn bin_dir() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return dir;
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    })
}

/// Whether this process runs as root, which PostgreSQL refuses.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `program` run as the `postgres` user when this process is root (the
/// process itself, not a child of a wrapper, so that signals reach it).
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--",
        ])
        .arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

impl PostgresServer {
    /// A fresh server of the test's own.
    pub fn start(name: &str) -> PostgresServer {
        PostgresServer::start_with(name, |_| Vec::new())
    }

    /// A fresh server started with the `name=value` settings `extra` gives
    /// for its directory (which it may write files into first: see
    /// [`PostgresServer::hand_over`]).
    pub fn start_with(name: &str, extra: impl Fn(&Path) -> Vec<String>) -> PostgresServer {
        // Under the system's temporary directory, not target/: the server's
        // user must reach it, and a checkout may sit in a home directory it
        // cannot enter.
        let dir = std::env::temp_dir().join(format!(
            "skill-tests-postgres-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the server's directory");
        let bin = bin_dir();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))
            .expect("open the data directory's parent");
        let data = dir.join("data");
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).expect("write the password file");
        std::fs::set_permissions(&pwfile, std::fs::Permissions::from_mode(0o644))
            .expect("let the server's user read the password file");
        let out = as_owner(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "skill",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-sync",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .unwrap_or_else(|e| panic!("cannot run initdb ({e}); install PostgreSQL"));
        assert!(
            out.status.success(),
            "initdb failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let extra = extra(&dir);
        for _ in 0..20 {
            let mut server = PostgresServer {
                port: free_port(),
                dir: dir.clone(),
                bin: bin.clone(),
                extra: extra.clone(),
                child: None,
            };
            if server.spawn() {
                return server;
            }
        }
        panic!(
            "PostgreSQL did not start on any free port; see {}",
            dir.join("log").display()
        );
    }

    /// Start the server; whether it accepts connections.
    fn spawn(&mut self) -> bool {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("log"))
            .expect("open the server's log");
        std::fs::set_permissions(self.dir.join("log"), std::fs::Permissions::from_mode(0o666))
            .expect("let the server's user write its log");
        let child = as_owner(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", self.dir.display()))
            // A crash of the server process loses nothing the OS holds; the
            // tests never crash the OS.
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .args(self.extra.iter().flat_map(|e| ["-c", e.as_str()]))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start postgres");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-q"])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return true;
            }
            if let Some(c) = &mut self.child
                && let Ok(Some(_)) = c.try_wait()
            {
                // Exited: most likely the port was taken in between.
                self.child = None;
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// The directory of its data, log and any file given to it.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Make `file` the server's own, readable by it alone (what PostgreSQL
    /// wants of a private key), when the tests run as root.
    pub fn hand_over(file: &Path) {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
            .expect("restrict the file");
        if is_root() {
            let ok = Command::new("chown")
                .arg("postgres:postgres")
                .arg(file)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown {} to postgres", file.display());
        }
    }

    /// The URL of database `postgres` as user `skill`, password included.
    pub fn url(&self) -> String {
        format!(
            "postgres://skill:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// `psql` against this server: its standard output (unaligned, tuples
    /// only).
    pub fn psql(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args([
                "-U",
                "skill",
                "-d",
                "postgres",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
            ])
            .args(["-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .expect("psql runs (Debian: it comes with postgresql)");
        assert!(
            out.status.success(),
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stop the server (a fast shutdown: sessions cut, data written).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-INT")
                .arg(c.id().to_string())
                .status();
            let _ = c.wait();
        }
    }

    /// Kill the server with SIGKILL: what a crash of its machine's process
    /// is (its postmaster's children follow).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again on the same port, with the same data.
    pub fn restart(&mut self) {
        self.stop();
        assert!(
            self.spawn(),
            "PostgreSQL did not start again on port {}",
            self.port
        );
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
