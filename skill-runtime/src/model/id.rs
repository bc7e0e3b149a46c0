//! Job and trace ids: UUID v4 text, or whatever id a caller brings.
//!
//! Two ids are made for every job and copied into its context, result and record,
//! so an id is a value, not a pointer: up to [`Id::INLINE`] bytes (a UUID's 36)
//! live inside the `Id` itself. Making one costs no allocation, copying one no
//! reference count, and a record kept in memory holds no extra heap blocks for
//! them. Longer ids a caller brings are shared behind an `Arc`.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

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

    /// A fresh UUID v4 (RFC 9562): 122 bits from a cryptographically secure
    /// generator, version and variant set.
    ///
    /// The bits come from `uuid`'s `fast-rng`: `rand`'s thread-local ChaCha12
    /// generator, seeded from the OS and reseeded as it goes, so an id costs no
    /// system call (one `getrandom` per id was a fifth of the cost of a small
    /// invocation) and is unpredictable, as RFC 9562 asks of ids that may be
    /// seen outside the process.
    ///
    /// Written as `uuid`'s `hyphenated().encode_lower` writes it; on x86-64,
    /// all 32 digits at once (`hex32`): two ids are made for every job, and
    /// the digit-by-digit encoding was more than a third of their cost.
    pub fn new_v4() -> Id {
        Id::of_uuid(uuid::Uuid::new_v4())
    }

    /// Two random ids ([`Id::new_v4`]), drawn from the generator at once (a
    /// job's id and its trace's): one access to the thread's generator, not
    /// two.
    pub(crate) fn new_v4_pair() -> (Id, Id) {
        // As `uuid`'s own `new_v4` draws its bytes (a `u128`; an array of
        // bytes would be drawn a word per byte).
        let [a, b]: [u128; 2] = rand::random();
        let id = |random: u128| {
            Id::of_uuid(uuid::Builder::from_random_bytes(random.to_le_bytes()).into_uuid())
        };
        (id(a), id(b))
    }

    /// The same id for the same `text`, and for no other in practice: a
    /// UUID version 8 (RFC 9562) from the first 16 bytes of `text`'s SHA-256.
    /// For a job every worker or person must name alike (a schedule's tick,
    /// the one sending again of a dead letter), so queueing it twice queues
    /// it once.
    #[cfg(any(feature = "redis", feature = "postgres"))]
    pub(crate) fn derived(text: &str) -> Id {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(text.as_bytes());
        let mut b = [0u8; 16];
        b.copy_from_slice(&digest[..16]);
        Id::of_uuid(uuid::Builder::from_custom_bytes(b).into_uuid())
    }

    fn of_uuid(uuid: uuid::Uuid) -> Id {
        let mut bytes = [b'-'; Id::INLINE];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            // SAFETY: SSE2 is enabled for the build (the `cfg`).
            let digits = unsafe { hex32(*uuid.as_bytes()) };
            // 8-4-4-4-12 digits.
            bytes[0..8].copy_from_slice(&digits[0..8]);
            bytes[9..13].copy_from_slice(&digits[8..12]);
            bytes[14..18].copy_from_slice(&digits[12..16]);
            bytes[19..23].copy_from_slice(&digits[16..20]);
            bytes[24..36].copy_from_slice(&digits[20..32]);
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        uuid.hyphenated().encode_lower(&mut bytes);
        Id(Repr::Inline {
            len: Id::INLINE as u8,
            bytes,
        })
    }

    /// `text` as an id when it is a UUID written the way the seed's envelope
    /// schema asks (`z.string().uuid()`: 8-4-4-4-12 hexadecimal digits, any
    /// version); kept as written.
    pub fn uuid(text: &str) -> Result<Id, NotAUuid> {
        let hyphens = [8, 13, 18, 23];
        let shaped = text.len() == Id::INLINE
            && text.bytes().enumerate().all(|(i, b)| {
                if hyphens.contains(&i) {
                    b == b'-'
                } else {
                    b.is_ascii_hexdigit()
                }
            });
        if shaped {
            Ok(Id::from(text))
        } else {
            Err(NotAUuid(text.chars().take(64).collect()))
        }
    }

    /// The id as text.
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

/// Sixteen bytes as 32 lowercase hexadecimal digits, high nibble first, in
/// a few SSE2 operations (part of every x86-64 processor: built for one
/// without, the crate uses `uuid`'s encoder).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn hex32(bytes: [u8; 16]) -> [u8; 32] {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_set1_epi8, _mm_srli_epi16,
        _mm_unpackhi_epi8, _mm_unpacklo_epi8,
    };
    // SAFETY: `[u8; 16]` and `__m128i` have the same size, and any bits are
    // a valid value of either.
    let v: __m128i = unsafe { std::mem::transmute(bytes) };
    let low = _mm_set1_epi8(0x0F);
    let high = _mm_and_si128(_mm_srli_epi16(v, 4), low);
    let low = _mm_and_si128(v, low);
    // Each byte's high nibble, then its low nibble.
    let nibbles = [_mm_unpacklo_epi8(high, low), _mm_unpackhi_epi8(high, low)];
    // 0-9 to '0'-'9', 10-15 to 'a'-'f' (39 further on than '9' + 1).
    let digits = nibbles.map(|n| {
        let letters = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
        _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), letters)
    });
    // SAFETY: as above, two vectors of 16 bytes as 32 bytes.
    unsafe { std::mem::transmute(digits) }
}

/// An id that is not a UUID where one is required.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a UUID (8-4-4-4-12 hexadecimal digits, like `6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10`)"
)]
pub struct NotAUuid(pub String);

/// Deserialize an id that must be a UUID (the envelope's `jobId`, `traceId`,
/// `parentJobId`).
pub(crate) fn deserialize_uuid<'de, D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
    let text = std::borrow::Cow::<str>::deserialize(d)?;
    Id::uuid(&text).map_err(serde::de::Error::custom)
}

/// [`deserialize_uuid`], for an optional id.
pub(crate) fn deserialize_optional_uuid<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Id>, D::Error> {
    let text = Option::<std::borrow::Cow<str>>::deserialize(d)?;
    text.map(|t| Id::uuid(&t).map_err(serde::de::Error::custom))
        .transpose()
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
    use super::Id;

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

    /// The digits are `uuid`'s, for every byte in every position.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[test]
    fn hex_digits_are_uuids_own() {
        for n in 0..=255u8 {
            let bytes: [u8; 16] = std::array::from_fn(|i| n.wrapping_add(i as u8 * 17));
            // SAFETY: SSE2 is enabled for the build (the `cfg`).
            let ours = unsafe { super::hex32(bytes) };
            let theirs: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(std::str::from_utf8(&ours).unwrap(), theirs);
        }
    }

    /// Ids made on many threads at once never repeat.
    #[test]
    fn ids_are_unique_across_threads() {
        let per_thread = 20_000;
        let taken: Vec<Vec<Id>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..per_thread).map(|_| Id::new_v4()).collect()))
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let all: std::collections::HashSet<String> = taken
            .into_iter()
            .flatten()
            .map(|id| id.to_string())
            .collect();
        assert_eq!(all.len(), 4 * per_thread);
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
