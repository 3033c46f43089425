//! The agent card: from a JSON file, a builder, or identity parameters; served per `A2A-Version`.

use crate::negotiate::Version;
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
        self.0
            .pointer("/capabilities/streaming")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `capabilities.pushNotifications` is true.
    pub fn push_notifications(&self) -> bool {
        self.0
            .pointer("/capabilities/pushNotifications")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The declared extensions (`capabilities.extensions`).
    pub fn extensions(&self) -> Vec<Value> {
        self.0
            .pointer("/capabilities/extensions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the card declares any security scheme.
    pub fn has_security_schemes(&self) -> bool {
        self.0
            .get("securitySchemes")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
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
    pub fn with_default_interfaces(mut self, base_url: &str) -> Self {
        let has = self
            .0
            .get("supportedInterfaces")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if !has {
            self.0["supportedInterfaces"] = json!([
                {"url": base_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": base_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": base_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": base_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
            ]);
        }
        self
    }

    /// The card as served to a caller that asked for `version` (`None`: no header).
    ///
    /// No header: the 1.0 card plus the 0.3 `url`/`preferredTransport`/`protocolVersion` members, so
    /// a header-less 0.3 client still finds the address. `0.3`: a pure 0.3 card.
    pub fn render(&self, version: Option<Version>) -> Value {
        match version {
            Some(Version::V1) => self.0.clone(),
            None => {
                let mut v = self.0.clone();
                let old = crate::edge::card_to_v03(&self.0);
                if let (Some(o), Some(old)) = (v.as_object_mut(), old.as_object()) {
                    for k in [
                        "url",
                        "preferredTransport",
                        "protocolVersion",
                        "additionalInterfaces",
                    ] {
                        if let Some(x) = old.get(k) {
                            o.entry(k).or_insert(x.clone());
                        }
                    }
                }
                v
            }
            Some(Version::V03) => crate::edge::card_to_v03(&self.0),
        }
    }
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
