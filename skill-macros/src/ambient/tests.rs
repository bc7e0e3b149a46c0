//! The scan's cases: what it finds, and what it leaves alone.

use super::*;

fn found(body: &str) -> Vec<(Kind, String)> {
    let body: TokenStream = body.parse().unwrap();
    scan(body).into_iter().map(|f| (f.kind, f.path)).collect()
}

#[test]
fn paths_in_calls_types_and_macro_arguments() {
    assert_eq!(
        found("let s = std::fs::read_to_string(&p)?; Ok(s)"),
        [(Kind::FileRead, "std::fs::read_to_string".to_owned())]
    );
    assert_eq!(
        found(r#"let n = format!("x-{}", std::process::id());"#),
        [(Kind::Process, "std::process::id".to_owned())]
    );
    assert_eq!(
        found("let s = ::std::net::TcpStream::connect(a)?;"),
        [(Kind::Network, "std::net::TcpStream::connect".to_owned())]
    );
    assert_eq!(
        found("let v = tokio::fs::read::<&str>(p).await;"),
        [(Kind::FileRead, "tokio::fs::read".to_owned())]
    );
    assert_eq!(
        found("let c: Vec<fs::File> = Vec::new();"),
        [(Kind::FileRead, "fs::File".to_owned())]
    );
}

#[test]
fn imports_in_the_body_are_read_through() {
    let w = |p: &str| (Kind::FileWrite, p.to_owned());
    // An alias of the module: the operation decides, not the import.
    assert_eq!(
        found("use std::fs as f; f::write(p, b)?;"),
        [w("std::fs::write")]
    );
    // A group, `self`, renames; unused imports are nothing.
    assert_eq!(
        found(
            "use std::{collections::HashMap, fs::{self, File as F}, net::{TcpStream as T}}; let m = HashMap::new(); fs::remove_file(p); T::connect(a);"
        ),
        [
            w("std::fs::remove_file"),
            (Kind::Network, "std::net::TcpStream::connect".to_owned())
        ]
    );
    assert_eq!(
        found("use std::fs::remove_file; remove_file(p)"),
        [w("std::fs::remove_file")]
    );
    // Globs bring in the module's known items only.
    assert_eq!(
        found("use std::fs::*; let n = count(x); write(p, b)"),
        [w("std::fs::write")]
    );
    assert_eq!(
        found("use std::os::unix::fs::*; symlink(a, b)"),
        [w("std::os::unix::fs::symlink")]
    );
    assert_eq!(
        found("use std::process::Command; Command::new(\"ls\").status()"),
        [(Kind::Process, "std::process::Command::new".to_owned())]
    );
}

#[test]
fn open_options_write_unless_they_only_read() {
    let r = |p: &str| (Kind::FileRead, p.to_owned());
    let w = |p: &str| (Kind::FileWrite, p.to_owned());
    assert_eq!(
        found("let f = std::fs::File::options().append(true).open(p);"),
        [w("std::fs::File::options")]
    );
    assert_eq!(
        found("let f = std::fs::OpenOptions::new().read(true).open(p);"),
        [r("std::fs::OpenOptions::new")]
    );
    assert_eq!(
        found("use std::fs::File; let f = File::options().read(true).write(true).open(p);"),
        [w("std::fs::File::options")]
    );
    assert_eq!(
        found("let o = std::fs::OpenOptions::new();"),
        [w("std::fs::OpenOptions::new")]
    );
    assert_eq!(
        found("let f = std::fs::File::create(p);"),
        [w("std::fs::File::create")]
    );
}

#[test]
fn unix_sockets_and_links() {
    assert_eq!(
        found("std::os::unix::net::UnixStream::connect(p)"),
        [(
            Kind::Network,
            "std::os::unix::net::UnixStream::connect".to_owned()
        )]
    );
    assert_eq!(
        found("tokio::net::UnixListener::bind(p)"),
        [(Kind::Network, "tokio::net::UnixListener::bind".to_owned())]
    );
    assert_eq!(
        found("std::os::unix::fs::symlink(a, b)"),
        [(Kind::FileWrite, "std::os::unix::fs::symlink".to_owned())]
    );
}

#[test]
fn local_names_like_std_ones_are_not_ambient() {
    // A domain `Command`, `File` or `fs` module of the crate's own.
    let body =
        "let c = Command::new(v); let f = File::create(n); fs::render_note(x); process::step(y);";
    assert_eq!(found(body), []);
    // Module paths imported at module level still count with std's items.
    assert_eq!(
        found("fs::write(p, b); process::Command::new(x);"),
        [
            (Kind::FileWrite, "fs::write".to_owned()),
            (Kind::Process, "process::Command::new".to_owned()),
        ]
    );
}

#[test]
fn names_that_are_not_paths() {
    // Fields and methods, typed bindings, struct fields, labels, named
    // macro arguments, string contents.
    let body = r#"
        let postgres: u8 = self.redis.sqlx();
        let s = S { curl: 1 };
        'reqwest: loop { break 'reqwest; }
        tracing::info!(sled = 1, "std::fs::read {}", x);
    "#;
    assert_eq!(found(body), []);
}

#[test]
fn names_not_spellings() {
    let w = |p: &str| (Kind::FileWrite, p.to_owned());
    let r = |p: &str| (Kind::FileRead, p.to_owned());
    assert_eq!(
        found("r#std::fs::remove_file(p)"),
        [w("std::fs::remove_file")]
    );
    assert_eq!(
        found("extern crate std as system; system::fs::remove_file(p)"),
        [w("std::fs::remove_file")]
    );
    assert_eq!(
        found("use std::fs as files; use files::write as save; save(p, b)"),
        [w("std::fs::write")]
    );
    assert_eq!(
        found("let f = <std::fs::File>::create(p);"),
        [w("std::fs::File::create")]
    );
    assert_eq!(
        found("use std::fs::File; let f = File::open(p)?; f.set_permissions(x)"),
        [w("std::fs::File::open")]
    );
    assert_eq!(
        found("std::fs::File::open(p).unwrap().set_len(0)"),
        [w("std::fs::File::open")]
    );
    assert_eq!(
        found("std::fs::File::open(p).and_then(|f| f.set_len(0))"),
        [w("std::fs::File::open")]
    );
    assert_eq!(
        found("let f = (std::fs::OpenOptions::new().read(true)).write(true).open(p);"),
        [w("std::fs::OpenOptions::new")]
    );
    assert_eq!(
        found("let f = std::fs::File::open(p).set_permissions(x);"),
        [w("std::fs::File::open")]
    );
    assert_eq!(
        found("let d = std::path::Path::new(p).read_dir();"),
        [r("std::path::Path::new")]
    );
    assert_eq!(found("let e = Path::new(p).exists();"), [r("Path::new")]);
    assert_eq!(
        found("let f = std::fs::File::open(p)?.set_len(0);"),
        [w("std::fs::File::open")]
    );
    // Opened to read, and only read.
    assert_eq!(
        found("let f = std::fs::File::open(p)?; f.metadata()"),
        [r("std::fs::File::open")]
    );
}

#[test]
fn pure_data_of_effectful_modules_is_not_an_effect() {
    let body = r#"
        let a: std::net::IpAddr = "127.0.0.1".parse().unwrap();
        let s = "1.2.3.4:80".parse::<std::net::SocketAddr>();
        let v4 = std::net::Ipv4Addr::new(1, 2, 3, 4);
        let p = std::path::Path::new("a").join("b");
    "#;
    assert_eq!(found(body), []);
}

#[test]
fn runners_in_a_body_are_found() {
    let found = |body: &str| -> Vec<String> {
        runner_uses(body.parse().unwrap())
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    };
    assert_eq!(
        found("let r = skill_runtime::Registry::from_inventory();"),
        ["skill_runtime::Registry::from_inventory"]
    );
    assert_eq!(found("Runtime::builder(r).build()"), ["Runtime::builder"]);
    assert_eq!(
        found("use skill_runtime::Runtime as R; R::builder(r)"),
        ["skill_runtime::Runtime::builder"]
    );
    assert_eq!(
        found("tokio::runtime::Runtime::new()"),
        Vec::<String>::new()
    );
    assert_eq!(found("let x = registry.get(n);"), Vec::<String>::new());
}

#[test]
fn first_use_of_each_kind_in_source_order() {
    let body = "std::fs::read(a); reqwest::get(u); std::fs::read(b); std::fs::write(c, d);";
    assert_eq!(
        found(body),
        [
            (Kind::FileRead, "std::fs::read".to_owned()),
            (Kind::Network, "reqwest::get".to_owned()),
            (Kind::FileWrite, "std::fs::write".to_owned()),
        ]
    );
}
