//! Files read under a root that nothing inside the root can lead out of: the
//! stores' only way to the disk.
//!
//! Checking a path and then opening it races: a folder swapped for a link
//! between the two leads the open elsewhere (`/etc`). Here nothing is checked
//! apart from the open. The root is opened once per read as a directory
//! handle, and the file is opened relative to it: on Linux with `openat2`
//! and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (the kernel refuses any link
//! and anything outside), elsewhere (or where `openat2` is unavailable, as
//! under some seccomp filters) component by component, each folder opened
//! with `O_NOFOLLOW` relative to the one before. What is open is then asked
//! what it is (a regular file, not a FIFO or a device: opened without
//! blocking, so neither can hang the read) and read up to a bound.
//!
//! Only the kinds of file a store declares are read (`.md` notes, route
//! modules), and listings never follow a link either.

use std::io;
use std::path::{Component, Path};

/// How deep a listing goes, and how many entries it looks at, at most: a
/// store is a handful of folders, not a file system.
const MAX_DEPTH: usize = 32;
const MAX_ENTRIES: usize = 100_000;

/// Why `relative` is refused, as an `InvalidInput` error naming it.
fn refused(relative: &str, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("`{relative}` {why}"))
}

/// `relative` as a path of plain names under the root, of one of `kinds`.
fn spelled(relative: &str, kinds: &[&str]) -> io::Result<()> {
    let path = Path::new(relative);
    let plain = !relative.is_empty()
        && !relative.contains('\0')
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(refused(relative, "is not a path inside the store"));
    }
    let kind = path.extension().and_then(|e| e.to_str());
    if !kind.is_some_and(|k| kinds.contains(&k)) {
        let kinds: Vec<String> = kinds.iter().map(|k| format!(".{k}")).collect();
        return Err(refused(
            relative,
            &format!("is not a file this store reads ({})", kinds.join(", ")),
        ));
    }
    Ok(())
}

/// The text of the file `relative` names under `root`: a regular file of one
/// of `kinds`, reached without passing through a link or leaving the root,
/// at most `max` bytes. `NotFound` when nothing is there; `InvalidInput`
/// when the path is not a plain path of a declared kind, leads through a
/// link, or names something that is not a regular file; `FileTooLarge` past
/// `max`.
pub fn read(root: &Path, relative: &str, kinds: &[&str], max: u64) -> io::Result<String> {
    use std::io::Read;
    spelled(relative, kinds)?;
    let file = imp::open_file(root, relative)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused(relative, "is not a regular file"));
    }
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "`{relative}` is {} bytes, over the limit of {max}",
                meta.len()
            ),
        ));
    }
    let mut text = String::new();
    // The file may grow after the check: never read past the bound.
    file.take(max).read_to_string(&mut text)?;
    Ok(text)
}

/// The regular files of one of `kinds` under `root` (in its folders too
/// when `deep`), as paths relative to it with `/` between names, sorted.
/// Links are neither followed nor listed; names that are not UTF-8 are
/// skipped.
pub fn list(root: &Path, kinds: &[&str], deep: bool) -> io::Result<Vec<String>> {
    let mut out = imp::list(root, kinds, deep)?;
    out.sort();
    Ok(out)
}

fn of_kind(name: &str, kinds: &[&str]) -> bool {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|k| kinds.contains(&k))
}

#[cfg(unix)]
mod imp {
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, openat, statat};
    use rustix::io::Errno;

    use super::{MAX_DEPTH, MAX_ENTRIES, of_kind, refused};

    fn open_root(root: &Path) -> io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(openat(CWD, root, flags, Mode::empty())?)
    }

    /// An open failure, said in the store's words.
    fn said(relative: &str, e: Errno) -> io::Error {
        match e {
            Errno::LOOP => refused(
                relative,
                "leads through a link, which the store does not follow",
            ),
            Errno::XDEV => refused(relative, "leads outside the store"),
            Errno::NOTDIR => refused(relative, "is not a path of folders"),
            e => e.into(),
        }
    }

    /// The file `relative` (a plain path) names under `root`, opened for
    /// reading without following any link and without blocking.
    pub(super) fn open_file(root: &Path, relative: &str) -> io::Result<File> {
        let root_fd = open_root(root)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = beneath(root_fd.as_fd(), relative, flags).map_err(|e| said(relative, e))?;
        Ok(File::from(fd))
    }

    /// `relative` opened under `dir` with `flags`, never through a link.
    fn beneath(dir: BorrowedFd<'_>, relative: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use rustix::fs::{ResolveFlags, openat2};
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            // EAGAIN: a rename raced the lookup; the kernel asks to try again.
            for _ in 0..3 {
                match openat2(dir, relative, flags, Mode::empty(), resolve) {
                    Err(Errno::AGAIN) => continue,
                    // No openat2 here (an old kernel, a seccomp filter): the walk.
                    Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::TOOBIG) => break,
                    done => return done,
                }
            }
        }
        walk(dir, relative, flags)
    }

    /// The portable way: each folder opened relative to the one before,
    /// with `O_NOFOLLOW`, then the file. Every name is plain (no `..`, no
    /// root), so the walk only goes down, and each step holds what it found.
    fn walk(dir: BorrowedFd<'_>, relative: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
        let names: Vec<&OsStr> = Path::new(relative)
            .components()
            .map(|c| c.as_os_str())
            .collect();
        let Some((last, folders)) = names.split_last() else {
            return Err(Errno::INVAL);
        };
        let folder = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut here: Option<OwnedFd> = None;
        for name in folders {
            let at = here.as_ref().map_or(dir, |f| f.as_fd());
            here = Some(openat(at, *name, folder, Mode::empty())?);
        }
        let at = here.as_ref().map_or(dir, |f| f.as_fd());
        openat(at, *last, flags, Mode::empty())
    }

    pub(super) fn list(root: &Path, kinds: &[&str], deep: bool) -> io::Result<Vec<String>> {
        let folder = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut out = Vec::new();
        let mut seen = 0usize;
        let mut todo: Vec<(String, OwnedFd, usize)> = vec![(String::new(), open_root(root)?, 0)];
        while let Some((prefix, fd, depth)) = todo.pop() {
            let mut entries = Dir::read_from(&fd)?;
            while let Some(entry) = entries.read() {
                let entry = entry?;
                seen += 1;
                if seen > MAX_ENTRIES {
                    return Err(io::Error::other(format!(
                        "{} holds more than {MAX_ENTRIES} entries; a store is not that large",
                        root.display()
                    )));
                }
                let Ok(name) = entry.file_name().to_str() else {
                    continue;
                };
                if name == "." || name == ".." {
                    continue;
                }
                let mut kind = entry.file_type();
                if kind == FileType::Unknown {
                    kind = FileType::from_raw_mode(
                        statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode,
                    );
                }
                let path = if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}/{name}")
                };
                match kind {
                    FileType::Directory if deep && depth < MAX_DEPTH => {
                        // Swapped for a link since it was listed: ELOOP, skipped.
                        if let Ok(sub) = openat(&fd, name, folder, Mode::empty()) {
                            todo.push((path, sub, depth + 1));
                        }
                    }
                    FileType::RegularFile if of_kind(name, kinds) => out.push(path),
                    _ => {}
                }
            }
        }
        Ok(out)
    }
}

/// Elsewhere: the resolved path must stay under the resolved root. This
/// checks, then opens, so a swap in between could lead out: Unix builds
/// (every one this project ships) use the handle-relative open above.
#[cfg(not(unix))]
mod imp {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    use super::{MAX_DEPTH, of_kind, refused};

    pub(super) fn open_file(root: &Path, relative: &str) -> io::Result<File> {
        let root = std::fs::canonicalize(root)?;
        let resolved = std::fs::canonicalize(root.join(relative))?;
        if !resolved.starts_with(&root) {
            return Err(refused(relative, "leads outside the store"));
        }
        File::open(resolved)
    }

    pub(super) fn list(root: &Path, kinds: &[&str], deep: bool) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        let mut todo = vec![(root.to_path_buf(), String::new(), 0)];
        while let Some((dir, prefix, depth)) = todo.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let path = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                let kind = entry.file_type()?;
                if kind.is_dir() && deep && depth < MAX_DEPTH {
                    todo.push((entry.path(), path, depth + 1));
                } else if kind.is_file() && of_kind(&name, kinds) {
                    out.push(path);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_of_a_declared_kind_are_read() {
        for bad in [
            "",
            "../x.md",
            "/etc/passwd",
            "a/../b.md",
            "./a.md",
            "a\0b.md",
        ] {
            assert!(spelled(bad, &["md"]).is_err(), "{bad:?}");
        }
        assert!(spelled("notes/a.md", &["md"]).is_ok());
        let e = spelled("notes/a.txt", &["md"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`notes/a.txt` is not a file this store reads (.md)"
        );
        assert!(spelled("notes/noext", &["md"]).is_err());
    }
}
