//! The fleet on a Redis that asks who it talks to: an ACL user with a
//! password, and TLS with a certificate of the deployment's own authority.
//! The CLI's commands work with the credentials in the URL; a wrong
//! password is refused without being printed; a `rediss://` server is
//! checked against the given authority and refused without it.

use std::path::PathBuf;
use std::process::{Command, Output};

use skill_tests::fleet::{RedisServer, WorkerProcess, app, data_copy, free_port};

fn cli(args: &[&str]) -> Output {
    Command::new(app())
        .args(args)
        .output()
        .expect("the app runs")
}

fn ok(out: &Output) -> String {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout.into_owned()
}

/// Queue an echo job with `redis` (and more flags), wait for its result.
fn echo_through(redis: &[&str]) -> String {
    let mut args = vec![
        "enqueue",
        "echo",
        r#"{"message":"through"}"#,
        "--wait",
        "--wait-limit",
        "60s",
    ];
    args.extend_from_slice(redis);
    ok(&cli(&args))
}

#[test]
fn an_acl_user_with_a_password_runs_the_fleet() {
    let redis = RedisServer::start_with("acl", |_, _| Vec::new(), Some("admin-secret"));
    let set = redis.cli(&[
        "ACL",
        "SETUSER",
        "fleet",
        "on",
        ">fleet-secret",
        "~skill:*",
        "&*",
        "+@all",
    ]);
    assert_eq!(set.trim(), "OK", "{set}");
    let port = redis
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/0")
        .to_owned();
    let url = format!("redis://fleet:fleet-secret@127.0.0.1:{port}/0");
    let data = data_copy("acl");
    let d = data.display().to_string();
    let worker = WorkerProcess::start(&url, &["--data", &d]);
    // Its first line names the Redis it serves, without the password.
    assert!(
        worker.first.contains("redis://fleet:***@127.0.0.1")
            && !worker.first.contains("fleet-secret"),
        "{}",
        worker.first
    );
    let out = echo_through(&["--redis", &url]);
    assert!(out.contains("through"), "{out}");
    let status = ok(&cli(&["queue", "status", "--redis", &url]));
    assert!(status.contains("workers            1"), "{status}");
    // A wrong password: refused, and never printed.
    let wrong = format!("redis://fleet:not-the-secret@127.0.0.1:{port}/0");
    let out = cli(&["queue", "status", "--redis", &wrong]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !said.contains("not-the-secret") && !said.contains("fleet-secret"),
        "{said}"
    );
    assert!(said.contains("fleet:***@127.0.0.1"), "{said}");
}

/// A certificate authority of the deployment's own, and a server
/// certificate it signs for 127.0.0.1 and localhost, made by `openssl` in a
/// directory of `name`'s: (the authority, the certificate, its key).
fn certificates(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = skill_tests::temp_dir(name);
    let (ca, cert, key) = (
        dir.join("ca.crt"),
        dir.join("redis.crt"),
        dir.join("redis.key"),
    );
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("openssl runs (Debian: apt-get install openssl)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    // The deployment's own authority, and the server's certificate it signs.
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-days",
                "1",
                "-subj",
                "/CN=test-ca",
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-subj",
                "/CN=localhost",
                "-keyout",
                "redis.key",
                "-out",
                "redis.csr",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "redis.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-out",
        "redis.crt",
        "-extfile",
        "san.ext",
    ]);
    (ca, cert, key)
}

#[test]
fn tls_with_the_deployments_own_authority() {
    let (ca, cert, key) = certificates("redis-tls-certs");
    let tls_port = free_port();
    let (c, k, a) = (
        cert.display().to_string(),
        key.display().to_string(),
        ca.display().to_string(),
    );
    let redis = RedisServer::start_with(
        "tls",
        move |_, _| {
            [
                "--tls-port",
                &tls_port.to_string(),
                "--tls-cert-file",
                &c,
                "--tls-key-file",
                &k,
                "--tls-ca-cert-file",
                &a,
                "--tls-auth-clients",
                "no",
            ]
            .map(str::to_owned)
            .to_vec()
        },
        None,
    );
    let url = format!("rediss://127.0.0.1:{tls_port}/0");
    let ca = ca.display().to_string();
    let data = data_copy("tls");
    let d = data.display().to_string();
    let _worker = WorkerProcess::start(&url, &["--redis-ca", &ca, "--data", &d]);
    let out = echo_through(&["--redis", &url, "--redis-ca", &ca]);
    assert!(out.contains("through"), "{out}");
    // Without the authority, the server's certificate is not trusted.
    let out = cli(&["queue", "status", "--redis", &url]);
    assert!(
        !out.status.success(),
        "a certificate of an unknown authority is refused"
    );
    drop(redis);
}

/// A Redis Cluster over TLS only (clients, replication and the cluster bus),
/// with a certificate of the deployment's own authority: the nodes the
/// client finds by itself and the one idle workers listen on are reached
/// over TLS, checked against `--redis-ca`; without it, refused.
#[test]
fn a_cluster_over_tls_with_the_deployments_own_authority() {
    let (ca, cert, key) = certificates("redis-tls-cluster-certs");
    let cluster = skill_tests::cluster::RedisCluster::start_access(
        "tls",
        skill_tests::cluster::Access {
            password: None,
            tls: Some(skill_tests::cluster::Tls {
                cert,
                key,
                ca: ca.clone(),
            }),
        },
    );
    let url = cluster.url();
    assert!(url.starts_with("rediss://"), "{url}");
    let ca = ca.display().to_string();
    let data = data_copy("tls-cluster");
    let d = data.display().to_string();
    let _worker = WorkerProcess::start(&url, &["--redis-ca", &ca, "--data", &d]);
    let out = echo_through(&["--redis", &url, "--redis-ca", &ca]);
    assert!(out.contains("through"), "{out}");
    let out = cli(&["queue", "status", "--redis", &url]);
    assert!(
        !out.status.success(),
        "a certificate of an unknown authority is refused"
    );
}
