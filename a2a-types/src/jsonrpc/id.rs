//! [`Id`]: the JSON-RPC id (string, number or null) and its serde and schema forms.

use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::de;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON-RPC id: string, number or null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Id {
    /// A string id.
    Str(String),
    /// A number id (kept as sent, integer or not).
    Num(serde_json::Number),
    /// `null` (also used in responses when the request id could not be determined).
    #[default]
    Null,
}

impl Id {
    /// A numeric id.
    pub fn num(n: i64) -> Self {
        Id::Num(n.into())
    }

    /// A string id.
    pub fn str(s: impl Into<String>) -> Self {
        Id::Str(s.into())
    }

    /// Reads an id from a JSON value; `None` if it is not a string, number or null.
    pub fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::String(s) => Some(Id::Str(s.clone())),
            Value::Number(n) => Some(Id::Num(n.clone())),
            Value::Null => Some(Id::Null),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Str(s) => Value::String(s.clone()),
            Id::Num(n) => Value::Number(n.clone()),
            Id::Null => Value::Null,
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Str(s) => write!(f, "{s:?}"),
            Id::Num(n) => write!(f, "{n}"),
            Id::Null => f.write_str("null"),
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::num(n)
    }
}
impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::Str(s.to_owned())
    }
}
impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::Str(s)
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Str(v) => s.serialize_str(v),
            Id::Num(n) => n.serialize(s),
            Id::Null => s.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Id::Str(s)),
            Value::Number(n) => Ok(Id::Num(n)),
            Value::Null => Ok(Id::Null),
            _ => Err(de::Error::custom(
                "JSON-RPC id must be a string, number or null",
            )),
        }
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for Id {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JsonRpcId".into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::", "JsonRpcId").into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "number", "null"]})
    }
}
