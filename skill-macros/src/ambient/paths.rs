//! What a path names: the tables of the ambient APIs of `std`, `tokio`,
//! `async_std` and the listed crates, and the classification of one path by
//! its segments and the methods called on its value.

use skill_core::capability::Ambient as Kind;

/// What writes among the file system's items: functions, and the types whose
/// constructors open for writing (`OpenOptions`, `File::options`, `File::create`)
/// unless only `.read(true)` is set on them.
const FS_WRITES: &[&str] = &[
    "write",
    "create_dir",
    "create_dir_all",
    "remove_file",
    "remove_dir",
    "remove_dir_all",
    "rename",
    "copy",
    "hard_link",
    "set_permissions",
    "soft_link",
    "symlink",
    "symlink_file",
    "symlink_dir",
    "chown",
    "lchown",
    "fchown",
    "chroot",
    "mkfifo",
    "DirBuilder",
    "OpenOptions",
    "options",
    "create",
    "create_new",
];
/// The file system's items that read (with [`FS_WRITES`], every item a bare
/// `fs::` path or a glob import is matched against).
const FS_READS: &[&str] = &[
    "read",
    "read_to_string",
    "read_dir",
    "read_link",
    "metadata",
    "symlink_metadata",
    "canonicalize",
    "exists",
    "try_exists",
    "File",
    "open",
    "Metadata",
    "Permissions",
    "DirEntry",
    "ReadDir",
];
const NET_ITEMS: &[&str] = &[
    "TcpStream",
    "TcpListener",
    "TcpSocket",
    "UdpSocket",
    "UnixStream",
    "UnixListener",
    "UnixDatagram",
    "lookup_host",
];
/// The network module's pure data: addresses and their parsing reach
/// nothing.
const NET_DATA: &[&str] = &[
    "IpAddr",
    "Ipv4Addr",
    "Ipv6Addr",
    "SocketAddr",
    "SocketAddrV4",
    "SocketAddrV6",
    "AddrParseError",
    "Shutdown",
    "Ipv6MulticastScope",
];
/// `Path` and `PathBuf` methods that read the file system (joins, parents
/// and extensions reach nothing).
const PATH_FS_METHODS: &[&str] = &[
    "exists",
    "try_exists",
    "is_file",
    "is_dir",
    "is_symlink",
    "metadata",
    "symlink_metadata",
    "canonicalize",
    "read_dir",
    "read_link",
];
/// Methods only a file has that change it: a body that opens a file and
/// calls one of them anywhere (on a value held in a variable) writes.
pub(super) const FILE_ONLY_WRITES: &[&str] = &[
    "set_permissions",
    "set_len",
    "set_modified",
    "set_times",
    "sync_all",
    "sync_data",
];
/// Methods of an opened file that change it, whatever it was opened for.
const FILE_WRITE_METHODS: &[&str] = &[
    "set_permissions",
    "set_len",
    "set_modified",
    "set_times",
    "write",
    "write_all",
    "write_fmt",
    "write_vectored",
    "sync_all",
    "sync_data",
];
const PROCESS_ITEMS: &[&str] = &["Command", "exit", "abort", "id", "Child", "Stdio"];
const ENV_MUTATIONS: &[&str] = &["set_var", "remove_var", "set_current_dir"];
/// The roots whose `fs`, `net` and `process` modules are ambient authority.
const STD_ROOTS: &[&str] = &["std", "tokio", "async_std"];
const HTTP_CRATES: &[&str] = &[
    "reqwest",
    "hyper",
    "ureq",
    "surf",
    "isahc",
    "attohttpc",
    "curl",
];
const DB_CRATES: &[&str] = &[
    "sqlx",
    "diesel",
    "postgres",
    "tokio_postgres",
    "redis",
    "mongodb",
    "rusqlite",
    "sea_orm",
    "sled",
];

/// The kind of a file-system path by the operation it names; `chain` is the
/// methods called on what it returns, which decide for `OpenOptions`.
fn fs_kind(rest: &[&str], chain: &[String]) -> Kind {
    let opens = |r: &&str| matches!(*r, "OpenOptions" | "options");
    let writes = |r: &&str| FS_WRITES.contains(r) && !opens(r);
    if rest.iter().any(writes)
        || chain.iter().any(|m| {
            FILE_WRITE_METHODS.contains(&m.as_str())
                || m == "write"
                || m == "append"
                || m == "truncate"
                || m == "create"
        })
    {
        return Kind::FileWrite;
    }
    if rest.iter().any(opens) {
        // Options that only ever read: `.read(true)` and `.open(..)`, nothing else.
        let read_only = !chain.is_empty()
            && chain
                .iter()
                .all(|m| matches!(m.as_str(), "new" | "read" | "open"));
        return if read_only {
            Kind::FileRead
        } else {
            Kind::FileWrite
        };
    }
    Kind::FileRead
}

/// Classify one path by its segments (leading `::` ignored). Only paths that
/// lead to `std`, `tokio`, `async_std` or a listed crate count; a bare module
/// path (`fs::write`, imported at module level) counts when it names one of
/// that module's items, and a bare type (`Command`, `File`) never does: it
/// may be the crate's own. `chain` is the methods called on the path's value.
pub fn classify(segments: &[String], chain: &[String]) -> Option<Kind> {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    // The runtime's own functions that reach the outside world: what
    // `std::fs` would need, they need (`RUNTIME_AMBIENT`, which the backstop
    // and the audit read too). A path through the crate's facade names one
    // by its last segments (`JsonLinesSink::append`), whatever module it
    // came through.
    if s.first() == Some(&"skill_runtime")
        && let Some((_, _, kind)) =
            skill_core::capability::RUNTIME_AMBIENT
                .iter()
                .find(|(p, _, _)| {
                    let tail: Vec<&str> = p.rsplit("::").take(2).collect();
                    s.len() >= 2 && s[s.len() - 1] == tail[0] && s[s.len() - 2] == tail[1]
                })
    {
        return Some(*kind);
    }
    let std_root = |r: &&str| STD_ROOTS.contains(r);
    match s.as_slice() {
        [root, "fs", rest @ ..] if std_root(root) => Some(fs_kind(rest, chain)),
        ["std", "os", _, "fs", rest @ ..] => Some(fs_kind(rest, chain)),
        [root, "net", item, ..] if std_root(root) && NET_DATA.contains(item) => None,
        ["std", "os", _, "net", ..] => Some(Kind::Network),
        ["std", "os", _, "process", ..] => Some(Kind::Process),
        [root, "net", ..] if std_root(root) => Some(Kind::Network),
        [root, "process", ..] if std_root(root) => Some(Kind::Process),
        ["std", "env", op] if ENV_MUTATIONS.contains(op) => Some(Kind::Env),
        [first, ..] if HTTP_CRATES.contains(first) => Some(Kind::Network),
        [first, ..] if DB_CRATES.contains(first) => Some(Kind::Database),
        ["fs", item, rest @ ..] if FS_READS.contains(item) || FS_WRITES.contains(item) => {
            let mut all = vec![*item];
            all.extend_from_slice(rest);
            Some(fs_kind(&all, chain))
        }
        ["net", item, ..] if NET_ITEMS.contains(item) => Some(Kind::Network),
        // A path made here and asked of the file system: `Path::new(p).exists()`.
        [.., "Path" | "PathBuf", "new" | "from"]
            if chain.iter().any(|m| PATH_FS_METHODS.contains(&m.as_str())) =>
        {
            Some(Kind::FileRead)
        }
        ["process", item, ..] if PROCESS_ITEMS.contains(item) => Some(Kind::Process),
        ["env", op] if ENV_MUTATIONS.contains(op) => Some(Kind::Env),
        _ => None,
    }
}

/// Whether `name` is an item of the module `module` (a glob import's path)
/// that [`classify`] counts: a glob brings in only known names.
pub(super) fn known_item(module: &[String], name: &str) -> bool {
    let m: Vec<&str> = module.iter().map(String::as_str).collect();
    match m.as_slice() {
        [.., "fs"] => FS_READS.contains(&name) || FS_WRITES.contains(&name),
        [.., "net"] => NET_ITEMS.contains(&name),
        [.., "process"] => PROCESS_ITEMS.contains(&name),
        ["std", "env"] => ENV_MUTATIONS.contains(&name),
        _ => false,
    }
}
