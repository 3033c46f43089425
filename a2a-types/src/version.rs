//! Version and header vocabulary: `A2A-Version`, extension headers, media types and protocol
//! binding names (S1 §3.2.6, §3.6, §5.8, §11.1; digest §6).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Header (and query parameter) carrying the protocol version: `A2A-Version`.
pub const A2A_VERSION_HEADER: &str = "A2A-Version";
/// Header carrying the requested/activated extension URIs (1.0): `A2A-Extensions`.
pub const A2A_EXTENSIONS_HEADER: &str = "A2A-Extensions";
/// Legacy 0.3 extension header: `X-A2A-Extensions` (send and accept both, hazard H37).
pub const X_A2A_EXTENSIONS_HEADER: &str = "X-A2A-Extensions";
/// Header some peers use to echo a push config token (0.3 convention, a2a-python 1.0).
pub const X_A2A_NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";
/// gRPC metadata key for the version.
pub const GRPC_VERSION_KEY: &str = "a2a-version";
/// gRPC metadata key for extensions.
pub const GRPC_EXTENSIONS_KEY: &str = "a2a-extensions";

/// `application/json`: JSON-RPC (both versions) and 0.3 REST.
pub const APPLICATION_JSON: &str = "application/json";
/// `application/a2a+json`: 1.0 HTTP+JSON and push notifications (S1 §11.1, §14.1.1).
pub const APPLICATION_A2A_JSON: &str = "application/a2a+json";
/// `text/event-stream`: SSE streams.
pub const TEXT_EVENT_STREAM: &str = "text/event-stream";
/// Well-known path of the public agent card.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The media type of a `Content-Type`/`Accept` item without parameters, lowercased.
pub fn media_type_essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// True if `content_type` is `application/json` or `application/a2a+json` (any parameters).
pub fn is_json_media_type(content_type: &str) -> bool {
    matches!(
        media_type_essence(content_type).as_str(),
        APPLICATION_JSON | APPLICATION_A2A_JSON
    )
}

/// True if `content_type` is `text/event-stream` (any parameters).
pub fn is_event_stream(content_type: &str) -> bool {
    media_type_essence(content_type) == TEXT_EVENT_STREAM
}

/// A protocol version, `Major.Minor` (the patch is ignored, S1 §3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

/// `A2A-Version` text that is not `Major.Minor[.Patch]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid protocol version {0:?}: expected Major.Minor")]
pub struct VersionParseError(pub String);

impl ProtocolVersion {
    /// A2A 0.3.
    pub const V0_3: ProtocolVersion = ProtocolVersion { major: 0, minor: 3 };
    /// A2A 1.0.
    pub const V1_0: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };

    /// Builds a version.
    pub const fn new(major: u32, minor: u32) -> Self {
        ProtocolVersion { major, minor }
    }

    /// Parses `Major.Minor[.Patch]`; surrounding whitespace is ignored. An empty value is 0.3.
    /// A bare major (`"1"`) means `1.0`.
    pub fn parse(s: &str) -> Result<Self, VersionParseError> {
        let t = s.trim();
        if t.is_empty() {
            return Ok(Self::V0_3);
        }
        let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
        let bad = || VersionParseError(s.to_owned());
        let mut it = t.split('.');
        let num = |p: Option<&str>| -> Result<Option<u32>, VersionParseError> {
            match p {
                None => Ok(None),
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    p.parse().map(Some).map_err(|_| bad())
                }
                Some(_) => Err(bad()),
            }
        };
        let major = num(it.next())?.ok_or_else(bad)?;
        let minor = num(it.next())?.unwrap_or(0);
        let _patch = num(it.next())?;
        if it.next().is_some() {
            return Err(bad());
        }
        Ok(ProtocolVersion { major, minor })
    }

    /// The version a request asks for: the `A2A-Version` value if present, else 0.3
    /// (absent or empty MUST be treated as 0.3, S1 §3.6.2).
    pub fn from_header(value: Option<&str>) -> Result<Self, VersionParseError> {
        Self::parse(value.unwrap_or(""))
    }

    /// True for 0.x versions.
    pub const fn is_v03(self) -> bool {
        self.major == 0
    }

    /// True for 1.x versions.
    pub const fn is_v1(self) -> bool {
        self.major == 1
    }
}

/// A requested version an interface does not serve (S1 §3.6.2 `VersionNotSupportedError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedVersion {
    /// The version as asked for, `Major.Minor` when it parses (the patch dropped), else the text.
    pub requested: String,
    /// The versions the interface serves.
    pub supported: Vec<ProtocolVersion>,
    /// The refusal is best read in the 0.3 form: the caller asked for a `0.x` version.
    pub legacy_form: bool,
}

impl UnsupportedVersion {
    /// The supported versions as `"0.3, 1.0"`.
    pub fn supported_list(&self) -> String {
        self.supported
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Version negotiation, the one rule of both the agent and the gateway: `requested` is the
/// `A2A-Version` the caller sent (header, else query parameter; see `a2a_agent::edge`). None or
/// empty is 0.3 (S1 §3.6.2: "Agents MUST interpret empty value as 0.3 version"); the patch is
/// ignored (`1.0.3` = 1.0); a version outside `serves` (the versions of the interface the request
/// reached) is refused.
pub fn negotiate(
    requested: Option<&str>,
    serves: &[ProtocolVersion],
) -> Result<ProtocolVersion, UnsupportedVersion> {
    let raw = requested.map(str::trim).unwrap_or("");
    let parsed = ProtocolVersion::parse(raw);
    match parsed {
        Ok(v) if serves.contains(&v) => Ok(v),
        _ => Err(UnsupportedVersion {
            requested: match parsed {
                Ok(v) => v.to_string(),
                Err(_) => raw.to_owned(),
            },
            supported: serves.to_vec(),
            legacy_form: raw.is_empty() || raw.starts_with("0."),
        }),
    }
}

impl Default for ProtocolVersion {
    fn default() -> Self {
        Self::V1_0
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for ProtocolVersion {
    type Err = VersionParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for ProtocolVersion {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProtocolVersion".into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::", "ProtocolVersion").into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": "^[0-9]+(\\.[0-9]+){0,2}$"})
    }
}

/// Parses extension header values (one or several header lines, each comma-separated) into
/// URIs: trimmed, empties dropped, duplicates removed, order kept.
pub fn parse_extensions<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        for item in v.split(',') {
            let item = item.trim();
            if !item.is_empty() && !out.iter().any(|e| e == item) {
                out.push(item.to_owned());
            }
        }
    }
    out
}

/// Joins extension URIs for a header value (`a, b`).
pub fn format_extensions<S: AsRef<str>>(uris: &[S]) -> String {
    uris.iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A transport protocol binding name (`AgentInterface.protocolBinding`, 0.3 `transport`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProtocolBinding {
    /// `JSONRPC` (legacy alias `jsonrpc`).
    JsonRpc,
    /// `HTTP+JSON` (legacy alias `rest`).
    HttpJson,
    /// `GRPC`.
    Grpc,
    /// Any other binding (SHOULD be a URI, S1 §5.8), kept verbatim.
    Custom(String),
}

impl ProtocolBinding {
    /// Parses a binding name, normalizing case and the legacy aliases `jsonrpc`, `json-rpc`,
    /// `rest`, `http`, `http+json` and `grpc`.
    pub fn parse(s: &str) -> Self {
        match s.trim().to_ascii_lowercase().as_str() {
            "jsonrpc" | "json-rpc" | "json_rpc" => ProtocolBinding::JsonRpc,
            "http+json" | "rest" | "http" | "http_json" | "httpjson" => ProtocolBinding::HttpJson,
            "grpc" => ProtocolBinding::Grpc,
            _ => ProtocolBinding::Custom(s.to_owned()),
        }
    }

    /// The canonical name: `JSONRPC`, `HTTP+JSON`, `GRPC` or the custom text.
    pub fn as_str(&self) -> &str {
        match self {
            ProtocolBinding::JsonRpc => "JSONRPC",
            ProtocolBinding::HttpJson => "HTTP+JSON",
            ProtocolBinding::Grpc => "GRPC",
            ProtocolBinding::Custom(s) => s,
        }
    }
}

impl fmt::Display for ProtocolBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolBinding {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self::parse(s))
    }
}

impl Serialize for ProtocolBinding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolBinding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Self::parse(&s))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for ProtocolBinding {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProtocolBinding".into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::", "ProtocolBinding").into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "description": "JSONRPC, HTTP+JSON, GRPC or a custom URI"})
    }
}

/// A protocol version the toolkit speaks: the one vocabulary of the agent, the gateway, the
/// client and the conformance runner (a card or header may name others: [`ProtocolVersion`]).
///
/// ```
/// use a2a_types::version::Version;
///
/// assert_eq!(Version::from_declared("1.0.2"), Some(Version::V1));
/// assert_eq!(Version::from_declared(""), Some(Version::V03));
/// assert_eq!(Version::V1.as_str(), "1.0");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// A2A 0.3 (also: no version named).
    V03,
    /// A2A 1.0.
    V1,
}

impl Version {
    /// Both versions, 0.3 first.
    pub const ALL: [Version; 2] = [Version::V03, Version::V1];

    /// The gateway's earlier name of [`Version::V1`], kept for one release.
    #[doc(hidden)]
    pub const V10: Version = Version::V1;

    /// `Major.Minor` (`"0.3"`, `"1.0"`), as sent in `A2A-Version`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V03 => "0.3",
            Version::V1 => "1.0",
        }
    }

    /// The version as a [`ProtocolVersion`].
    pub const fn protocol(self) -> ProtocolVersion {
        match self {
            Version::V03 => ProtocolVersion::V0_3,
            Version::V1 => ProtocolVersion::V1_0,
        }
    }

    /// The spoken version of a [`ProtocolVersion`] (`0.3` or `1.0` exactly), or `None`.
    pub fn from_protocol(v: ProtocolVersion) -> Option<Version> {
        match v {
            ProtocolVersion::V0_3 => Some(Version::V03),
            ProtocolVersion::V1_0 => Some(Version::V1),
            _ => None,
        }
    }

    /// Maps a declared protocol version (`"1.0"`, `"1.0.1"`, `"0.3.0"`, `""`) to a spoken one,
    /// or `None`.
    ///
    /// - An empty value means 0.3, as the 1.0 specification (S1 §3.6.2) says for an absent
    ///   `A2A-Version`.
    /// - `1.x` (any minor) is served as 1.0: minor versions of 1 are backward compatible, and an
    ///   interface declares "the latest supported minor version per major version" (proto
    ///   `AgentInterface.protocol_version`).
    /// - `0.3` / `0.3.x` is 0.3. Other 0.x minors are incompatible dialects and are refused.
    pub fn from_declared(declared: &str) -> Option<Version> {
        let declared = declared.trim();
        if declared.is_empty() {
            return Some(Version::V03);
        }
        let mut parts = declared.split('.');
        let major = parts.next()?.trim_start_matches(['v', 'V']);
        let minor = parts.next().unwrap_or("0");
        match (major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?) {
            (1, _) => Some(Version::V1),
            (0, 3) => Some(Version::V03),
            _ => None,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A protocol binding the toolkit speaks: the one vocabulary of the agent, the gateway, the
/// client and the conformance runner (a card may name others: [`ProtocolBinding`]).
///
/// ```
/// use a2a_types::version::Binding;
///
/// assert_eq!(Binding::parse("rest"), Some(Binding::HttpJson));
/// assert_eq!(Binding::parse("urn:x:custom"), None);
/// assert_eq!(Binding::Grpc.as_str(), "GRPC");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    /// `JSONRPC`: JSON-RPC 2.0 over HTTP, SSE for streams.
    JsonRpc,
    /// `HTTP+JSON`: the REST binding, SSE for streams.
    HttpJson,
    /// `GRPC`: the gRPC binding (1.0 only).
    Grpc,
}

impl Binding {
    /// Every binding.
    pub const ALL: [Binding; 3] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];

    /// The name as written on cards: `JSONRPC`, `HTTP+JSON`, `GRPC`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
            Binding::Grpc => "GRPC",
        }
    }

    /// Reads a binding name as [`ProtocolBinding::parse`] does (case and the aliases seen in
    /// the wild); `None` for any other (custom) binding.
    pub fn parse(name: &str) -> Option<Binding> {
        ProtocolBinding::parse(name).binding()
    }
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ProtocolBinding {
    /// The spoken [`Binding`] this name is, or `None` for a custom one.
    pub fn binding(&self) -> Option<Binding> {
        match self {
            ProtocolBinding::JsonRpc => Some(Binding::JsonRpc),
            ProtocolBinding::HttpJson => Some(Binding::HttpJson),
            ProtocolBinding::Grpc => Some(Binding::Grpc),
            ProtocolBinding::Custom(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(
            ProtocolVersion::parse("1.0").unwrap(),
            ProtocolVersion::V1_0
        );
        assert_eq!(
            ProtocolVersion::parse("1.0.1").unwrap(),
            ProtocolVersion::V1_0
        );
        assert_eq!(
            ProtocolVersion::parse("0.3.0").unwrap(),
            ProtocolVersion::V0_3
        );
        assert_eq!(ProtocolVersion::parse(" ").unwrap(), ProtocolVersion::V0_3);
        assert_eq!(
            ProtocolVersion::from_header(None).unwrap(),
            ProtocolVersion::V0_3
        );
        assert_eq!(ProtocolVersion::parse("1").unwrap(), ProtocolVersion::V1_0);
        assert_eq!(
            ProtocolVersion::parse("2.1").unwrap(),
            ProtocolVersion::new(2, 1)
        );
        for bad in ["x", "1.x", "1..0", "1.0.0.0", "-1.0", "1.0-beta"] {
            assert!(ProtocolVersion::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(ProtocolVersion::V0_3.to_string(), "0.3");
    }

    #[test]
    fn negotiation() {
        let both = [ProtocolVersion::V0_3, ProtocolVersion::V1_0];
        let v1 = [ProtocolVersion::V1_0];
        assert_eq!(negotiate(None, &both), Ok(ProtocolVersion::V0_3));
        assert_eq!(negotiate(Some(" "), &both), Ok(ProtocolVersion::V0_3));
        assert_eq!(negotiate(Some("1.0.3"), &both), Ok(ProtocolVersion::V1_0));
        assert_eq!(negotiate(Some("0.3.9"), &both), Ok(ProtocolVersion::V0_3));
        let e = negotiate(None, &v1).unwrap_err();
        assert_eq!((e.requested.as_str(), e.legacy_form), ("0.3", true));
        assert_eq!(e.supported_list(), "1.0");
        let e = negotiate(Some("2.0.1"), &both).unwrap_err();
        assert_eq!((e.requested.as_str(), e.legacy_form), ("2.0", false));
        assert_eq!(e.supported_list(), "0.3, 1.0");
        let e = negotiate(Some("0.2"), &both).unwrap_err();
        assert!(e.legacy_form);
        assert_eq!(negotiate(Some("abc"), &both).unwrap_err().requested, "abc");
    }

    #[test]
    fn extensions() {
        assert_eq!(
            parse_extensions(["a, b", "b,c", " ,"]),
            vec!["a".to_string(), "b".into(), "c".into()]
        );
        assert_eq!(format_extensions(&["a", "b"]), "a, b");
    }

    #[test]
    fn bindings() {
        assert_eq!(ProtocolBinding::parse("jsonrpc"), ProtocolBinding::JsonRpc);
        assert_eq!(ProtocolBinding::parse("rest"), ProtocolBinding::HttpJson);
        assert_eq!(ProtocolBinding::parse("HTTP+JSON").as_str(), "HTTP+JSON");
        assert_eq!(ProtocolBinding::parse("GRPC"), ProtocolBinding::Grpc);
        assert_eq!(
            ProtocolBinding::parse("urn:x"),
            ProtocolBinding::Custom("urn:x".into())
        );
    }

    #[test]
    fn media_types() {
        assert!(is_json_media_type("application/json; charset=utf-8"));
        assert!(is_json_media_type("Application/A2A+JSON"));
        assert!(!is_json_media_type("text/plain"));
        assert!(is_event_stream("text/event-stream;charset=utf-8"));
    }
}
