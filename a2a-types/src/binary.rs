//! Base64 text that is kept exactly as the peer sent it (hazard H6).
//!
//! ProtoJSON carries `bytes` as base64; 0.3 carries file bytes as base64 too. Decoding and
//! re-encoding can change the text (padding, alphabet), which breaks signatures and byte-exact
//! pass-through, so [`Base64Bytes`] stores the original string and only checks it.
//!
//! Valid text (what ProtoJSON parsers accept): the standard or URL-safe alphabet, with or without
//! `=` padding; whitespace and any other character are invalid. The default (lenient) parse keeps
//! any JSON string, so pass-through never fails and placeholders in documentation examples
//! (`"iVBORw0KGgo..."`) still parse; [`Base64Bytes::decode`] and the strict validator
//! (`format: byte`) report invalid text. [`Base64Bytes::new`] validates. Values built in Rust
//! ([`Base64Bytes::encode`]) use the standard alphabet with padding.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{
    STANDARD, STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A base64 string validated on construction and kept verbatim.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Base64Bytes(String);

/// The text is not base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid base64: {reason}")]
pub struct Base64Error {
    /// Why the text was refused.
    pub reason: String,
}

impl Base64Bytes {
    /// Encodes bytes with the standard alphabet and padding.
    pub fn encode(bytes: impl AsRef<[u8]>) -> Self {
        Self(STANDARD.encode(bytes))
    }

    /// Validates `text` as base64 (standard or URL-safe, padding optional) and keeps it verbatim.
    pub fn new(text: impl Into<String>) -> Result<Self, Base64Error> {
        let text = text.into();
        check(&text)?;
        Ok(Self(text))
    }

    /// Keeps `text` verbatim without validating it (what the lenient parse does).
    pub fn new_unchecked(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// True if the text is valid base64 (see the module docs).
    pub fn is_valid(&self) -> bool {
        check(&self.0).is_ok()
    }

    /// The original base64 text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Consumes the value, returning the original base64 text.
    pub fn into_string(self) -> String {
        self.0
    }

    /// Decodes the bytes.
    pub fn decode(&self) -> Result<Vec<u8>, Base64Error> {
        decode(&self.0)
    }
}

/// Checks that `text` is base64 in one of the accepted forms (see the module docs).
pub fn check(text: &str) -> Result<(), Base64Error> {
    decode(text).map(|_| ())
}

fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let url_safe = text.contains(['-', '_']);
    let r = if url_safe {
        URL_SAFE_PAD_INDIFFERENT.decode(text)
    } else {
        STANDARD_PAD_INDIFFERENT.decode(text)
    };
    r.map_err(|e| Base64Error {
        reason: e.to_string(),
    })
}

impl fmt::Debug for Base64Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() > 64 {
            write!(
                f,
                "Base64Bytes({}... {} chars)",
                &self.0[..48],
                self.0.len()
            )
        } else {
            write!(f, "Base64Bytes({})", self.0)
        }
    }
}

impl fmt::Display for Base64Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Base64Bytes {
    type Error = Base64Error;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl Serialize for Base64Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Base64Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Self)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Base64Bytes {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Base64Bytes".into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::", "Base64Bytes").into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "byte"})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_text_verbatim() {
        for s in ["aGk=", "aGk", "-_8=", "", "AAEC"] {
            assert_eq!(Base64Bytes::new(s).unwrap().as_str(), s);
        }
        assert_eq!(Base64Bytes::new("aGk").unwrap().decode().unwrap(), b"hi");
    }

    #[test]
    fn refuses_garbage() {
        for s in ["a", "aGk= ", "a Gk=", "not base64!", "aG=k", "+-__"] {
            assert!(Base64Bytes::new(s).is_err(), "{s}");
        }
    }

    #[test]
    fn lenient_parse_keeps_invalid_text() {
        let b: Base64Bytes = serde_json::from_str("\"iVBORw0KGgo...\"").unwrap();
        assert!(!b.is_valid());
        assert!(b.decode().is_err());
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"iVBORw0KGgo...\"");
    }

    #[test]
    fn encode_is_standard_padded() {
        assert_eq!(Base64Bytes::encode(b"hi").as_str(), "aGk=");
    }
}
