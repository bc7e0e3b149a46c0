//! Times as records, results and envelopes write them: RFC 3339, UTC,
//! milliseconds; and RFC 3339 read back, with any offset and precision.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serializer};

/// The time `ms` milliseconds after the Unix epoch, as stores keep times
/// (a negative count, which no store writes, is the epoch).
#[cfg(any(feature = "redis", feature = "postgres"))]
pub(crate) fn from_millis(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

/// RFC 3339 in UTC with milliseconds, for example `2026-11-22T20:41:29.123Z`.
pub fn format_time(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01 (Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 date-time (`2026-11-23T08:00:00Z`, `2026-11-23T09:00:00.250+01:00`):
/// `T` or a space between date and time, any number of fraction digits (kept to
/// the nanosecond), `Z` or a `±HH:MM` offset. Instants before 1970 are refused.
pub fn parse_time(text: &str) -> Result<SystemTime, String> {
    let bad = || format!("`{text}` is not an RFC 3339 date-time like 2026-11-23T08:00:00Z");
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Result<u32, String> {
        let part = text.get(from..from + len).ok_or_else(bad)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    // A leap second reads as the last second of its minute.
    if d == 0 || d > days_in_month || h > 23 || mi > 59 || s > 60 {
        return Err(bad());
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
        let digits = &text[start..i.min(start + 9)];
        nanos = digits.parse::<u32>().map_err(|_| bad())? * 10u32.pow(9 - digits.len() as u32);
    }
    let offset_secs: i64 = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            let secs = i64::from(oh * 3600 + om * 60);
            if *sign == b'+' { secs } else { -secs }
        }
        _ => return Err(bad()),
    };
    let secs = days_from_civil(i64::from(y), mo, d) * 86_400
        + i64::from(h * 3600 + mi * 60 + s.min(59))
        - offset_secs;
    let secs = u64::try_from(secs).map_err(|_| format!("`{text}` is before 1970"))?;
    Ok(UNIX_EPOCH + Duration::new(secs, nanos))
}

pub(crate) fn serialize_time<S: Serializer>(t: &SystemTime, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&format_time(*t))
}

pub(crate) fn deserialize_time<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
    let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
    parse_time(&text).map_err(serde::de::Error::custom)
}

/// `Option<SystemTime>` as an optional RFC 3339 string (`#[serde(with)]`).
pub(crate) mod optional {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        t: &Option<SystemTime>,
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => serialize_time(t, ser),
            None => ser.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        Option::<std::borrow::Cow<'de, str>>::deserialize(d)?
            .map(|text| parse_time(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_reads_back_what_is_written_and_any_offset() {
        for t in [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::from_millis(1_795_379_689_123),
            UNIX_EPOCH + Duration::from_secs(951_782_400),
        ] {
            assert_eq!(parse_time(&format_time(t)), Ok(t));
        }
        let utc = parse_time("2026-11-23T08:00:00Z").unwrap();
        assert_eq!(parse_time("2026-11-23T09:00:00+01:00"), Ok(utc));
        assert_eq!(parse_time("2026-11-23 03:30:00-04:30"), Ok(utc));
        assert_eq!(
            parse_time("2026-11-23T08:00:00.5Z"),
            Ok(utc + Duration::from_millis(500))
        );
        assert_eq!(
            parse_time("2026-11-23T08:00:00.123456789123Z"),
            Ok(utc + Duration::from_nanos(123_456_789))
        );
        for bad in [
            "2026-11-23",
            "2026-11-23T08:00:00",
            "2026-02-30T08:00:00Z",
            "2026-11-23T24:00:00Z",
            "2026-11-23T08:00:00.Z",
            "2026-11-23T08:00:00+0100",
            "1969-12-31T23:59:59Z",
            "２０２６-11-23T08:00:00Z",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(format_time(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_379_689_123);
        assert_eq!(format_time(t), "2026-11-22T20:34:49.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(format_time(leap), "2000-02-29T00:00:00.000Z");
    }
}
