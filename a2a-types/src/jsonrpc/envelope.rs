//! The request, response and error objects of JSON-RPC 2.0 and their serde and schema forms.

use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::id::Id;

/// The `jsonrpc` member value.
pub const JSONRPC_VERSION: &str = "2.0";

fn some_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Id>, D::Error> {
    Id::deserialize(d).map(Some)
}

/// A JSON-RPC request or notification. `P` is the params type (`Value` by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id; `None` (absent) for a notification.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_id"
    )]
    pub id: Option<Id>,
    /// The method name.
    pub method: String,
    /// The params (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A request with `id`, `method` and `params`.
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: P) -> Self {
        JsonRpcRequest {
            jsonrpc: JSONRPC_VERSION.into(),
            id: Some(id.into()),
            method: method.into(),
            params: Some(params),
        }
    }

    /// A request without params (e.g. `GetExtendedAgentCard`).
    pub fn without_params(id: impl Into<Id>, method: impl Into<String>) -> Self {
        JsonRpcRequest {
            jsonrpc: JSONRPC_VERSION.into(),
            id: Some(id.into()),
            method: method.into(),
            params: None,
        }
    }

    /// The id to answer with (`null` for notifications).
    pub fn response_id(&self) -> Id {
        self.id.clone().unwrap_or(Id::Null)
    }

    /// True if the request has no `id` member.
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }
}

impl JsonRpcRequest<Value> {
    /// Decodes `params` as `T` (missing params decode from `{}`), reporting the JSON path on
    /// failure.
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, crate::strict::ParseError> {
        let v = self
            .params
            .clone()
            .unwrap_or_else(|| Value::Object(Default::default()));
        crate::strict::parse_value(v)
    }
}

/// The JSON-RPC error object: `{"code":..,"message":..,"data"?:..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct JsonRpcError {
    /// The error code (`-32001` ...).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Details: an array of `@type` objects in 1.0, anything in 0.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl fmt::Display for JsonRpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for JsonRpcError {}

/// A response's payload: exactly one of `result` and `error`.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonRpcPayload<R> {
    /// `result`.
    Result(R),
    /// `error`.
    Error(JsonRpcError),
}

/// A JSON-RPC response. `R` is the result type (`Value` by default).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcResponse<R = Value> {
    /// The request's id (`null` if it could not be determined).
    pub id: Id,
    /// The result or the error.
    pub payload: JsonRpcPayload<R>,
}

impl<R> JsonRpcResponse<R> {
    /// A success response.
    pub fn success(id: Id, result: R) -> Self {
        JsonRpcResponse {
            id,
            payload: JsonRpcPayload::Result(result),
        }
    }

    /// An error response.
    pub fn error(id: Id, error: JsonRpcError) -> Self {
        JsonRpcResponse {
            id,
            payload: JsonRpcPayload::Error(error),
        }
    }

    /// The result, if this is a success.
    pub fn result(&self) -> Option<&R> {
        match &self.payload {
            JsonRpcPayload::Result(r) => Some(r),
            JsonRpcPayload::Error(_) => None,
        }
    }

    /// The error, if this is an error response.
    pub fn error_object(&self) -> Option<&JsonRpcError> {
        match &self.payload {
            JsonRpcPayload::Result(_) => None,
            JsonRpcPayload::Error(e) => Some(e),
        }
    }

    /// The result or the error.
    pub fn into_result(self) -> Result<R, JsonRpcError> {
        match self.payload {
            JsonRpcPayload::Result(r) => Ok(r),
            JsonRpcPayload::Error(e) => Err(e),
        }
    }
}

impl<R: Serialize> Serialize for JsonRpcResponse<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        m.serialize_entry("id", &self.id)?;
        match &self.payload {
            JsonRpcPayload::Result(r) => m.serialize_entry("result", r)?,
            JsonRpcPayload::Error(e) => m.serialize_entry("error", e)?,
        }
        m.end()
    }
}

impl<'de, R: Deserialize<'de>> Deserialize<'de> for JsonRpcResponse<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<R>(std::marker::PhantomData<R>);
        impl<'de, R: Deserialize<'de>> Visitor<'de> for V<R> {
            type Value = JsonRpcResponse<R>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC 2.0 response object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut id = None;
                let mut result = None;
                let mut error = None;
                let mut version = None;
                const KEYS: &[&str] = &["jsonrpc", "id", "result", "error"];
                while let Some(k) = map.next_key_seed(crate::macros::KeySeed(KEYS))? {
                    match k.map(|i| KEYS[i]).unwrap_or("") {
                        "jsonrpc" => version = Some(map.next_value::<String>()?),
                        "id" => id = Some(map.next_value::<Id>()?),
                        "result" => result = Some(map.next_value::<R>()?),
                        "error" => error = Some(map.next_value::<Option<JsonRpcError>>()?),
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                if let Some(v) = version
                    && v != JSONRPC_VERSION
                {
                    return Err(de::Error::custom(format_args!(
                        "jsonrpc must be \"2.0\", got {v:?}"
                    )));
                }
                let id = id.unwrap_or(Id::Null);
                let payload = match (result, error.flatten()) {
                    (Some(_), Some(_)) => {
                        return Err(de::Error::custom(
                            "JSON-RPC response has both result and error",
                        ));
                    }
                    (Some(r), None) => JsonRpcPayload::Result(r),
                    (None, Some(e)) => JsonRpcPayload::Error(e),
                    (None, None) => {
                        return Err(de::Error::custom(
                            "JSON-RPC response has neither result nor error",
                        ));
                    }
                };
                Ok(JsonRpcResponse { id, payload })
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[cfg(feature = "schema")]
impl<R: JsonSchema> JsonSchema for JsonRpcResponse<R> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("JsonRpcResponse_{}", R::schema_name()).into()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        format!("{}::JsonRpcResponse<{}>", module_path!(), R::schema_id()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let r = g.subschema_for::<R>();
        let e = g.subschema_for::<JsonRpcError>();
        let id = g.subschema_for::<Id>();
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": id,
                "result": r,
                "error": e
            },
            "required": ["jsonrpc", "id"],
            "oneOf": [{"required": ["result"]}, {"required": ["error"]}]
        })
    }
}
