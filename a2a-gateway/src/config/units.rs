//! The unit settings of the gateway older than the shared duration ([`a2a_agent::settings::Dur`]):
//! an age in days to seconds ([`Age`]) and a byte size ([`ByteSize`]).

use serde::{Deserialize, Serialize};

/// An age setting: a number and a unit, `d`, `h`, `m` or `s` (`30d`); `0` alone is zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Age(pub std::time::Duration);

impl std::str::FromStr for Age {
    type Err = String;

    fn from_str(s: &str) -> Result<Age, String> {
        let t = s.trim();
        let bad = || format!("invalid age {s:?}: a number and d, h, m or s (30d, 12h), or 0");
        if t == "0" {
            return Ok(Age(std::time::Duration::ZERO));
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: u64 = t[..split].parse().map_err(|_| bad())?;
        let unit = match t[split..].trim() {
            "d" => 24 * 3600,
            "h" => 3600,
            "m" => 60,
            "s" => 1,
            _ => return Err(bad()),
        };
        n.checked_mul(unit)
            .map(|secs| Age(std::time::Duration::from_secs(secs)))
            .ok_or_else(bad)
    }
}

impl std::fmt::Display for Age {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.0.as_secs();
        match secs {
            0 => write!(f, "0"),
            s if s.is_multiple_of(24 * 3600) => write!(f, "{}d", s / (24 * 3600)),
            s if s.is_multiple_of(3600) => write!(f, "{}h", s / 3600),
            s if s.is_multiple_of(60) => write!(f, "{}m", s / 60),
            s => write!(f, "{s}s"),
        }
    }
}

/// A size setting: bytes, or a number and a unit, `KB`/`MB`/`GB`/`TB` (powers of 1000) or
/// `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024): `1GiB`, `500MB`, `1048576`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl std::str::FromStr for ByteSize {
    type Err = String;

    fn from_str(s: &str) -> Result<ByteSize, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "invalid size {s:?}: bytes, or a number and KB, MB, GB, TB, KiB, MiB, GiB or TiB"
            )
        };
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let n: u64 = t[..split].parse().map_err(|_| bad())?;
        let unit: u64 = match t[split..].trim() {
            "" | "B" => 1,
            "KB" => 1000,
            "MB" => 1000u64.pow(2),
            "GB" => 1000u64.pow(3),
            "TB" => 1000u64.pow(4),
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "TiB" => 1 << 40,
            _ => return Err(bad()),
        };
        n.checked_mul(unit).map(ByteSize).ok_or_else(bad)
    }
}

impl std::fmt::Display for ByteSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (unit, size) in [
            ("TiB", 1u64 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ] {
            if self.0 >= size && self.0.is_multiple_of(size) {
                return write!(f, "{}{unit}", self.0 / size);
            }
        }
        write!(f, "{}", self.0)
    }
}

/// Both unit settings read from TOML as a string (`"30d"`, `"1GiB"`) or a plain number
/// (seconds, bytes), and are written as strings.
macro_rules! unit_serde {
    ($t:ty, $from_number:expr) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Raw {
                    Number(u64),
                    Text(String),
                }
                match Raw::deserialize(d)? {
                    Raw::Number(n) => Ok($from_number(n)),
                    Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
                }
            }
        }
    };
}

unit_serde!(Age, |n| Age(std::time::Duration::from_secs(n)));
unit_serde!(ByteSize, ByteSize);
