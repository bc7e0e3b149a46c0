//! W3C trace context: the `traceparent` that carries a trace across
//! processes (an MCP client's `_meta`, an HTTP header, a job envelope on a
//! queue). Its trace id is the seed's `traceId` written as a UUID: both are
//! 16 bytes, so the two name one trace, one to one.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::id::Id;

/// A `traceparent` of version `00`: the trace, the span that is the parent
/// of what comes next, and the flags (bit 0: sampled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id: never all zeros.
    pub trace_id: [u8; 16],
    /// The parent span's id: never all zeros.
    pub span_id: [u8; 8],
    /// The trace flags.
    pub flags: u8,
}

/// Text that is not a `traceparent`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a W3C traceparent (`00-` then 32 and 16 lowercase hexadecimal digits and the flags, like `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`)"
)]
pub struct NotATraceParent(pub String);

impl TraceParent {
    /// `text` as a `traceparent`: version `00` exactly as W3C writes it
    /// (a later version is read by its first four fields, as W3C asks).
    pub fn parse(text: &str) -> Result<TraceParent, NotATraceParent> {
        let bad = || NotATraceParent(text.chars().take(80).collect());
        let mut parts = text.split('-');
        let (Some(version), Some(trace), Some(span), Some(flags)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let rest = parts.next();
        if version.len() != 2 || version == "ff" || (version == "00" && rest.is_some()) {
            return Err(bad());
        }
        let trace_id: [u8; 16] = hex(trace).ok_or_else(bad)?;
        let span_id: [u8; 8] = hex(span).ok_or_else(bad)?;
        let [flags]: [u8; 1] = hex(flags).ok_or_else(bad)?;
        let _: [u8; 1] = hex(version).ok_or_else(bad)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return Err(bad());
        }
        Ok(TraceParent {
            trace_id,
            span_id,
            flags,
        })
    }

    /// The trace id as the seed's `traceId`: a UUID's text.
    pub fn trace_id(&self) -> Id {
        Id::from(
            uuid::Uuid::from_bytes(self.trace_id)
                .hyphenated()
                .to_string()
                .as_str(),
        )
    }

    /// The 16 bytes of `trace_id`, a UUID's text; `None` for an id that is
    /// not one, or is all zeros (no W3C trace has that id).
    pub fn trace_bytes(trace_id: &Id) -> Option<[u8; 16]> {
        let bytes = uuid::Uuid::parse_str(trace_id.as_str()).ok()?.into_bytes();
        (bytes != [0; 16]).then_some(bytes)
    }

    /// Whether the trace is sampled.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

/// Exactly `N` bytes from `2 N` lowercase hexadecimal digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let b = text.as_bytes();
    if b.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = digit(b[2 * i])? << 4 | digit(b[2 * i + 1])?;
    }
    Some(out)
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.span_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", self.flags)
    }
}

impl Serialize for TraceParent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TraceParent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceParent, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        TraceParent::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W3C: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_reads_and_writes_back_and_maps_to_a_uuid() {
        let tp = TraceParent::parse(W3C).unwrap();
        assert_eq!(tp.to_string(), W3C);
        assert!(tp.sampled());
        assert_eq!(
            tp.trace_id().as_str(),
            "4bf92f35-77b3-4da6-a3ce-929d0e0e4736"
        );
        assert_eq!(TraceParent::trace_bytes(&tp.trace_id()), Some(tp.trace_id));
        let json = serde_json::to_string(&tp).unwrap();
        assert_eq!(serde_json::from_str::<TraceParent>(&json).unwrap(), tp);
    }

    #[test]
    fn what_is_not_a_traceparent_is_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
        ] {
            assert!(TraceParent::parse(bad).is_err(), "{bad:?}");
        }
        // A later version: its first four fields.
        assert!(TraceParent::parse(&format!("01{}-more", &W3C[2..])).is_ok());
    }
}
