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

mod civil;
use civil::{MAX_SECS, MIN_SECS, NANOS, Parts};

/// A point in time, serialized as an RFC 3339 UTC string (`...Z`).
///
/// The accepted range is the years -9999 to 9999 in UTC (an input outside it is refused).
#[derive(Clone)]
pub struct Timestamp {
    /// Nanoseconds since the Unix epoch.
    nanos: i128,
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

/// The current time in nanoseconds since the Unix epoch.
fn now_nanos() -> i128 {
    let now = std::time::SystemTime::now();
    match now.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
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
        let ms = now_nanos().div_euclid(1_000_000);
        LAST.with(|last| {
            let Ok(mut last) = last.try_borrow_mut() else {
                return Self::from_millis(ms);
            };
            match &*last {
                Some((at, t)) if *at == ms => t.clone(),
                _ => {
                    let t = Self::from_millis(ms);
                    *last = Some((ms, t.clone()));
                    t
                }
            }
        })
    }

    /// A timestamp at `ms` milliseconds since the epoch, in range (the callers check).
    fn from_millis(ms: i128) -> Self {
        let nanos = ms * 1_000_000;
        Self {
            nanos,
            text: format_utc(nanos, 3),
        }
    }

    /// Builds a timestamp from Unix seconds (UTC).
    pub fn from_unix_seconds(secs: i64) -> Result<Self, TimestampError> {
        if !(MIN_SECS..=MAX_SECS).contains(&secs) {
            return Err(TimestampError {
                input: secs.to_string(),
                reason: "out of range",
            });
        }
        Ok(Self::from_millis(i128::from(secs) * 1000))
    }

    /// Builds a timestamp from Unix milliseconds (UTC).
    pub fn from_unix_millis(ms: i64) -> Result<Self, TimestampError> {
        let ms = i128::from(ms);
        if !(i128::from(MIN_SECS) * 1000..=i128::from(MAX_SECS) * 1000 + 999).contains(&ms) {
            return Err(TimestampError {
                input: ms.to_string(),
                reason: "out of range",
            });
        }
        Ok(Self::from_millis(ms))
    }

    /// Parses any of the accepted forms (see the module docs).
    pub fn parse(input: &str) -> Result<Self, TimestampError> {
        parse(input)
    }

    /// The normalized UTC text (`...Z`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Unix time in milliseconds.
    pub fn unix_millis(&self) -> i128 {
        self.nanos.div_euclid(1_000_000)
    }

    /// Unix time in nanoseconds.
    pub fn unix_nanos(&self) -> i128 {
        self.nanos
    }
}

/// Conversions from and to the `time` crate (feature `time`).
impl Timestamp {
    /// Converts from a `time` value (any offset), truncated to millisecond precision.
    #[cfg(feature = "time")]
    pub fn from_offset_date_time(dt: time::OffsetDateTime) -> Self {
        // `time`'s range is the years -9999 to 9999 (UTC), the same as this type's.
        Self::from_millis(dt.unix_timestamp_nanos().div_euclid(1_000_000))
    }

    /// The instant as a `time` value in UTC.
    #[cfg(feature = "time")]
    pub fn to_offset_date_time(&self) -> time::OffsetDateTime {
        // In range by construction; the epoch if `time` ever disagrees.
        time::OffsetDateTime::from_unix_timestamp_nanos(self.nanos)
            .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
    }
}

#[cfg(feature = "time")]
impl From<time::OffsetDateTime> for Timestamp {
    fn from(dt: time::OffsetDateTime) -> Self {
        Self::from_offset_date_time(dt)
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
        self.nanos == other.nanos
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
        self.nanos.cmp(&other.nanos)
    }
}
impl Hash for Timestamp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.nanos.hash(state);
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
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

/// The largest offset accepted, in seconds (25:59:59, as the `time` crate's `UtcOffset`).
const MAX_OFFSET: i64 = 25 * 3600 + 59 * 60 + 59;

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
        "Z" => (0i64, true),
        "z" | "" => (0, false),
        _ => {
            let rb = rest.as_bytes();
            let sign: i64 = match rb[0] {
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
            let secs = i64::from(oh) * 3600 + i64::from(om) * 60;
            if secs > MAX_OFFSET {
                return Err(err(input, "offset out of range"));
            }
            (sign * secs, false)
        }
    };
    let year = i64::from(year);
    if !(1..=12).contains(&month) {
        return Err(err(input, "month out of range"));
    }
    if !(1..=civil::days_in_month(year, month)).contains(&day) {
        return Err(err(input, "day out of range"));
    }
    // A leap second (60) is clamped to 59.999999999, as protobuf does not represent it.
    let (second, nanos) = if second == 60 {
        (59, 999_999_999)
    } else {
        (second, nanos)
    };
    if hour > 23 || minute > 59 || second > 59 {
        return Err(err(input, "time out of range"));
    }
    let local = civil::days_from_civil(year, month, day) * 86_400
        + i64::from(hour * 3600 + minute * 60 + second);
    let secs = local - offset;
    if !(MIN_SECS..=MAX_SECS).contains(&secs) {
        return Err(err(input, "out of range"));
    }
    let utc = i128::from(secs) * NANOS + i128::from(nanos);
    let canonical = canonical_zone && b[10] == b'T' && i >= 19;
    let text = if canonical {
        input.to_owned()
    } else {
        format_utc(utc, frac_digits.min(9))
    };
    Ok(Timestamp { nanos: utc, text })
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` of `nanos` since the epoch, with `frac_digits` (at most 9)
/// digits of the fraction.
fn format_utc(nanos: i128, frac_digits: usize) -> String {
    let p = Parts::of(nanos);
    if !(0..=9999).contains(&p.year) {
        return format_utc_slow(p, frac_digits);
    }
    // Digits written by hand: `format!` was a visible share of every task event's cost.
    fn push(s: &mut String, v: u32, width: u32) {
        for i in (0..width).rev() {
            s.push(char::from(b'0' + (v / 10u32.pow(i) % 10) as u8));
        }
    }
    let mut s = String::with_capacity(24 + frac_digits.min(9));
    push(&mut s, p.year as u32, 4);
    s.push('-');
    push(&mut s, p.month, 2);
    s.push('-');
    push(&mut s, p.day, 2);
    s.push('T');
    push(&mut s, p.hour, 2);
    s.push(':');
    push(&mut s, p.minute, 2);
    s.push(':');
    push(&mut s, p.second, 2);
    let digits = frac_digits.min(9);
    if digits > 0 {
        s.push('.');
        push(
            &mut s,
            p.nanosecond / 10u32.pow(9 - digits as u32),
            digits as u32,
        );
    }
    s.push('Z');
    s
}

/// [`format_utc`] with `format!` (years outside 0000-9999, and the check of the fast path).
fn format_utc_slow(p: Parts, frac_digits: usize) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        p.year, p.month, p.day, p.hour, p.minute, p.second
    );
    if frac_digits > 0 {
        let n = format!("{:09}", p.nanosecond);
        s.push('.');
        s.push_str(&n[..frac_digits.min(9)]);
    }
    s.push('Z');
    s
}

#[cfg(test)]
mod tests;
