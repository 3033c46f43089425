//! The agent card: from a JSON file, a builder, or identity parameters; served per `A2A-Version`.

use crate::edge::version::Version;
use serde_json::{Value, json};
use std::path::Path;

/// An A2A 1.0 agent card. Kept as JSON so unknown properties survive.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCard(Value);

/// Card loading / validation failures.
#[derive(Debug, thiserror::Error)]
pub enum CardError {
    /// Could not read the file.
    #[error("cannot read agent card {0}: {1}")]
    Io(String, std::io::Error),
    /// Not JSON or not an object.
    #[error("invalid agent card: {0}")]
    Invalid(String),
    /// A binding this server cannot serve.
    #[error(
        "agent card interface {index} uses protocol binding {binding:?}; this server serves only JSONRPC and HTTP+JSON"
    )]
    UnsupportedBinding {
        /// Index in `supportedInterfaces`.
        index: usize,
        /// The binding named.
        binding: String,
    },
}

impl AgentCard {
    /// Parse a 1.0 card from JSON; validates bindings and normalizes `rest`/`jsonrpc` aliases.
    pub fn from_json(v: Value) -> Result<Self, CardError> {
        if !v.is_object() {
            return Err(CardError::Invalid("the card must be a JSON object".into()));
        }
        let mut card = AgentCard(v);
        for key in ["name", "description", "version"] {
            if card.0.get(key).and_then(Value::as_str).is_none() {
                return Err(CardError::Invalid(format!("missing string member {key:?}")));
            }
        }
        card.normalize_bindings()?;
        card.normalize_security();
        Ok(card)
    }

    /// Read a card file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, CardError> {
        let p = path.as_ref();
        let s =
            std::fs::read_to_string(p).map_err(|e| CardError::Io(p.display().to_string(), e))?;
        let v: Value = serde_json::from_str(&s).map_err(|e| CardError::Invalid(e.to_string()))?;
        Self::from_json(v)
    }

    /// A card from identity parameters only (name, description, version).
    pub fn identity(name: &str, description: &str, version: &str) -> Self {
        AgentCard::builder(name, description, version).build()
    }

    /// Start a card builder.
    pub fn builder(name: &str, description: &str, version: &str) -> CardBuilder {
        CardBuilder(json!({
            "name": name,
            "description": description,
            "version": version,
            "capabilities": {"streaming": true, "pushNotifications": false},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }))
    }

    /// The card JSON.
    pub fn json(&self) -> &Value {
        &self.0
    }

    /// `capabilities.streaming` is true.
    pub fn streaming(&self) -> bool {
        self.capability("streaming")
    }

    /// `capabilities.pushNotifications` is true.
    pub fn push_notifications(&self) -> bool {
        self.capability("pushNotifications")
    }

    /// `capabilities.<name>` is true. Read on every streaming request: looked up by key, not
    /// by JSON pointer (which parses and unescapes its path each time).
    fn capability(&self, name: &str) -> bool {
        self.0
            .get("capabilities")
            .and_then(|c| c.get(name))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The declared extensions (`capabilities.extensions`).
    pub fn extensions(&self) -> Vec<Value> {
        self.extension_decls().to_vec()
    }

    /// The declared extensions (`capabilities.extensions`), borrowed (read on every request).
    pub fn extension_decls(&self) -> &[Value] {
        self.0
            .get("capabilities")
            .and_then(|c| c.get("extensions"))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The header names of the card's `apiKey` schemes located in a header (lowercase).
    pub fn api_key_header_names(&self) -> Vec<String> {
        self.0
            .get("securitySchemes")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
            .filter_map(|s| s.get("apiKeySecurityScheme").or_else(|| s.get("apiKey")))
            .filter(|k| {
                k.get("location")
                    .or_else(|| k.get("in"))
                    .and_then(Value::as_str)
                    .is_none_or(|l| l.eq_ignore_ascii_case("header"))
            })
            .filter_map(|k| k.get("name").and_then(Value::as_str))
            .map(str::to_ascii_lowercase)
            .collect()
    }

    /// Whether the card declares any security scheme.
    pub fn has_security_schemes(&self) -> bool {
        self.0
            .get("securitySchemes")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    }

    /// The legacy draft field `security` (`[{"scheme": ["scope", ...]}]`, as A2A 0.3 writes it),
    /// on the card and on each skill, becomes `securityRequirements` (`[{"schemes": {"scheme":
    /// {"list": [...]}}}]`) where that is absent: the Camel guide accepts it on input and
    /// converts it. The legacy member stays in the card for 0.3 readers ([`Self::render`]).
    fn normalize_security(&mut self) {
        fn convert(o: &mut serde_json::Map<String, Value>) {
            if o.contains_key("securityRequirements") {
                return;
            }
            let Some(Value::Array(legacy)) = o.get("security") else {
                return;
            };
            let reqs: Vec<Value> = legacy
                .iter()
                .filter_map(Value::as_object)
                .map(|r| {
                    let schemes: serde_json::Map<String, Value> = r
                        .iter()
                        .map(|(k, scopes)| {
                            let list = scopes.as_array().cloned().unwrap_or_default();
                            (k.clone(), json!({ "list": list }))
                        })
                        .collect();
                    json!({ "schemes": schemes })
                })
                .collect();
            o.insert("securityRequirements".into(), Value::Array(reqs));
        }
        let Some(root) = self.0.as_object_mut() else {
            return;
        };
        convert(root);
        if let Some(Value::Array(skills)) = root.get_mut("skills") {
            for s in skills.iter_mut().filter_map(Value::as_object_mut) {
                convert(s);
            }
        }
    }

    /// The card without its 0.3 members (`url`, `preferredTransport`, `protocolVersion`,
    /// `additionalInterfaces`) and without the legacy `security` (card and skills).
    fn pure_v1(&self) -> Value {
        let mut v = self.0.clone();
        if let Some(o) = v.as_object_mut() {
            for k in V03_KEYS {
                o.remove(k);
            }
            o.remove("security");
            if let Some(Value::Array(skills)) = o.get_mut("skills") {
                for s in skills.iter_mut().filter_map(Value::as_object_mut) {
                    s.remove("security");
                }
            }
        }
        v
    }

    fn normalize_bindings(&mut self) -> Result<(), CardError> {
        if let Some(arr) = self
            .0
            .get_mut("supportedInterfaces")
            .and_then(Value::as_array_mut)
        {
            for (index, i) in arr.iter_mut().enumerate() {
                let b = i
                    .get("protocolBinding")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let norm = match b.to_ascii_lowercase().as_str() {
                    "jsonrpc" => "JSONRPC",
                    "http+json" | "rest" => "HTTP+JSON",
                    // Served only with the `grpc` setting (checked when serving).
                    "grpc" => "GRPC",
                    _ => {
                        return Err(CardError::UnsupportedBinding { index, binding: b });
                    }
                };
                i["protocolBinding"] = Value::String(norm.into());
            }
        }
        Ok(())
    }

    /// Fill in `supportedInterfaces` for `base_url` when the card has none: JSON-RPC and HTTP+JSON in
    /// 1.0 and 0.3 at the same URL.
    pub fn with_default_interfaces(self, base_url: &str) -> Self {
        self.with_default_interfaces_for(base_url, crate::config::ServedBindings::Both)
    }

    /// [`Self::with_default_interfaces`] for the bindings `served` (`binding` setting).
    pub fn with_default_interfaces_for(
        self,
        base_url: &str,
        served: crate::config::ServedBindings,
    ) -> Self {
        self.with_served_interfaces(base_url, served, None)
    }

    /// [`Self::with_default_interfaces_for`], plus a `GRPC` 1.0 interface at `grpc`
    /// (`host:port`, as `a2a.proto` asks for gRPC urls) after the 1.0 HTTP ones.
    pub fn with_served_interfaces(
        mut self,
        base_url: &str,
        served: crate::config::ServedBindings,
        grpc: Option<&str>,
    ) -> Self {
        let has = self
            .0
            .get("supportedInterfaces")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if !has {
            let mut v = Vec::new();
            for version in ["1.0", "0.3"] {
                if served.jsonrpc() {
                    v.push(json!({"url": base_url, "protocolBinding": "JSONRPC", "protocolVersion": version}));
                }
                if served.rest() {
                    v.push(json!({"url": base_url, "protocolBinding": "HTTP+JSON", "protocolVersion": version}));
                }
                if let (Some(g), "1.0") = (grpc, version) {
                    v.push(
                        json!({"url": g, "protocolBinding": "GRPC", "protocolVersion": version}),
                    );
                }
            }
            self.0["supportedInterfaces"] = Value::Array(v);
        }
        self
    }

    /// Whether `supportedInterfaces` lists a `GRPC` interface.
    pub fn lists_grpc(&self) -> bool {
        self.0
            .get("supportedInterfaces")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|i| i["protocolBinding"] == "GRPC"))
    }

    /// Whether `supportedInterfaces` lists an interface of `version` (`"1.0"`, `"0.3"`).
    pub fn has_interface_version(&self, version: &str) -> bool {
        self.0
            .get("supportedInterfaces")
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter().any(|i| {
                    i.get("protocolVersion")
                        .and_then(Value::as_str)
                        .is_some_and(|v| v == version || v.starts_with(&format!("{version}.")))
                })
            })
    }

    /// The card as served to a caller that asked for `version` (`None`: no header).
    ///
    /// `1.0`: a pure 1.0 card (no 0.3 `url`/`preferredTransport`/`protocolVersion`/
    /// `additionalInterfaces`, even if the card file has them, and a legacy `security` only as
    /// `securityRequirements`). No header: the 1.0 card plus those 0.3 members when the card
    /// lists a 0.3 interface, so a header-less 0.3 client still finds the address (a card with
    /// only 1.0 interfaces gets none invented), and the card file's legacy `security` as written.
    /// `0.3`: a pure 0.3 card (its `security` from `securityRequirements`).
    pub fn render(&self, version: Option<Version>) -> Value {
        match version {
            Some(Version::V1) => self.pure_v1(),
            None => {
                let mut v = self.0.clone();
                if !self.has_interface_version("0.3") {
                    return v;
                }
                let old = crate::edge::card_to_v03(&self.pure_v1());
                if let (Some(o), Some(old)) = (v.as_object_mut(), old.as_object()) {
                    for k in V03_KEYS {
                        if let Some(x) = old.get(k) {
                            o.entry(k).or_insert(x.clone());
                        }
                    }
                }
                v
            }
            Some(Version::V03) => crate::edge::card_to_v03(&self.pure_v1()),
        }
    }
}

/// The 0.3 members a 1.0 card may carry for header-less 0.3 readers.
const V03_KEYS: [&str; 4] = [
    "url",
    "preferredTransport",
    "protocolVersion",
    "additionalInterfaces",
];

/// `t` as an HTTP date (RFC 9110 IMF-fixdate), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
pub(crate) fn http_date(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        WD[days.rem_euclid(7) as usize],
        d,
        MO[(m - 1) as usize],
        y,
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Builds an [`AgentCard`].
#[derive(Debug, Clone)]
pub struct CardBuilder(Value);

impl CardBuilder {
    /// Set `capabilities.streaming`.
    pub fn streaming(mut self, on: bool) -> Self {
        self.0["capabilities"]["streaming"] = Value::Bool(on);
        self
    }
    /// Set `capabilities.pushNotifications` (push configs and webhooks are served when true).
    pub fn push_notifications(mut self, on: bool) -> Self {
        self.0["capabilities"]["pushNotifications"] = Value::Bool(on);
        self
    }
    /// Set `capabilities.extendedAgentCard` (serve [`crate::AgentServer::extended_card`]).
    pub fn extended_agent_card(mut self, on: bool) -> Self {
        self.0["capabilities"]["extendedAgentCard"] = Value::Bool(on);
        self
    }
    /// Declare an extension with a description and `params` (an object, or `Value::Null`).
    pub fn extension_with(
        mut self,
        uri: &str,
        required: bool,
        description: Option<&str>,
        params: Value,
    ) -> Self {
        self = self.extension(uri, required);
        if let Some(e) = self.0["capabilities"]["extensions"]
            .as_array_mut()
            .and_then(|a| a.last_mut())
        {
            if let Some(d) = description {
                e["description"] = Value::String(d.into());
            }
            if !params.is_null() {
                e["params"] = params;
            }
        }
        self
    }
    /// Set any member of `capabilities` (for capabilities without a setter of their own).
    pub fn capability(mut self, key: &str, value: Value) -> Self {
        self.0["capabilities"][key] = value;
        self
    }
    /// Add a skill.
    pub fn skill(mut self, id: &str, name: &str, description: &str, tags: &[&str]) -> Self {
        if let Some(a) = self.0["skills"].as_array_mut() {
            a.push(json!({"id": id, "name": name, "description": description, "tags": tags}));
        }
        self
    }
    /// Declare an extension.
    pub fn extension(mut self, uri: &str, required: bool) -> Self {
        let caps = &mut self.0["capabilities"];
        if caps.get("extensions").is_none() {
            caps["extensions"] = json!([]);
        }
        if let Some(a) = caps["extensions"].as_array_mut() {
            a.push(json!({"uri": uri, "required": required}));
        }
        self
    }
    /// Set any top-level member.
    pub fn set(mut self, key: &str, value: Value) -> Self {
        self.0[key] = value;
        self
    }
    /// Declare an API key scheme `name` at `location` (`header`, `query`, `cookie`) and require it.
    pub fn api_key_scheme(self, scheme: &str, location: &str, name: &str) -> Self {
        self.security_scheme(
            scheme,
            json!({"apiKeySecurityScheme": {"location": location, "name": name}}),
        )
    }
    /// Declare an HTTP bearer scheme and require it.
    pub fn bearer_scheme(self, scheme: &str) -> Self {
        self.security_scheme(
            scheme,
            json!({"httpAuthSecurityScheme": {"scheme": "bearer"}}),
        )
    }
    fn security_scheme(mut self, scheme: &str, decl: Value) -> Self {
        if self.0.get("securitySchemes").is_none() {
            self.0["securitySchemes"] = json!({});
        }
        self.0["securitySchemes"][scheme] = decl;
        if self.0.get("securityRequirements").is_none() {
            self.0["securityRequirements"] = json!([]);
        }
        if let Some(a) = self.0["securityRequirements"].as_array_mut() {
            a.push(json!({"schemes": {scheme: {"list": []}}}));
        }
        self
    }
    /// Finish.
    pub fn build(self) -> AgentCard {
        AgentCard(self.0)
    }
}

/// A strong ETag of `body` (FNV-1a 64).
pub(crate) fn etag(body: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in body {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("\"{h:016x}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_date_formats_imf_fixdate() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(784_111_777);
        assert_eq!(http_date(t), "Sun, 06 Nov 1994 08:49:37 GMT");
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(http_date(t), "Tue, 29 Feb 2000 00:00:00 GMT");
    }

    #[test]
    fn render_forms() {
        let one = AgentCard::identity("a", "b", "1")
            .with_default_interfaces("http://x")
            .json()
            .clone();
        let mut both = one.clone();
        both["url"] = json!("http://stale");
        let both = AgentCard::from_json(both).unwrap();
        let v1 = both.render(Some(Version::V1));
        assert!(v1.get("url").is_none() && v1.get("preferredTransport").is_none());
        let bare = both.render(None);
        assert_eq!(bare["protocolVersion"], "0.3.0");
        assert!(bare["preferredTransport"].is_string());
        let only1 = AgentCard::identity("a", "b", "1")
            .with_default_interfaces("http://x")
            .json()
            .clone();
        let mut only1 = only1;
        only1["supportedInterfaces"] =
            json!([{"url": "http://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
        let only1 = AgentCard::from_json(only1).unwrap();
        let bare = only1.render(None);
        assert!(bare.get("url").is_none() && bare.get("protocolVersion").is_none());
        let old = both.render(Some(Version::V03));
        let extra = old["additionalInterfaces"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut transports: Vec<String> = extra
            .iter()
            .filter_map(|i| i["transport"].as_str().map(str::to_string))
            .collect();
        transports.push(old["preferredTransport"].as_str().unwrap_or("").to_string());
        assert!(transports.iter().any(|t| t == "HTTP+JSON"), "{old}");
        assert!(transports.iter().any(|t| t == "JSONRPC"), "{old}");
    }
}
