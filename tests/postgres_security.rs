//! The fleet's PostgreSQL reached as a deployment would: over TLS, checked
//! against the deployment's own certificate authority, with a password that
//! never shows, and a server that refuses what it should.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use skill_runtime::JobEnvelope;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_runtime::record::RunStatus;
use skill_tests::fleet::{WorkerProcess, data_copy};
use skill_tests::postgres::{PASSWORD, PostgresServer};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A certificate authority (`ca.crt`) and the server's certificate it signs
/// (`server.crt`, `server.key`, for 127.0.0.1 and localhost), in `dir`.
fn certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
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
                "server.key",
                "-out",
                "server.csr",
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
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-out",
        "server.crt",
        "-extfile",
        "san.ext",
    ]);
}

#[test]
fn tls_with_the_deployments_own_authority_and_a_password_never_shown() {
    let pg = PostgresServer::start_with("tls", |dir| {
        certificates(dir);
        PostgresServer::hand_over(&dir.join("server.key"));
        vec![
            "ssl=on".to_owned(),
            format!("ssl_cert_file={}", dir.join("server.crt").display()),
            format!("ssl_key_file={}", dir.join("server.key").display()),
        ]
    });
    let ca = pg.dir().join("ca.crt");
    let url = format!("{}?sslmode=require", pg.url());
    let rt = rt();

    // Checked against Mozilla's roots, the deployment's certificate is not
    // trusted: refused, and the message keeps the password out.
    let refused = rt
        .block_on(Fleet::connect(FleetConfig::new(url.as_str())))
        .err()
        .expect("a certificate of an unknown authority is refused");
    let said = refused.to_string();
    assert!(!said.contains(PASSWORD), "{said}");
    assert!(said.contains("skill:***@127.0.0.1"), "{said}");
    assert!(said.to_lowercase().contains("certificate"), "{said}");

    // A wrong password: refused by the server, and not shown either.
    let wrong = url.replace(PASSWORD, "not-the-password");
    let said = rt
        .block_on(Fleet::connect(FleetConfig {
            tls_ca: Some(ca.clone()),
            ..FleetConfig::new(wrong.as_str())
        }))
        .err()
        .expect("a wrong password is refused")
        .to_string();
    assert!(!said.contains("not-the-password"), "{said}");
    assert!(said.contains("password authentication failed"), "{said}");

    // With the deployment's authority: connected over TLS, and a worker
    // given the same (`--redis-ca`) runs a job.
    let fleet = rt
        .block_on(Fleet::connect(FleetConfig {
            tls_ca: Some(ca.clone()),
            ..FleetConfig::new(url.as_str())
        }))
        .expect("trusted with the deployment's authority");
    let data = data_copy("postgres-tls");
    let d = data.display().to_string();
    let c = ca.display().to_string();
    let worker = WorkerProcess::start(&url, &["--redis-ca", &c, "--data", &d]);
    assert!(
        !worker.first.contains(PASSWORD),
        "the worker's first line keeps the password out: {}",
        worker.first
    );
    let (_, outcome) = rt
        .block_on(fleet.enqueue_and_wait(
            JobEnvelope::new("echo", json!({"message": "over tls"})),
            Duration::from_secs(30),
        ))
        .unwrap();
    let outcome = outcome.expect("the worker ran it");
    assert_eq!(outcome.status, RunStatus::Succeeded, "{outcome:?}");
    assert!(worker.said().iter().all(|l| !l.contains(PASSWORD)));
    // Every connection of ours (this process's and the worker's) is over TLS.
    let over_tls = pg.psql(
        "SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_ssl s \
         JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'skill-runtime'",
    );
    let (tls, all) = over_tls.trim().split_once('|').unwrap();
    assert!(
        tls == all && all.parse::<u32>().unwrap() >= 2,
        "every connection of ours uses TLS: {over_tls}"
    );
}
