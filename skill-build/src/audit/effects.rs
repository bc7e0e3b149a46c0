//! Which compiled functions reach ambient authority, by the name the
//! compiler gave them: the backstop's `std` and `tokio` list
//! ([`crate::DISALLOWED_METHODS`]), the crates `#[skill]`'s scan lists,
//! and the C and system-call entry points code can reach without `std`.

use crate::DISALLOWED_METHODS;

/// The ambient kinds, with the words `#[skill(ambient(...))]` uses.
pub const KINDS: &[&str] = &[
    "file_read",
    "file_write",
    "network",
    "process",
    "env",
    "database",
];

/// Paths the backstop does not list, each with its kind: functions whose
/// effect the listed ones reach through code the audit reads as a leaf.
const MORE: &[(&str, &str)] = &[
    ("std::fs::OpenOptions::_open", "file_write"),
    ("std::fs::File::set_len", "file_write"),
    ("std::fs::File::set_permissions", "file_write"),
    ("std::fs::DirBuilder::create", "file_write"),
    ("std::fs::DirBuilder::_create", "file_write"),
    ("std::process::Command::spawn", "process"),
    ("std::process::Command::output", "process"),
    ("std::process::Command::status", "process"),
    ("tokio::process::Command::spawn", "process"),
    ("tokio::process::Command::output", "process"),
    ("tokio::process::Command::status", "process"),
    ("mio::net::TcpStream::connect", "network"),
    ("mio::net::TcpListener::bind", "network"),
    ("mio::net::UdpSocket::bind", "network"),
    ("mio::net::UnixStream::connect", "network"),
    ("mio::net::UnixListener::bind", "network"),
    ("socket2::Socket::new", "network"),
    ("socket2::Socket::connect", "network"),
    ("socket2::Socket::bind", "network"),
    ("rustix::backend::fs::syscalls::open", "file_read"),
    ("rustix::backend::fs::syscalls::openat", "file_read"),
    ("rustix::backend::fs::syscalls::openat2", "file_read"),
    ("rustix::backend::fs::syscalls::unlinkat", "file_write"),
    ("rustix::backend::fs::syscalls::renameat", "file_write"),
    ("rustix::backend::fs::syscalls::renameat2", "file_write"),
    ("rustix::backend::fs::syscalls::mkdirat", "file_write"),
    ("rustix::backend::net::syscalls::socket", "network"),
    ("rustix::backend::net::syscalls::connect", "network"),
    ("rustix::backend::process::syscalls::kill", "process"),
];

/// Crates whose every function is one kind, as `#[skill]`'s scan counts a
/// path into them.
const CRATES: &[(&str, &str)] = &[
    ("reqwest", "network"),
    ("hyper", "network"),
    ("ureq", "network"),
    ("surf", "network"),
    ("isahc", "network"),
    ("attohttpc", "network"),
    ("curl", "network"),
    ("sqlx", "database"),
    ("diesel", "database"),
    ("postgres", "database"),
    ("tokio_postgres", "database"),
    ("redis", "database"),
    ("mongodb", "database"),
    ("rusqlite", "database"),
    ("sea_orm", "database"),
    ("sled", "database"),
];

/// The runtime's entry points that run skills (or agents, or jobs) with
/// nothing checked against the caller's `calls(...)`: a handler reaching
/// one reaches every skill. Reported as `runner`, which no manifest can
/// declare (a skill runs others through its context).
const RUNNERS: &[&str] = &[
    "skill_runtime::exec::runtime::Runtime::invoke",
    "skill_runtime::exec::runtime::Runtime::invoke_watched",
    "skill_runtime::exec::runtime::Runtime::invoke_json",
    "skill_runtime::exec::runtime::Runtime::invoke_text",
    "skill_runtime::exec::runtime::Runtime::call",
    "skill_runtime::exec::runtime::Runtime::call_with",
    "skill_runtime::exec::runtime::Runtime::context",
    "skill_runtime::exec::runtime::Runtime::resources",
    "skill_runtime::exec::runtime::RuntimeBuilder::build",
    "skill_runtime::agent::runner::AgentRunner::run",
    "skill_runtime::agent::runner::AgentRunner::run_job",
    "skill_runtime::queue::memory::InProcessQueue::enqueue",
    "skill_runtime::queue::memory::InProcessQueue::enqueue_at",
    "skill_runtime::queue::redis::backend::RedisBackend::enqueue",
    "skill_runtime::queue::redis::backend::RedisBackend::enqueue_at",
    "skill_runtime::queue::redis::backend::RedisBackend::enqueue_and_wait",
    "skill_runtime::queue::postgres::backend::PostgresBackend::enqueue",
    "skill_runtime::queue::postgres::backend::PostgresBackend::enqueue_at",
    "skill_runtime::queue::postgres::backend::PostgresBackend::enqueue_and_wait",
    "skill_runtime::queue::fleet::Fleet::enqueue",
    "skill_runtime::queue::fleet::Fleet::enqueue_at",
    "skill_runtime::queue::fleet::Fleet::enqueue_and_wait",
    "skill_runtime::mcp::server::McpServer::call",
    "skill_runtime::mcp::server::McpServer::call_as",
    "skill_runtime::mcp::server::McpServer::call_watched",
];

/// The kind the audit reports a runner entry point as.
pub const RUNNER: &str = "runner";

/// C library functions (undefined symbols without a Rust path).
const LIBC: &[(&str, &str)] = &[
    ("open", "file_read"),
    ("open64", "file_read"),
    ("openat", "file_read"),
    ("openat64", "file_read"),
    ("creat", "file_write"),
    ("fopen", "file_read"),
    ("unlink", "file_write"),
    ("unlinkat", "file_write"),
    ("rename", "file_write"),
    ("renameat", "file_write"),
    ("mkdir", "file_write"),
    ("mkdirat", "file_write"),
    ("rmdir", "file_write"),
    ("truncate", "file_write"),
    ("chmod", "file_write"),
    ("chown", "file_write"),
    ("symlink", "file_write"),
    ("link", "file_write"),
    ("socket", "network"),
    ("connect", "network"),
    ("bind", "network"),
    ("listen", "network"),
    ("getaddrinfo", "network"),
    ("gethostbyname", "network"),
    ("fork", "process"),
    ("vfork", "process"),
    ("execve", "process"),
    ("execvp", "process"),
    ("execv", "process"),
    ("posix_spawn", "process"),
    ("posix_spawnp", "process"),
    ("system", "process"),
    ("kill", "process"),
    ("setenv", "env"),
    ("unsetenv", "env"),
    ("putenv", "env"),
    ("chdir", "env"),
];

/// The ambient kind the function named `name` (demangled, without its hash)
/// reaches, if any; `path` is the name's [`subject`].
pub fn classify_as(name: &str, path: &str) -> Option<&'static str> {
    if !name.contains("::") {
        return LIBC.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
    }
    // A name looked up in the DNS (an address written as text: `str`,
    // `String`, `(&str, u16)`), not an address already made.
    if name.contains(" as std::net::socket_addr::ToSocketAddrs>::to_socket_addrs")
        && name
            .split(" as ")
            .next()
            .is_some_and(|ty| ty.contains("str"))
    {
        return Some("network");
    }
    // The runtime's own: its I/O entry points and the ones that run
    // skills, before anything of it is trusted.
    if let Some((_, _, kind)) = skill_runtime::capability::RUNTIME_AMBIENT
        .iter()
        .find(|(_, defined, _)| under(path, defined))
    {
        return Some(kind.as_str());
    }
    if RUNNERS.iter().any(|r| under(path, r)) {
        return Some(RUNNER);
    }
    let listed = DISALLOWED_METHODS
        .iter()
        .map(|(p, k)| (*p, kind_of(k)))
        .chain(MORE.iter().copied())
        .find(|(p, _)| under(path, p));
    if let Some((_, kind)) = listed {
        return Some(kind);
    }
    let krate = path.split("::").next().unwrap_or_default();
    CRATES.iter().find(|(c, _)| *c == krate).map(|(_, k)| *k)
}

/// Whether the audit stops at the function named by `path` (a [`subject`])
/// without reading it. The runtime's code, once its entry points that reach
/// the outside world or run skills are classified (`RUNTIME_AMBIENT`,
/// [`RUNNERS`]: checked before this): what else of it a handler reaches is
/// what its context hands out, the resources its capabilities grant and the
/// skills its `calls(...)` lists, each held to the manifest by the type
/// checker. Not trusted: `typed`, which runs a skill's own code for the
/// runtime (its input's decoding, its handler, its output's encoding), read
/// as the skill's.
pub fn trusted(path: &str) -> bool {
    if path.starts_with(TYPED) {
        return false;
    }
    RUNTIME_CRATES.iter().any(|c| {
        path.strip_prefix(c)
            .is_some_and(|rest| rest.starts_with("::"))
    })
}

/// The crates whose code the audit trusts (see [`trusted`]).
pub const RUNTIME_CRATES: &[&str] = &["skill_runtime", "skill_core", "inventory"];

/// The runtime's function that runs one skill's typed code.
pub const TYPED: &str = "skill_runtime::contract::entry::typed";

/// The path a function is named by: for `<T as Trait>::method` and
/// `<impl Trait for T>::method`, `T::method` (the receiver's crate decides);
/// generic arguments removed.
pub fn subject(name: &str) -> String {
    let mut rest = name;
    let mut out = String::new();
    if let Some(inner) = rest.strip_prefix('<') {
        let close = matching(inner);
        let head = &inner[..close];
        let ty = head
            .strip_prefix("impl ")
            .and_then(|h| h.rsplit_once(" for ").map(|(_, t)| t))
            .unwrap_or_else(|| head.split_once(" as ").map_or(head, |(t, _)| t));
        out.push_str(&strip_generics(ty));
        rest = &inner[close + 1..];
    }
    // An inherent impl's method: `module::<impl Type>::method` is named by
    // `Type::method`, wherever its impl block is written.
    if out.is_empty()
        && let Some(at) = inherent_impl(rest)
    {
        let inner = &rest[at + "::<impl ".len()..];
        let close = matching(inner);
        let ty = &inner[..close];
        if !ty.contains(" for ") {
            out.push_str(&strip_generics(ty));
            rest = &inner[(close + 1).min(inner.len())..];
        }
    }
    out.push_str(&strip_generics(rest));
    out
}

/// Where `::<impl ` opens a segment of `path` itself (not of its generic
/// arguments).
fn inherent_impl(path: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in path.char_indices() {
        match c {
            '<' if depth == 0 && path[..i].ends_with("::") && path[i..].starts_with("<impl ") => {
                return Some(i - 2);
            }
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn matching(s: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if depth == 0 => return i,
            '>' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn strip_generics(s: &str) -> String {
    let mut depth = 0usize;
    s.chars()
        .filter(|c| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// Whether the function at `path` (where it is defined) is the one `listed`
/// names (where it is re-exported), or inside it (its closures and inner
/// functions): the same crate, the listed segments in order, and only
/// module segments (lowercase) in between: `std::net::tcp::TcpStream::connect`
/// is `std::net::TcpStream::connect`, `<std::fs::File as Write>::write` is
/// not `std::fs::write`.
fn under(path: &str, listed: &str) -> bool {
    let (mut have, mut want) = (path.split("::"), listed.split("::"));
    if have.next() != want.next() {
        return false;
    }
    let (mut wanted, mut segment) = (want.next(), have.next());
    while let Some(w) = wanted {
        let Some(seg) = segment else { return false };
        let next = have.next();
        if seg == w {
            wanted = want.next();
        } else if !seg.starts_with(|c: char| c.is_ascii_lowercase()) || next.is_none() {
            return false;
        }
        segment = next;
    }
    true
}

fn kind_of(word: &str) -> &'static str {
    match word {
        "file read" => "file_read",
        "file write" => "file_write",
        "network" => "network",
        "process" => "process",
        _ => "env",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(name: &str) -> Option<&'static str> {
        classify_as(name, &subject(name))
    }

    #[test]
    fn names_are_read_by_their_receiver() {
        assert_eq!(classify("std::fs::write::inner"), Some("file_write"));
        assert_eq!(classify("std::fs::write"), Some("file_write"));
        assert_eq!(classify("std::fs::write_all"), None);
        assert_eq!(classify("std::fs::File::create_new"), Some("file_write"));
        assert_eq!(
            classify("std::fs::File::open::{{closure}}"),
            Some("file_read")
        );
        assert_eq!(classify("<std::fs::File as std::io::Write>::write"), None);
        assert_eq!(classify("std::fs::Metadata::len"), None);
        assert_eq!(
            classify("<redis::Client as core::fmt::Debug>::fmt"),
            Some("database")
        );
        assert_eq!(classify("open64"), Some("file_read"));
        assert_eq!(
            classify("std::net::tcp::TcpStream::connect"),
            Some("network")
        );
        assert_eq!(
            classify("tokio::fs::file::File::create::{{closure}}"),
            Some("file_write")
        );
        assert_eq!(classify("tokio::fs::write::write"), Some("file_write"));
        assert_eq!(classify("std::net::tcp::TcpStream::peer_addr"), None);
        assert_eq!(
            classify("<(&str, u16) as std::net::socket_addr::ToSocketAddrs>::to_socket_addrs"),
            Some("network")
        );
        assert_eq!(
            classify(
                "<core::net::socket_addr::SocketAddr as std::net::socket_addr::ToSocketAddrs>::to_socket_addrs"
            ),
            None
        );
        assert_eq!(classify("memcpy"), None);
        assert_eq!(classify("std::env::set_var"), Some("env"));
        assert_eq!(classify("std::env::var"), None);
        let trusted_name = |name: &str| trusted(&subject(name));
        assert!(trusted_name(
            "<skill_runtime::contract::skill::Ctx<x::y> as core::ops::Drop>::drop"
        ));
        assert!(trusted_name("skill_runtime::exec::job::run"));
        assert!(!trusted_name(
            "core::ptr::drop_in_place<skill_runtime::Ctx<a::b>>"
        ));
        assert_eq!(subject("<a::B<c::D> as e::F>::g"), "a::B::g");
        assert_eq!(subject("<impl e::F for a::B<c::D>>::g"), "a::B::g");
        assert_eq!(
            subject("a::job::<impl a::rt::Runtime>::invoke::{{closure}}"),
            "a::rt::Runtime::invoke::{{closure}}"
        );
        assert_eq!(
            classify(
                "skill_runtime::exec::job::<impl skill_runtime::exec::runtime::Runtime>::invoke_json::{{closure}}"
            ),
            Some(RUNNER)
        );
        assert!(!trusted_name(TYPED));
        assert_eq!(
            subject("core::ptr::drop_in_place<a::job::<impl a::rt::Runtime>::invoke::{{closure}}>"),
            "core::ptr::drop_in_place"
        );
    }
}
