//! Version negotiation at the HTTP edge (`A2A-Version` header or query parameter), for the agent
//! and the gateway alike. The rule itself is [`a2a_types::version::negotiate`]: none or empty =
//! 0.3 (S1 §3.6.2), the patch ignored, anything the interface does not serve refused.

use a2a_types::version::{ProtocolVersion, UnsupportedVersion};

use crate::error::{A2aError, ErrorKind};

// The version vocabulary is a2a-types' own, shared by every crate.
pub use a2a_types::version::Version;

/// Both versions, 0.3 first.
pub const BOTH: [Version; 2] = Version::ALL;

/// The `A2A-Version` the caller sent: the header if it is non-empty, else the `A2A-Version`
/// query parameter (name case-insensitive) if non-empty, else `None` (which means 0.3).
/// A header that is not visible ASCII counts as sent and unreadable (`Some("")` is never
/// returned; such a header is returned as `Some("?")`, which no interface serves).
pub fn requested(headers: &http::HeaderMap, query: Option<&str>) -> Option<String> {
    if let Some(h) = headers.get(&crate::edge::names::A2A_VERSION) {
        match h.to_str() {
            Ok(s) if !s.trim().is_empty() => return Some(s.trim().to_owned()),
            Ok(_) => {}
            Err(_) => return Some("?".to_owned()),
        }
    }
    let q = query?;
    url::form_urlencoded::parse(q.as_bytes())
        .find(|(k, _)| k.eq_ignore_ascii_case("a2a-version"))
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Negotiates `requested` (see [`requested`]) against the versions an interface `serves`.
pub fn negotiate(
    requested: Option<&str>,
    serves: &[Version],
) -> Result<Version, UnsupportedVersion> {
    let serves: Vec<ProtocolVersion> = serves.iter().map(|v| v.protocol()).collect();
    let v = a2a_types::version::negotiate(requested, &serves)?;
    // `negotiate` only answers with a version of `serves`, all of which are ours.
    Version::from_protocol(v).ok_or(UnsupportedVersion {
        requested: v.to_string(),
        supported: serves,
        legacy_form: v.is_v03(),
    })
}

/// Parse an `A2A-Version` value. Empty = `None` (the caller did not say: 0.3). Patch versions are
/// ignored. Unsupported versions are a VersionNotSupportedError in the 1.0 form (0.3 has no such
/// error).
pub fn parse_version(value: &str) -> Result<Option<Version>, A2aError> {
    let v = value.trim();
    match v {
        "" => return Ok(None),
        // The two spellings nearly every request uses, without the general negotiation.
        "1.0" => return Ok(Some(Version::V1)),
        "0.3" => return Ok(Some(Version::V03)),
        _ => {}
    }
    negotiate(Some(v), &BOTH).map(Some).map_err(|_| {
        A2aError::new(
            ErrorKind::VersionNotSupported,
            format!("A2A version {v:?} is not supported; supported: 0.3, 1.0"),
        )
        .with_meta("requestedVersion", v)
        .with_meta("supportedVersions", "0.3,1.0")
    })
}

/// The version a request asks for, `None` when it does not say (0.3): see [`requested`].
pub fn requested_version(
    headers: &http::HeaderMap,
    query: Option<&str>,
) -> Result<Option<Version>, A2aError> {
    if let Some(h) = headers.get(&crate::edge::names::A2A_VERSION) {
        let Ok(s) = h.to_str() else {
            return Err(A2aError::new(
                ErrorKind::VersionNotSupported,
                "A2A-Version is not ASCII",
            ));
        };
        // The header, when not blank, is what [`requested`] answers (read here without a copy).
        if !s.trim().is_empty() {
            return parse_version(s);
        }
    }
    match requested(headers, query) {
        Some(v) => parse_version(&v),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("1.0").unwrap(), Some(Version::V1));
        assert_eq!(parse_version("1.0.3").unwrap(), Some(Version::V1));
        assert_eq!(parse_version("0.3.0").unwrap(), Some(Version::V03));
        assert_eq!(parse_version("").unwrap(), None);
        assert!(parse_version("2.0").is_err());
        assert!(parse_version("1.1").is_err());
        assert!(parse_version("abc").is_err());
    }

    #[test]
    fn header_then_query() {
        let mut h = http::HeaderMap::new();
        assert_eq!(requested(&h, Some("a2a-version=1.0")), Some("1.0".into()));
        h.insert("a2a-version", http::HeaderValue::from_static(" "));
        assert_eq!(requested(&h, Some("A2A-Version=1.0")), Some("1.0".into()));
        assert_eq!(requested(&h, Some("A2A-Version=")), None);
        h.insert("a2a-version", http::HeaderValue::from_static("0.3"));
        assert_eq!(requested(&h, Some("A2A-Version=1.0")), Some("0.3".into()));
        assert_eq!(
            negotiate(None, &[Version::V1]).unwrap_err().requested,
            "0.3"
        );
        assert_eq!(negotiate(Some("1.0.3"), &BOTH), Ok(Version::V1));
    }
}
