//! Job and trace ids: UUID v4 text, or whatever id a caller brings.
//!
//! Two ids are made for every job and copied into its context, result and record,
//! so an id is a value, not a pointer: up to [`Id::INLINE`] bytes (a UUID's 36)
//! live inside the `Id` itself. Making one costs no allocation, copying one no
//! reference count, and a record kept in memory holds no extra heap blocks for
//! them. Longer ids a caller brings are shared behind an `Arc`.

use std::borrow::Borrow;
use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A job or trace id; reads as a `&str`.
#[derive(Clone)]
pub struct Id(Repr);

#[derive(Clone)]
enum Repr {
    /// The first `len` bytes are the id's UTF-8 text.
    Inline {
        len: u8,
        bytes: [u8; Id::INLINE],
    },
    Shared(Arc<str>),
}

impl Id {
    /// The longest id kept inline: a hyphenated UUID.
    pub const INLINE: usize = 36;

    /// A fresh UUID v4 (random bits, version and variant set).
    ///
    /// The bits come from a process-wide random seed, drawn once from the OS,
    /// mixed with a counter through SplitMix64: ids are unique within the process
    /// and unpredictable across processes, without a system call per id (one
    /// `getrandom` per id was a fifth of the cost of a small invocation). The
    /// counter is handed to threads in blocks (`next_number`).
    pub fn new_v4() -> Id {
        static SEED: OnceLock<[u64; 2]> = OnceLock::new();
        let seed = SEED.get_or_init(|| {
            let b = *uuid::Uuid::new_v4().as_bytes();
            let (hi, lo) = b.split_at(8);
            [
                u64::from_le_bytes(hi.try_into().unwrap_or_default()),
                u64::from_le_bytes(lo.try_into().unwrap_or_default()),
            ]
        });
        let n = next_number();
        let hi = splitmix(seed[0] ^ n);
        let lo = splitmix(seed[1].wrapping_add(n));
        // Version 4 in the high nibble of byte 6, variant 10 in byte 8.
        let hi = (hi & !0xf000) | 0x4000;
        let lo = (lo & !(0xc0 << 56)) | (0x80 << 56);
        // Hyphenated lowercase hex: 32 digits, then the hyphens put in place.
        let mut hex = [0u8; 32];
        hex16(hi, &mut hex[..16]);
        hex16(lo, &mut hex[16..]);
        let mut bytes = [b'-'; Id::INLINE];
        bytes[..8].copy_from_slice(&hex[..8]);
        bytes[9..13].copy_from_slice(&hex[8..12]);
        bytes[14..18].copy_from_slice(&hex[12..16]);
        bytes[19..23].copy_from_slice(&hex[16..20]);
        bytes[24..].copy_from_slice(&hex[20..]);
        Id(Repr::Inline {
            len: Id::INLINE as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Always valid: only `From<&str>` and `new_v4` fill it, from text.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Shared(s) => s,
        }
    }
}

/// The 16 hex digits of `x`, most significant first, into `out[..16]`.
///
/// Each nibble is spread into a byte of a `u128`, then all sixteen become
/// ASCII at once (`'0'` plus the nibble, plus 39 more from 10 up, to reach
/// `'a'`): a few dozen instructions instead of a table lookup per digit.
fn hex16(x: u64, out: &mut [u8]) {
    let mut v = u128::from(x);
    v = (v | (v << 32)) & 0x0000_0000_ffff_ffff_0000_0000_ffff_ffff;
    v = (v | (v << 16)) & 0x0000_ffff_0000_ffff_0000_ffff_0000_ffff;
    v = (v | (v << 8)) & 0x00ff_00ff_00ff_00ff_00ff_00ff_00ff_00ff;
    v = (v | (v << 4)) & 0x0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f;
    const ONES: u128 = 0x0101_0101_0101_0101_0101_0101_0101_0101;
    let letters = ((v + 6 * ONES) >> 4) & ONES;
    let ascii = v + 0x30 * ONES + letters * 39;
    out[..16].copy_from_slice(&ascii.to_be_bytes());
}

/// A number no other call in this process gets: each thread takes numbers from
/// a block of its own and reserves a new block when it has used it up, so making
/// an id costs no atomic operation (two ids per job made two, each a
/// cache-line lock, and one contended across threads).
fn next_number() -> u64 {
    const BLOCK: u64 = 1 << 16;
    static BLOCKS: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        /// The next number and the end of this thread's block.
        static NEXT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    }
    NEXT.with(|next| {
        let (mut n, mut end) = next.get();
        if n == end {
            n = BLOCKS.fetch_add(BLOCK, Ordering::Relaxed);
            end = n + BLOCK;
        }
        next.set((n + 1, end));
        n
    })
}

/// SplitMix64's finalizer: a bijection on u64 that scatters a counter's bits.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Default for Id {
    /// The empty id (a placeholder, never a job's). Written in place, not
    /// through `From<&str>`: the runtime takes a job's ids out of it (leaving
    /// this) on every call.
    #[inline]
    fn default() -> Id {
        Id(Repr::Inline {
            len: 0,
            bytes: [0; Id::INLINE],
        })
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Id {
        if s.len() <= Id::INLINE {
            let mut bytes = [0; Id::INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Id(Repr::Inline {
                len: s.len() as u8,
                bytes,
            })
        } else {
            Id(Repr::Shared(Arc::from(s)))
        }
    }
}

impl From<String> for Id {
    fn from(s: String) -> Id {
        Id::from(s.as_str())
    }
}

impl Deref for Id {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Id {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Id {}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Id> for &str {
    fn eq(&self, other: &Id) -> bool {
        *self == other.as_str()
    }
}

impl Hash for Id {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Id) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    fn cmp(&self, other: &Id) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an id (a string)")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Id, E> {
                Ok(Id::from(s))
            }
        }
        d.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::{Id, next_number};

    #[test]
    fn fresh_ids_are_distinct_lowercase_hyphenated_v4_uuids() {
        let a = Id::new_v4();
        let b = Id::new_v4();
        assert_ne!(a, b);
        for id in [a, b] {
            let parsed = uuid::Uuid::parse_str(&id).expect("a UUID");
            assert_eq!(parsed.hyphenated().to_string(), &*id);
            assert_eq!(parsed.get_version_num(), 4);
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        }
    }

    /// Threads take numbers from blocks of their own, past a block's end too,
    /// and no number is handed out twice.
    #[test]
    fn numbers_are_unique_across_threads_and_blocks() {
        let per_thread = 70_000; // more than a block
        let taken: Vec<Vec<u64>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..per_thread).map(|_| next_number()).collect()))
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let all: std::collections::HashSet<u64> = taken.into_iter().flatten().collect();
        assert_eq!(all.len(), 4 * per_thread);
    }

    #[test]
    fn hex_digits_match_the_formatter() {
        for x in [
            0,
            1,
            9,
            10,
            15,
            0xdead_beef,
            u64::MAX,
            0x0123_4567_89ab_cdef,
        ] {
            let mut out = [0u8; 16];
            super::hex16(x, &mut out);
            assert_eq!(std::str::from_utf8(&out).unwrap(), format!("{x:016x}"));
        }
    }

    #[test]
    fn given_ids_read_back_whatever_their_length() {
        assert_eq!(Id::default(), Id::from(""));
        for text in [
            "",
            "job-1",
            &"x".repeat(36),
            &"é".repeat(30),
            &"y".repeat(37),
        ] {
            let id = Id::from(text);
            assert_eq!(id.as_str(), text);
            assert_eq!(id, Id::from(text.to_owned()));
            assert_eq!(serde_json::to_value(&id).unwrap(), text);
            let back: Id = serde_json::from_value(serde_json::json!(text)).unwrap();
            assert_eq!(back, id);
        }
    }
}
