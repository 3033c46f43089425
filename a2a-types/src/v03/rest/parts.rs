//! HTTP+JSON 0.3 parts (ProtoJSON `oneof` content).

use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Metadata;
use crate::binary::Base64Bytes;

// ---------------------------------------------------------------------------------------------
// Parts
// ---------------------------------------------------------------------------------------------

/// The content of a [`Part`] (P0 `oneof part`): the JSON member name is the discriminator.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// `text`.
    Text(String),
    /// `file`.
    File(FilePart),
    /// `data`.
    Data(DataPart),
}

impl PartContent {
    /// The JSON member name of this variant.
    pub fn member_name(&self) -> &'static str {
        match self {
            PartContent::Text(_) => "text",
            PartContent::File(_) => "file",
            PartContent::Data(_) => "data",
        }
    }
}

/// One piece of content (P0 `Part`).
///
/// `{"text":"hi"}`, `{"file":{"fileWithUri":"https://..","mimeType":"image/png"}}`,
/// `{"data":{"data":{"k":1}}}`. Unknown members are ignored on input; two oneof members are
/// refused. `metadata` is not in P0 @ v0.3.0 but is in the later 0.3 proto that the official
/// SDK (a2a-sdk 0.3.26, field 4) sends, so it is modelled too.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The content (exactly one of text/file/data).
    pub content: PartContent,
    /// `metadata` (later 0.3 proto; absent from P0 @ v0.3.0).
    pub metadata: Option<Metadata>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            content: PartContent::Text(text.into()),
            metadata: None,
        }
    }

    /// A file part.
    pub fn file(file: FilePart) -> Self {
        Part {
            content: PartContent::File(file),
            metadata: None,
        }
    }

    /// A data part.
    pub fn data(data: Metadata) -> Self {
        Part {
            content: PartContent::Data(DataPart { data }),
            metadata: None,
        }
    }

    /// The JSON member name of the content.
    pub fn member_name(&self) -> &'static str {
        self.content.member_name()
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1 + usize::from(self.metadata.is_some())))?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::File(f) => m.serialize_entry("file", f)?,
            PartContent::Data(d) => m.serialize_entry("data", d)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        m.end()
    }
}

/// Records one member of a oneof, refusing a second one.
fn set_oneof<T, E: de::Error>(
    slot: &mut Option<(&'static str, T)>,
    name: &'static str,
    value: T,
    what: &str,
) -> Result<(), E> {
    if let Some((prev, _)) = slot {
        return Err(E::custom(format_args!(
            "{what} has both `{prev}` and `{name}` (oneof allows one)"
        )));
    }
    *slot = Some((name, value));
    Ok(())
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part object with one of text, file, data")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
                let mut content: Option<(&'static str, PartContent)> = None;
                let mut metadata: Option<Option<Metadata>> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "text" => {
                            if let Some(v) = map.next_value::<Option<String>>()? {
                                set_oneof(&mut content, "text", PartContent::Text(v), "Part")?;
                            }
                        }
                        "file" => {
                            if let Some(v) = map.next_value::<Option<FilePart>>()? {
                                set_oneof(&mut content, "file", PartContent::File(v), "Part")?;
                            }
                        }
                        "data" => {
                            if let Some(v) = map.next_value::<Option<DataPart>>()? {
                                set_oneof(&mut content, "data", PartContent::Data(v), "Part")?;
                            }
                        }
                        "metadata" => {
                            if metadata.is_some() {
                                return Err(de::Error::duplicate_field("metadata"));
                            }
                            metadata = Some(map.next_value()?);
                        }
                        _ => {
                            // Unknown members are ignored; the strict validator reports them.
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let (_, content) = content
                    .ok_or_else(|| de::Error::custom("Part needs one of `text`, `file`, `data`"))?;
                Ok(Part {
                    content,
                    metadata: metadata.flatten(),
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for Part {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "v03.rest.Part".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let file = g.subschema_for::<FilePart>();
        let data = g.subschema_for::<DataPart>();
        schemars::json_schema!({
            "description": "One piece of content (P0 `Part`): exactly one of text, file, data.",
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "Plain text."},
                "file": file,
                "data": data,
                "metadata": {"type": "object", "description": "Part metadata (later 0.3 proto)."}
            },
            "oneOf": [
                {"required": ["text"]},
                {"required": ["file"]},
                {"required": ["data"]}
            ]
        })
    }
}

/// The content of a [`FilePart`] (P0 `oneof file`).
#[derive(Debug, Clone, PartialEq)]
pub enum FileContent {
    /// `fileWithUri`: where the content can be fetched.
    Uri(String),
    /// `fileWithBytes`: the content, base64 text kept verbatim.
    Bytes(Base64Bytes),
}

/// A file (P0 `FilePart`): `{"fileWithUri"|"fileWithBytes":..,"mimeType":..,"name":..}`.
///
/// `name` is not in P0 @ v0.3.0 but is in the later 0.3 proto the official SDK sends (field 4).
#[derive(Debug, Clone, PartialEq)]
pub struct FilePart {
    /// The content, by reference or by value.
    pub file: FileContent,
    /// `mimeType`.
    pub mime_type: Option<String>,
    /// `name` (later 0.3 proto; absent from P0 @ v0.3.0).
    pub name: Option<String>,
}

impl Serialize for FilePart {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 1 + usize::from(self.mime_type.is_some()) + usize::from(self.name.is_some());
        let mut m = s.serialize_map(Some(n))?;
        match &self.file {
            FileContent::Uri(u) => m.serialize_entry("fileWithUri", u)?,
            FileContent::Bytes(b) => m.serialize_entry("fileWithBytes", b)?,
        }
        if let Some(mt) = &self.mime_type {
            m.serialize_entry("mimeType", mt)?;
        }
        if let Some(n) = &self.name {
            m.serialize_entry("name", n)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FilePart {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FilePart;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a FilePart object with fileWithUri or fileWithBytes")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FilePart, A::Error> {
                let mut file: Option<(&'static str, FileContent)> = None;
                let mut mime_type: Option<Option<String>> = None;
                let mut name: Option<Option<String>> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "fileWithUri" | "file_with_uri" => {
                            if let Some(v) = map.next_value::<Option<String>>()? {
                                let c = FileContent::Uri(v);
                                set_oneof(&mut file, "fileWithUri", c, "FilePart")?;
                            }
                        }
                        "fileWithBytes" | "file_with_bytes" => {
                            if let Some(v) = map.next_value::<Option<Base64Bytes>>()? {
                                let c = FileContent::Bytes(v);
                                set_oneof(&mut file, "fileWithBytes", c, "FilePart")?;
                            }
                        }
                        "mimeType" | "mime_type" => {
                            if mime_type.is_some() {
                                return Err(de::Error::duplicate_field("mimeType"));
                            }
                            mime_type = Some(map.next_value()?);
                        }
                        "name" => {
                            if name.is_some() {
                                return Err(de::Error::duplicate_field("name"));
                            }
                            name = Some(map.next_value()?);
                        }
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let (_, file) = file.ok_or_else(|| {
                    de::Error::custom("FilePart needs one of `fileWithUri`, `fileWithBytes`")
                })?;
                Ok(FilePart {
                    file,
                    mime_type: mime_type.flatten(),
                    name: name.flatten(),
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for FilePart {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "v03.rest.FilePart".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A file (P0 `FilePart`): exactly one of fileWithUri, fileWithBytes.",
            "type": "object",
            "properties": {
                "fileWithUri": {"type": "string", "description": "Where the content can be fetched."},
                "fileWithBytes": {"type": "string", "format": "byte", "description": "The content, base64."},
                "mimeType": {"type": "string", "description": "MIME type of the content."},
                "name": {"type": "string", "description": "File name (later 0.3 proto)."}
            },
            "oneOf": [
                {"required": ["fileWithUri"]},
                {"required": ["fileWithBytes"]}
            ]
        })
    }
}

/// Structured content (P0 `DataPart`): `{"data":{..}}`, an object (`google.protobuf.Struct`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.DataPart"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["data"])))]
pub struct DataPart {
    /// `data`: the structured content.
    #[serde(default)]
    pub data: Metadata,
}
