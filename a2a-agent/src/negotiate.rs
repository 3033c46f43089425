//! Protocol version negotiation (`A2A-Version` header or query parameter).

use crate::error::{A2aError, ErrorKind};

/// A protocol version the runtime serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// A2A 0.3.
    V03,
    /// A2A 1.0.
    V1,
}

impl Version {
    /// `Major.Minor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V03 => "0.3",
            Version::V1 => "1.0",
        }
    }
}

/// Parse an `A2A-Version` value. Empty = `None` (the caller did not say). Patch versions are ignored.
/// Unsupported versions are a VersionNotSupportedError in the 1.0 form (0.3 has no such error).
pub fn parse_version(value: &str) -> Result<Option<Version>, A2aError> {
    let v = value.trim();
    if v.is_empty() {
        return Ok(None);
    }
    let mut it = v.split('.');
    let major = it.next().unwrap_or("");
    let minor = it.next().unwrap_or("0");
    let ok_num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let patch_ok = it.all(ok_num);
    if ok_num(major) && ok_num(minor) && patch_ok {
        let (ma, mi) = (major.parse::<u32>().ok(), minor.parse::<u32>().ok());
        match (ma, mi) {
            (Some(0), Some(3)) => return Ok(Some(Version::V03)),
            (Some(1), Some(0)) => return Ok(Some(Version::V1)),
            _ => {}
        }
    }
    Err(A2aError::new(
        ErrorKind::VersionNotSupported,
        format!("A2A version {v:?} is not supported; supported: 0.3, 1.0"),
    )
    .with_meta("requestedVersion", v)
    .with_meta("supportedVersions", "0.3,1.0"))
}

/// The version a request asks for: the header wins over the `A2A-Version` query parameter.
pub fn requested_version(
    headers: &http::HeaderMap,
    query: Option<&str>,
) -> Result<Option<Version>, A2aError> {
    if let Some(h) = headers.get("a2a-version") {
        let s = h.to_str().map_err(|_| {
            A2aError::new(ErrorKind::VersionNotSupported, "A2A-Version is not ASCII")
        })?;
        if let Some(v) = parse_version(s)? {
            return Ok(Some(v));
        }
    }
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            if k.eq_ignore_ascii_case("a2a-version") {
                return parse_version(&v);
            }
        }
    }
    Ok(None)
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
}
