//! `Message`, `Role` and `Part` (P1 `Message`, `Role`, `Part`).

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Metadata;
use crate::binary::Base64Bytes;
use crate::macros::proto_enum;

proto_enum! {
    /// The sender of a message (P1 `Role`).
    pub enum Role: "Role" {
        /// `ROLE_UNSPECIFIED` (0).
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        /// `ROLE_USER` (1): the client.
        User = 1 => "ROLE_USER",
        /// `ROLE_AGENT` (2): the agent.
        Agent = 2 => "ROLE_AGENT",
    }
}

/// The content of a [`Part`]: the P1 `oneof content`. The JSON member name is the
/// discriminator: `{"text":..}`, `{"raw":..}`, `{"url":..}`, `{"data":..}`.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// `text`: plain text.
    Text(String),
    /// `raw`: file bytes, base64 text kept verbatim.
    Raw(Base64Bytes),
    /// `url`: a reference to file content.
    Url(String),
    /// `data`: any JSON value (`google.protobuf.Value`), including `null`.
    Data(Value),
}

impl PartContent {
    /// The JSON member name of this variant.
    pub fn member_name(&self) -> &'static str {
        match self {
            PartContent::Text(_) => "text",
            PartContent::Raw(_) => "raw",
            PartContent::Url(_) => "url",
            PartContent::Data(_) => "data",
        }
    }
}

/// One piece of message or artifact content (P1 `Part`).
///
/// JSON: `{"text":"hi"}`, `{"raw":"aGk=","filename":"a.txt","mediaType":"text/plain"}`,
/// `{"url":"https://..","mediaType":".."}`, `{"data":{..}}`; `metadata`, `filename` and
/// `mediaType` are valid on every kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The content (exactly one of text/raw/url/data).
    pub content: PartContent,
    /// `metadata`: free-form extension data.
    pub metadata: Option<Metadata>,
    /// `filename`: an optional file name.
    pub filename: Option<String>,
    /// `mediaType`: the MIME type of the content.
    pub media_type: Option<String>,
}

impl Part {
    fn with(content: PartContent) -> Self {
        Part {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::with(PartContent::Text(text.into()))
    }

    /// A raw-bytes part (encoded as standard padded base64).
    pub fn raw(bytes: impl AsRef<[u8]>) -> Self {
        Self::with(PartContent::Raw(Base64Bytes::encode(bytes)))
    }

    /// A raw part from base64 text kept verbatim.
    pub fn raw_base64(b64: Base64Bytes) -> Self {
        Self::with(PartContent::Raw(b64))
    }

    /// A URL part.
    pub fn url(url: impl Into<String>) -> Self {
        Self::with(PartContent::Url(url.into()))
    }

    /// A structured-data part.
    pub fn data(value: Value) -> Self {
        Self::with(PartContent::Data(value))
    }

    /// Sets `mediaType`.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// Sets `filename`.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Sets `metadata`.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The text if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The base64 text if this is a raw part.
    pub fn as_raw(&self) -> Option<&Base64Bytes> {
        match &self.content {
            PartContent::Raw(b) => Some(b),
            _ => None,
        }
    }

    /// The URL if this is a URL part.
    pub fn as_url(&self) -> Option<&str> {
        match &self.content {
            PartContent::Url(u) => Some(u),
            _ => None,
        }
    }

    /// The data value if this is a data part.
    pub fn as_data(&self) -> Option<&Value> {
        match &self.content {
            PartContent::Data(v) => Some(v),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 1
            + usize::from(self.metadata.is_some())
            + usize::from(self.filename.is_some())
            + usize::from(self.media_type.is_some());
        let mut m = s.serialize_map(Some(n))?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(r) => m.serialize_entry("raw", r)?,
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(d) => m.serialize_entry("data", d)?,
        }
        if let Some(v) = &self.metadata {
            m.serialize_entry("metadata", v)?;
        }
        if let Some(v) = &self.filename {
            m.serialize_entry("filename", v)?;
        }
        if let Some(v) = &self.media_type {
            m.serialize_entry("mediaType", v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Part;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a Part object with one of text, raw, url, data")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
                let mut content: Option<PartContent> = None;
                let mut metadata: Option<Option<Metadata>> = None;
                let mut filename: Option<Option<String>> = None;
                let mut media_type: Option<Option<String>> = None;
                let set = |content: &mut Option<PartContent>, c: PartContent| {
                    if let Some(prev) = content {
                        return Err(de::Error::custom(format_args!(
                            "Part has both `{}` and `{}` (oneof content allows one)",
                            prev.member_name(),
                            c.member_name()
                        )));
                    }
                    *content = Some(c);
                    Ok(())
                };
                const KEYS: &[&str] = &[
                    "text",
                    "raw",
                    "url",
                    "data",
                    "metadata",
                    "filename",
                    "mediaType",
                    "media_type",
                ];
                while let Some(key) = map.next_key_seed(crate::macros::KeySeed(KEYS))? {
                    match key.map(|i| KEYS[i]).unwrap_or("") {
                        "text" => {
                            let v: Option<String> = map.next_value()?;
                            if let Some(v) = v {
                                set(&mut content, PartContent::Text(v))?;
                            }
                        }
                        "raw" => {
                            let v: Option<Base64Bytes> = map.next_value()?;
                            if let Some(v) = v {
                                set(&mut content, PartContent::Raw(v))?;
                            }
                        }
                        "url" => {
                            let v: Option<String> = map.next_value()?;
                            if let Some(v) = v {
                                set(&mut content, PartContent::Url(v))?;
                            }
                        }
                        "data" => {
                            let v: Value = map.next_value()?;
                            set(&mut content, PartContent::Data(v))?;
                        }
                        "metadata" => {
                            if metadata.is_some() {
                                return Err(de::Error::duplicate_field("metadata"));
                            }
                            metadata = Some(map.next_value()?);
                        }
                        "filename" => {
                            if filename.is_some() {
                                return Err(de::Error::duplicate_field("filename"));
                            }
                            filename = Some(map.next_value()?);
                        }
                        "mediaType" | "media_type" => {
                            if media_type.is_some() {
                                return Err(de::Error::duplicate_field("mediaType"));
                            }
                            media_type = Some(map.next_value()?);
                        }
                        _ => {
                            // Unknown members are ignored (S1 §5.7); the strict validator reports them.
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let content = content.ok_or_else(|| {
                    de::Error::custom("Part needs one of `text`, `raw`, `url`, `data`")
                })?;
                Ok(Part {
                    content,
                    metadata: metadata.flatten(),
                    filename: filename.flatten(),
                    media_type: media_type.flatten(),
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for Part {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Part".into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::", "Part").into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "One piece of content (P1 `Part`): exactly one of text, raw, url, data.",
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "Plain text."},
                "raw": {"type": "string", "format": "byte", "description": "File bytes, base64."},
                "url": {"type": "string", "description": "A URL to the file content."},
                "data": {"description": "Any JSON value."},
                "metadata": {"type": "object", "description": "Free-form extension data."},
                "filename": {"type": "string", "description": "An optional file name."},
                "mediaType": {"type": "string", "description": "The MIME type of the content."}
            },
            "oneOf": [
                {"required": ["text"]},
                {"required": ["raw"]},
                {"required": ["url"]},
                {"required": ["data"]}
            ]
        })
    }
}

/// One turn of communication between client and agent (P1 `Message`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["messageId", "role", "parts"])))]
pub struct Message {
    /// `messageId` (REQUIRED): unique id, created by the sender.
    #[serde(default, alias = "message_id")]
    pub message_id: String,
    /// `contextId`: the conversation context.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "context_id")]
    pub context_id: Option<String>,
    /// `taskId`: the task this message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "task_id")]
    pub task_id: Option<String>,
    /// `role` (REQUIRED): who sent it.
    #[serde(default)]
    pub role: Role,
    /// `parts` (REQUIRED, at least one): the content.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub parts: Vec<Part>,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// `extensions`: URIs of extensions present in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// `referenceTaskIds`: tasks this message refers to.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "reference_task_ids"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with the given role and parts, and a fresh random `messageId`.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Message {
            message_id: crate::new_id(),
            role,
            parts,
            ..Default::default()
        }
    }

    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![Part::text(text)])
    }

    /// An agent message with one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::new(Role::Agent, vec![Part::text(text)])
    }

    /// Sets `messageId`.
    pub fn with_message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets `contextId`.
    pub fn with_context_id(mut self, id: impl Into<String>) -> Self {
        self.context_id = Some(id.into());
        self
    }

    /// Sets `taskId`.
    pub fn with_task_id(mut self, id: impl Into<String>) -> Self {
        self.task_id = Some(id.into());
        self
    }

    /// Appends a part.
    pub fn with_part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// Sets `metadata`.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// All text parts joined with `\n`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for t in self.parts.iter().filter_map(Part::as_text) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(t);
        }
        out
    }
}
