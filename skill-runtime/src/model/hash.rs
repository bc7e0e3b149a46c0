//! Stable keys: SHA-256 of the JSON Canonicalization Scheme (RFC 8785) form of
//! a value, written `idem_` and 64 hex digits. The same value gives the same key
//! in every process and every run, and the same key as any other RFC 8785
//! implementation of the seed's `stableHash`; the time never enters it.
//!
//! RFC 8785: no whitespace; object keys sorted by their UTF-16 code units;
//! strings escaped only where JSON requires (serde_json's escaping is that
//! set); numbers as ECMAScript writes their IEEE 754 double (`1`, not `1.0`;
//! `1e+21`, `0.000001`). An integer beyond 2^53 is therefore keyed by its
//! nearest double, as every JavaScript implementation keys it.

use std::cmp::Ordering;
use std::io::Write;

use serde_json::{Number, Value};
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

    /// `v` as RFC 8785 canonical JSON.
    pub(crate) fn value(&mut self, v: &Value) {
        let _ = write_canonical(v, self);
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

/// `v` as RFC 8785 canonical JSON into `out`.
pub(crate) fn write_canonical(v: &Value, out: &mut impl Write) -> std::io::Result<()> {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| utf16_order(a, b));
            out.write_all(b"{")?;
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, k)?;
                out.write_all(b":")?;
                write_canonical(&map[k], out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(item, out)?;
            }
            out.write_all(b"]")
        }
        Value::Number(n) => es_number(n, out),
        other => Ok(serde_json::to_writer(out, other)?),
    }
}

/// RFC 8785's key order: by UTF-16 code units (which differs from byte order
/// only between characters past U+FFFF and those from U+E000 to U+FFFF).
fn utf16_order(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// `n` as ECMAScript's `Number.prototype.toString` writes its double (RFC 8785
/// section 3.2.2.3): the shortest digits that read back to the same double,
/// plain from 1e-6 up to 1e21, in exponent form (`1e+21`, `5e-324`) outside.
pub(crate) fn es_number(n: &Number, out: &mut impl Write) -> std::io::Result<()> {
    const EXACT: u64 = 1 << 53;
    // Integers a double holds exactly print as themselves, straight into
    // `out` (the common case: no allocation).
    if let Some(i) = n.as_u64().filter(|i| *i <= EXACT) {
        return write!(out, "{i}");
    }
    if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= EXACT) {
        return write!(out, "{i}");
    }
    let x = n.as_f64().unwrap_or_default();
    if x == 0.0 {
        return out.write_all(b"0"); // and -0
    }
    if x < 0.0 {
        out.write_all(b"-")?;
    }
    // serde_json writes the shortest digits that read back to `x`, breaking
    // ties to even as ECMAScript does (Rust's `{:e}` breaks them upward:
    // 1424953923781206.25 prints `...06.3`, ECMAScript `...06.2`). Its text
    // (`1424953923781206.2`, `1e-6`, `1.7976931348623157e+308`) is read back
    // as digits and the place of the decimal point.
    let shortest = serde_json::to_string(&x.abs()).unwrap_or_default();
    let (mantissa, exp) = shortest.split_once(['e', 'E']).unwrap_or((&shortest, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0');
    let k = digits.len() as i32;
    // The value is 0.DIGITS times 10^n.
    let n = int.len() as i32 - lead as i32
        + exp
            .trim_start_matches('+')
            .parse::<i32>()
            .unwrap_or_default();
    let zeros = |count: i32| "0".repeat(count.max(0) as usize);
    if k <= n && n <= 21 {
        write!(out, "{digits}{}", zeros(n - k))
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(n as usize);
        write!(out, "{whole}.{fraction}")
    } else if -6 < n && n <= 0 {
        write!(out, "0.{}{digits}", zeros(-n))
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let sign = if n > 0 { '+' } else { '-' };
        write!(out, "{first}{point}{rest}e{sign}{}", (n - 1).abs())
    }
}

impl Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Number, Value, json};

    use super::{Hasher, es_number};

    fn number(bits: u64) -> String {
        let mut out = Vec::new();
        es_number(&Number::from_f64(f64::from_bits(bits)).unwrap(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// RFC 8785, appendix B: IEEE 754 doubles and their canonical text.
    #[test]
    fn numbers_are_written_as_rfc_8785_appendix_b() {
        for (bits, text) in [
            (0x0000_0000_0000_0000, "0"),
            (0x8000_0000_0000_0000, "0"),
            (0x0000_0000_0000_0001, "5e-324"),
            (0x8000_0000_0000_0001, "-5e-324"),
            (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
            (0xffef_ffff_ffff_ffff, "-1.7976931348623157e+308"),
            (0x4340_0000_0000_0000, "9007199254740992"),
            (0xc340_0000_0000_0000, "-9007199254740992"),
            (0x4430_0000_0000_0000, "295147905179352830000"),
            (0x44b5_2d02_c7e1_4af5, "9.999999999999997e+22"),
            (0x44b5_2d02_c7e1_4af6, "1e+23"),
            (0x44b5_2d02_c7e1_4af7, "1.0000000000000001e+23"),
            (0x444b_1ae4_d6e2_ef4e, "999999999999999700000"),
            (0x444b_1ae4_d6e2_ef4f, "999999999999999900000"),
            (0x444b_1ae4_d6e2_ef50, "1e+21"),
            (0x3eb0_c6f7_a0b5_ed8c, "9.999999999999997e-7"),
            (0x3eb0_c6f7_a0b5_ed8d, "0.000001"),
            (0x41b3_de43_5555_5553, "333333333.3333332"),
            (0x41b3_de43_5555_5554, "333333333.33333325"),
            (0x41b3_de43_5555_5555, "333333333.3333333"),
            (0x41b3_de43_5555_5556, "333333333.3333334"),
            (0x41b3_de43_5555_5557, "333333333.33333343"),
            (0xbecb_f647_612f_3696, "-0.0000033333333333333333"),
            (0x4314_3ff3_c1cb_0959, "1424953923781206.2"),
        ] {
            assert_eq!(number(bits), text, "{bits:#018x}");
        }
        // Integers: exact up to 2^53, their double beyond.
        let int = |v: Value| {
            let mut out = Vec::new();
            es_number(v.as_number().unwrap(), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(int(json!(1)), "1");
        assert_eq!(int(json!(-42)), "-42");
        assert_eq!(int(json!(1.0)), "1");
        assert_eq!(int(json!(u64::MAX)), "18446744073709552000");
        assert_eq!(int(json!(i64::MIN)), "-9223372036854776000");
    }

    fn text(v: &Value) -> String {
        let mut out = Vec::new();
        super::write_canonical(v, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The key is SHA-256 of exactly the canonical bytes.
    #[test]
    fn the_key_hashes_the_canonical_text() {
        let v = json!({"b": [1.0, "x"], "a": {"\u{e000}": 1, "\u{10000}": 2}});
        let mut whole = Hasher::new();
        whole.raw(text(&v).as_bytes());
        let mut walked = Hasher::new();
        walked.value(&v);
        assert_eq!(walked.key(), whole.key());
        assert!(text(&v).starts_with("{\"a\":{\"\u{10000}\":2,\"\u{e000}\":1}"));
    }

    /// RFC 8785, section 3.2.3: keys by UTF-16 code units, strings with only
    /// JSON's required escapes.
    #[test]
    fn keys_sort_by_utf16_and_strings_escape_minimally() {
        let v = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{80}": "Control",
            "\u{f6}": "Latin Small Letter O With Diaeresis"
        });
        assert_eq!(
            text(&v),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
        assert_eq!(
            text(&json!({"s": "\u{7f}\u{1f}\n\"/\u{2028}", "n": [1.0, 1e21, 1e-7, 0.5]})),
            "{\"n\":[1,1e+21,1e-7,0.5],\"s\":\"\u{7f}\\u001f\\n\\\"/\u{2028}\"}"
        );
    }
}
