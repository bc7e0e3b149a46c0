//! Stable keys: SHA-256 of canonical JSON (object keys sorted, no whitespace),
//! written `idem_` and 64 hex digits. The same value gives the same key in
//! every process and every run; the time never enters it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The stable key of `value` (the seed's `stableHash`).
pub fn stable_hash(value: &Value) -> String {
    let mut h = Hasher::new();
    h.value(value);
    h.key()
}

/// A key under construction: canonical JSON written straight into SHA-256.
pub(crate) struct Hasher(Sha256);

impl Hasher {
    pub(crate) fn new() -> Hasher {
        Hasher(Sha256::new())
    }

    /// Bytes written as they are (punctuation and keys known to be canonical).
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// `s` as a JSON string.
    pub(crate) fn string(&mut self, s: &str) {
        let _ = serde_json::to_writer(&mut *self, s);
    }

    /// `v` as canonical JSON: object keys sorted, no whitespace.
    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                self.raw(b"{");
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        self.raw(b",");
                    }
                    self.string(k);
                    self.raw(b":");
                    self.value(&map[k]);
                }
                self.raw(b"}");
            }
            Value::Array(items) => {
                self.raw(b"[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.raw(b",");
                    }
                    self.value(item);
                }
                self.raw(b"]");
            }
            other => {
                let _ = serde_json::to_writer(&mut *self, other);
            }
        }
    }

    /// `idem_` and the digest in hex.
    pub(crate) fn key(self) -> String {
        let digest = self.0.finalize();
        let mut key = String::with_capacity(5 + 64);
        key.push_str("idem_");
        for b in digest {
            key.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            key.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        }
        key
    }
}

impl std::io::Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
