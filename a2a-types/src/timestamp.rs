//! Timestamps as real peers send them, emitted as UTC `Z`.
//!
//! A2A 1.0 carries `google.protobuf.Timestamp` as an RFC 3339 string in UTC (`Z`, S1 §5.6.1).
//! A2A 0.3 peers send free ISO 8601, including naive values such as
//! `2025-04-02T16:59:25.331844` (S0 §9.3). [`Timestamp`] accepts:
//!
//! - RFC 3339 with `Z` (kept verbatim, so a round trip is byte-exact),
//! - RFC 3339 with a numeric offset (`+02:00`, `+0200`, `+02`), normalized to UTC,
//! - naive ISO 8601 without a zone (assumed UTC, hazard H23),
//! - a space or lowercase `t` instead of `T`, lowercase `z`.
//!
//! It always serializes as `YYYY-MM-DDTHH:MM:SS[.fraction]Z`. The number of fraction digits the
//! peer sent is kept; values built in Rust use millisecond precision (the spec's SHOULD).
//! Equality and ordering compare the instant, not the text.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// A point in time, serialized as an RFC 3339 UTC string (`...Z`).
#[derive(Clone)]
pub struct Timestamp {
    utc: OffsetDateTime,
    text: String,
}

/// Why a timestamp string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid timestamp {input:?}: {reason}")]
pub struct TimestampError {
    /// The text that was refused.
    pub input: String,
    /// What was wrong with it.
    pub reason: &'static str,
}

impl Timestamp {
    /// The current time, millisecond precision.
    pub fn now() -> Self {
        // The events of one request are stamped within a millisecond or so: each thread keeps
        // the last value it made and hands out a copy while the millisecond is the same (a
        // copy costs a fraction of the conversion and formatting).
        thread_local! {
            static LAST: std::cell::RefCell<Option<(i128, Timestamp)>> =
                const { std::cell::RefCell::new(None) };
        }
        let now = OffsetDateTime::now_utc();
        let ms = now.unix_timestamp_nanos() / 1_000_000;
        LAST.with(|last| {
            let Ok(mut last) = last.try_borrow_mut() else {
                return Self::from_offset_date_time(now);
            };
            match &*last {
                Some((at, t)) if *at == ms => t.clone(),
                _ => {
                    let t = Self::from_offset_date_time(now);
                    *last = Some((ms, t.clone()));
                    t
                }
            }
        })
    }

    /// Converts from a `time` value (any offset), truncated to millisecond precision.
    pub fn from_offset_date_time(dt: OffsetDateTime) -> Self {
        let utc = dt.to_offset(UtcOffset::UTC);
        let ms = utc.millisecond();
        let utc = utc
            .replace_nanosecond(u32::from(ms) * 1_000_000)
            .unwrap_or(utc);
        let text = format_utc(utc, 3);
        Self { utc, text }
    }

    /// Builds a timestamp from Unix seconds (UTC).
    pub fn from_unix_seconds(secs: i64) -> Result<Self, TimestampError> {
        OffsetDateTime::from_unix_timestamp(secs)
            .map(Self::from_offset_date_time)
            .map_err(|_| TimestampError {
                input: secs.to_string(),
                reason: "out of range",
            })
    }

    /// Parses any of the accepted forms (see the module docs).
    pub fn parse(input: &str) -> Result<Self, TimestampError> {
        parse(input)
    }

    /// The normalized UTC text (`...Z`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The instant as a `time` value in UTC.
    pub fn to_offset_date_time(&self) -> OffsetDateTime {
        self.utc
    }

    /// Unix time in milliseconds.
    pub fn unix_millis(&self) -> i128 {
        self.utc.unix_timestamp_nanos() / 1_000_000
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({})", self.text)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.utc == other.utc
    }
}
impl Eq for Timestamp {}
impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        self.utc.cmp(&other.utc)
    }
}
impl Hash for Timestamp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.utc.unix_timestamp_nanos().hash(state);
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

impl From<OffsetDateTime> for Timestamp {
    fn from(dt: OffsetDateTime) -> Self {
        Self::from_offset_date_time(dt)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 / ISO 8601 timestamp string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Timestamp, E> {
                parse(v).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Timestamp {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::", "Timestamp").into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "date-time"})
    }
}

fn err(input: &str, reason: &'static str) -> TimestampError {
    TimestampError {
        input: input.to_owned(),
        reason,
    }
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let s = b.get(at..at + n)?;
    let mut v = 0u32;
    for c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some(v)
}

fn parse(input: &str) -> Result<Timestamp, TimestampError> {
    let b = input.as_bytes();
    let year = digits(b, 0, 4).ok_or_else(|| err(input, "expected YYYY"))?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return Err(err(input, "expected YYYY-MM-DD"));
    }
    let month = digits(b, 5, 2).ok_or_else(|| err(input, "expected month"))?;
    let day = digits(b, 8, 2).ok_or_else(|| err(input, "expected day"))?;
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return Err(err(input, "expected 'T' between date and time"));
    }
    let hour = digits(b, 11, 2).ok_or_else(|| err(input, "expected hour"))?;
    if b.get(13) != Some(&b':') {
        return Err(err(input, "expected HH:MM"));
    }
    let minute = digits(b, 14, 2).ok_or_else(|| err(input, "expected minute"))?;
    let mut i = 16;
    let mut second = 0;
    if b.get(i) == Some(&b':') {
        second = digits(b, 17, 2).ok_or_else(|| err(input, "expected second"))?;
        i = 19;
    }
    let mut nanos = 0u32;
    let mut frac_digits = 0usize;
    if matches!(b.get(i), Some(b'.' | b',')) {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(b[i] - b'0');
            }
            i += 1;
        }
        frac_digits = i - start;
        if frac_digits == 0 {
            return Err(err(input, "empty fraction"));
        }
        for _ in frac_digits.min(9)..9 {
            nanos *= 10;
        }
    }
    let rest = &input[i..];
    let (offset, canonical_zone) = match rest {
        "Z" => (UtcOffset::UTC, true),
        "z" | "" => (UtcOffset::UTC, false),
        _ => {
            let rb = rest.as_bytes();
            let sign: i32 = match rb[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(err(input, "unexpected trailing text")),
            };
            let oh = digits(rb, 1, 2).ok_or_else(|| err(input, "bad offset"))?;
            let om = match rb.len() {
                3 => 0,
                5 => digits(rb, 3, 2).ok_or_else(|| err(input, "bad offset"))?,
                6 if rb[3] == b':' => digits(rb, 4, 2).ok_or_else(|| err(input, "bad offset"))?,
                _ => return Err(err(input, "bad offset")),
            };
            let secs = sign * (oh as i32 * 3600 + om as i32 * 60);
            (
                UtcOffset::from_whole_seconds(secs)
                    .map_err(|_| err(input, "offset out of range"))?,
                false,
            )
        }
    };
    let month = u8::try_from(month)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .ok_or_else(|| err(input, "month out of range"))?;
    let date = Date::from_calendar_date(year as i32, month, day as u8)
        .map_err(|_| err(input, "day out of range"))?;
    // A leap second (60) is clamped to 59.999999999, as protobuf does not represent it.
    let (second, nanos) = if second == 60 {
        (59, 999_999_999)
    } else {
        (second, nanos)
    };
    let t = Time::from_hms_nano(hour as u8, minute as u8, second as u8, nanos)
        .map_err(|_| err(input, "time out of range"))?;
    let utc = PrimitiveDateTime::new(date, t)
        .assume_offset(offset)
        .to_offset(UtcOffset::UTC);
    let canonical = canonical_zone && b[10] == b'T' && i >= 19;
    let text = if canonical {
        input.to_owned()
    } else {
        format_utc(utc, frac_digits.min(9))
    };
    Ok(Timestamp { utc, text })
}

fn format_utc(utc: OffsetDateTime, frac_digits: usize) -> String {
    let year = utc.year();
    if !(0..=9999).contains(&year) {
        return format_utc_slow(utc, frac_digits);
    }
    // Digits written by hand: `format!` was a visible share of every task event's cost.
    fn push(s: &mut String, v: u32, width: u32) {
        for i in (0..width).rev() {
            s.push(char::from(b'0' + (v / 10u32.pow(i) % 10) as u8));
        }
    }
    let mut s = String::with_capacity(24 + frac_digits.min(9));
    push(&mut s, year as u32, 4);
    s.push('-');
    push(&mut s, u32::from(u8::from(utc.month())), 2);
    s.push('-');
    push(&mut s, u32::from(utc.day()), 2);
    s.push('T');
    push(&mut s, u32::from(utc.hour()), 2);
    s.push(':');
    push(&mut s, u32::from(utc.minute()), 2);
    s.push(':');
    push(&mut s, u32::from(utc.second()), 2);
    let digits = frac_digits.min(9);
    if digits > 0 {
        s.push('.');
        push(
            &mut s,
            utc.nanosecond() / 10u32.pow(9 - digits as u32),
            digits as u32,
        );
    }
    s.push('Z');
    s
}

/// [`format_utc`] for years outside 0000-9999.
fn format_utc_slow(utc: OffsetDateTime, frac_digits: usize) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second()
    );
    if frac_digits > 0 {
        let n = format!("{:09}", utc.nanosecond());
        s.push('.');
        s.push_str(&n[..frac_digits]);
    }
    s.push('Z');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_the_current_millisecond_every_time() {
        for _ in 0..1000 {
            let before = OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
            let t = Timestamp::now();
            let after = OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
            let ms = t.utc.unix_timestamp_nanos() / 1_000_000;
            assert!(before <= ms && ms <= after, "{before} {ms} {after}");
            assert_eq!(t.text, format_utc(t.utc, 3));
        }
    }

    #[test]
    fn hand_written_digits_match_the_formatter() {
        for (secs, nanos) in [
            (0i64, 0u32),
            (1_764_000_000, 7_000_000),
            (1_764_000_059, 999_999_999),
            (253_402_300_799, 123_456_789),
            (-62_135_596_800, 1),
        ] {
            let t = OffsetDateTime::from_unix_timestamp(secs).unwrap()
                + time::Duration::nanoseconds(i64::from(nanos));
            for digits in 0..=9 {
                assert_eq!(
                    format_utc(t, digits),
                    format_utc_slow(t, digits),
                    "{t} {digits}"
                );
            }
        }
    }

    #[test]
    fn z_form_is_kept_verbatim() {
        for s in [
            "2024-03-15T10:15:00Z",
            "2025-04-02T16:59:25.331Z",
            "2025-04-02T16:59:25.000Z",
        ] {
            assert_eq!(Timestamp::parse(s).unwrap().as_str(), s);
        }
    }

    #[test]
    fn naive_is_utc() {
        let t = Timestamp::parse("2025-04-02T16:59:25.331844").unwrap();
        assert_eq!(t.as_str(), "2025-04-02T16:59:25.331844Z");
    }

    #[test]
    fn offsets_are_normalized() {
        let t = Timestamp::parse("2025-04-02T18:59:25+02:00").unwrap();
        assert_eq!(t.as_str(), "2025-04-02T16:59:25Z");
        let t = Timestamp::parse("2025-04-02 10:00:00.5-0130").unwrap();
        assert_eq!(t.as_str(), "2025-04-02T11:30:00.5Z");
        assert_eq!(
            Timestamp::parse("2025-04-02T16:59:25.5z").unwrap(),
            Timestamp::parse("2025-04-02T16:59:25.500Z").unwrap()
        );
    }

    #[test]
    fn garbage_is_refused() {
        for s in [
            "",
            "yesterday",
            "2025-13-01T00:00:00Z",
            "2025-02-30T00:00:00Z",
            "2025-01-01T25:00:00Z",
            "2025-01-01T00:00:00ZZ",
            "2025-01-01T00:00:00.Z",
            "2025-01-01",
        ] {
            assert!(Timestamp::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn built_values_have_millis() {
        let t = Timestamp::from_unix_seconds(0).unwrap();
        assert_eq!(t.as_str(), "1970-01-01T00:00:00.000Z");
        assert_eq!(Timestamp::now().as_str().len(), 24);
    }
}
