//! Durations written with units ([`Dur`]), the one form of every duration setting.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A duration setting, written with a unit: `500ms`, `10s`, `5m`, `12h`, `30d`; `0` alone is
/// zero. In TOML a string (`"10s"`) or the integer `0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub Duration);

impl Dur {
    /// Zero.
    pub const ZERO: Dur = Dur(Duration::ZERO);

    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(Duration::from_millis(ms))
    }

    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Dur {
        Dur(Duration::from_secs(s))
    }

    /// The duration.
    pub const fn get(self) -> Duration {
        self.0
    }
}

impl From<Duration> for Dur {
    fn from(d: Duration) -> Dur {
        Dur(d)
    }
}

impl From<Dur> for Duration {
    fn from(d: Dur) -> Duration {
        d.0
    }
}

const UNITS: &[(&str, u64)] = &[
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1000),
    ("ms", 1),
];

impl FromStr for Dur {
    type Err = String;

    fn from_str(s: &str) -> Result<Dur, String> {
        let t = s.trim();
        let bad = || {
            format!("invalid duration {s:?}: a number and ms, s, m, h or d (500ms, 10s, 5m), or 0")
        };
        if t == "0" {
            return Ok(Dur::ZERO);
        }
        let split = t
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(|| format!("invalid duration {s:?}: give a unit ({t}s, {t}ms), or 0"))?;
        let n: u64 = t[..split].parse().map_err(|_| bad())?;
        let unit = UNITS
            .iter()
            .find(|(u, _)| *u == t[split..].trim())
            .ok_or_else(bad)?
            .1;
        n.checked_mul(unit).map(Dur::from_millis).ok_or_else(bad)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if ms == 0 {
            return write!(f, "0");
        }
        for (unit, size) in UNITS {
            if ms.is_multiple_of(u128::from(*size)) {
                return write!(f, "{}{unit}", ms / u128::from(*size));
            }
        }
        write!(f, "{ms}ms")
    }
}

impl serde::Serialize for Dur {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Dur {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(0) => Ok(Dur::ZERO),
            Raw::Number(n) => Err(serde::de::Error::custom(format!(
                "a duration needs a unit: \"{n}s\" or \"{n}ms\""
            ))),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// `#[serde(with)]` for a `u64` of whole seconds written as a [`Dur`] (`"30s"`, `"5m"`).
pub mod secs {
    use super::Dur;
    use serde::{Deserialize, Serialize};

    /// Writes the seconds as a duration.
    pub fn serialize<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        Dur::from_secs(*v).serialize(s)
    }

    /// Reads a duration of whole seconds.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let v = Dur::deserialize(d)?;
        super::whole_secs(v).map_err(serde::de::Error::custom)
    }
}

/// `#[serde(with)]` for a `u64` of milliseconds written as a [`Dur`] (`"10s"`, `"500ms"`).
pub mod millis {
    use super::Dur;
    use serde::{Deserialize, Serialize};

    /// Writes the milliseconds as a duration.
    pub fn serialize<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        Dur::from_millis(*v).serialize(s)
    }

    /// Reads a duration as milliseconds.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let v = Dur::deserialize(d)?;
        u64::try_from(v.0.as_millis()).map_err(serde::de::Error::custom)
    }
}

/// The whole seconds of `d`, or an error for a fraction (`1500ms` where seconds are counted).
pub fn whole_secs(d: Dur) -> Result<u64, String> {
    if d.0.subsec_nanos() == 0 {
        Ok(d.0.as_secs())
    } else {
        Err(format!("{d} is not a whole number of seconds"))
    }
}
