//! Reading the files an operator hands the runtime (a registry, an overlay,
//! a key set, API keys, schedules, envelopes): regular files only, opened
//! without blocking and read within a size and a time, as JSON with no key
//! repeated in one object.
//!
//! A FIFO or a device given where a file is expected would otherwise block
//! the thread that opens it for good (a server's every request behind it);
//! `serde_json` keeps the last value of a repeated key without a word, so a
//! `"status": "disabled"` followed by another `"status"` would be undone
//! silently, and two readers of one file could see different documents.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The most an operator's file may weigh.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// The longest reading an operator's file may take ([`read_json`]).
pub(crate) const READ_WITHIN: Duration = Duration::from_secs(10);

/// The bytes of the regular file at `path`, at most `max` of them: opened
/// without blocking (a FIFO opens at once, and is then refused with the
/// other files that are not regular: devices, sockets, directories).
pub(crate) fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = kind_of(&meta.file_type());
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is {kind}, not a regular file", path.display()),
        ));
    }
    if meta.len() > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is over {max} bytes", path.display()),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read is cut at the bound.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is over {max} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// The JSON document in the regular file at `path`, read on a thread of its
/// own within [`READ_WITHIN`] (a file on a network share that stops
/// answering does not stop the caller), with no key repeated in an object.
/// The error names the file and what is wrong.
pub fn read_json(path: &Path) -> Result<Value, String> {
    let owned = path.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::Builder::new()
        .name("skill-read-file".to_owned())
        .spawn(move || {
            let _ = tx.send(read_bounded(&owned, MAX_FILE_BYTES));
        });
    let read = match reader {
        Ok(_) => rx.recv_timeout(READ_WITHIN).unwrap_or_else(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("not read within {} s", READ_WITHIN.as_secs()),
            ))
        }),
        // No thread to spare: read here.
        Err(_) => read_bounded(path, MAX_FILE_BYTES),
    };
    let bytes = read.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_json(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// `bytes` as a JSON document in which no object repeats a key.
pub(crate) fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    refuse_duplicate_keys(bytes)?;
    serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))
}

/// `Ok` when `bytes` is JSON in which no object repeats a key; the error
/// names the first repeated key by its JSON pointer.
pub(crate) fn refuse_duplicate_keys(bytes: &[u8]) -> Result<(), String> {
    match first_duplicate_key(bytes) {
        Err(e) => Err(format!("not JSON: {e}")),
        Ok(Some(at)) => Err(format!("key `{at}` appears twice in its object; keep one")),
        Ok(None) => Ok(()),
    }
}

/// The JSON pointer of the first key that appears twice in one object of
/// `text`, if any (`Ok(None)` for a document without; `Err` when `text` is
/// not JSON).
pub fn first_duplicate_key(text: &[u8]) -> Result<Option<String>, serde_json::Error> {
    let mut path = Vec::new();
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(text);
    Walk {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

struct Walk<'a> {
    path: &'a mut Vec<String>,
    found: &'a mut Option<String>,
}

fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            self.path.push(i.to_string());
            let more = seq.next_element_seed(Walk {
                path: self.path,
                found: self.found,
            })?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(key.clone());
            if !keys.insert(key) && self.found.is_none() {
                *self.found = Some(pointer(self.path));
            }
            map.next_value_seed(Walk {
                path: self.path,
                found: self.found,
            })?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_repeated_key_by_its_pointer() {
        assert_eq!(
            first_duplicate_key(br#"{"a": 1, "b": [{"c": 1}]}"#).unwrap(),
            None
        );
        assert_eq!(
            first_duplicate_key(br#"{"a": 1, "b": [{"c": 1}, {"x/y": 2, "x/y": 3}]}"#).unwrap(),
            Some("/b/1/x~1y".to_owned())
        );
        assert_eq!(
            first_duplicate_key(br#"{"a": 1, "a": 2}"#).unwrap(),
            Some("/a".to_owned())
        );
        assert!(first_duplicate_key(b"{").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_at_once_and_a_file_is_read() {
        let dir = std::env::temp_dir().join(format!("skill-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.json");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let refused = read_json(&fifo).unwrap_err();
        assert!(refused.contains("a FIFO, not a regular file"), "{refused}");
        assert!(
            read_json(Path::new("/dev/zero"))
                .unwrap_err()
                .contains("a device")
        );
        let file = dir.join("doc.json");
        std::fs::write(&file, br#"{"status": "disabled", "status": "active"}"#).unwrap();
        let twice = read_json(&file).unwrap_err();
        assert!(twice.contains("`/status` appears twice"), "{twice}");
        std::fs::write(&file, br#"{"status": "disabled"}"#).unwrap();
        assert_eq!(read_json(&file).unwrap()["status"], "disabled");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
