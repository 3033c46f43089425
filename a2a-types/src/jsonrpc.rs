//! JSON-RPC 2.0 envelopes (S1 §9, S0 §6.11) and both versions' method name sets.
//!
//! - [`JsonRpcRequest`]: `{"jsonrpc":"2.0","id":..,"method":..,"params":..}`; `id` absent means a
//!   notification, and [`Id::Null`] is distinct from absent.
//! - [`JsonRpcResponse`]: `{"jsonrpc":"2.0","id":..,"result":..}` or `..."error":{..}}`.
//! - [`V1Method`] (`SendMessage`, ...) and [`V03Method`] (`message/send`, ...). The names never
//!   collide, so [`Method::parse`] also tells the version.
//! - [`parse_request`] classifies bad bodies as parse errors (-32700) or invalid requests
//!   (-32600), keeping the `id` when it could be read.

use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::version::ProtocolVersion;

/// The `jsonrpc` member value.
pub const JSONRPC_VERSION: &str = "2.0";

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

/// Why a JSON-RPC request body was refused before dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestParseError {
    /// The id to answer with (`null` if it could not be read).
    pub id: Id,
    /// `-32700` (not JSON) or `-32600` (not a valid request object).
    pub code: i64,
    /// A description naming what was wrong.
    pub message: String,
}

impl RequestParseError {
    /// True for `-32700` (the body is not JSON).
    pub fn is_parse_error(&self) -> bool {
        self.code == crate::error::ErrorKind::JsonParse.code()
    }

    /// The matching A2A error.
    pub fn to_a2a_error(&self) -> crate::error::A2aError {
        crate::error::A2aError::new(
            crate::error::ErrorKind::from_code(self.code),
            self.message.clone(),
        )
    }
}

impl fmt::Display for RequestParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RequestParseError {}

/// Parses a JSON-RPC request body: invalid JSON is `-32700`; a non-object, `jsonrpc` other than
/// `"2.0"`, a missing or non-string `method`, an id that is not string/number/null, or `params`
/// that is not an object or array is `-32600`.
pub fn parse_request(body: &[u8]) -> Result<JsonRpcRequest<Value>, RequestParseError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| RequestParseError {
        id: Id::Null,
        code: crate::error::ErrorKind::JsonParse.code(),
        message: format!("invalid JSON: {e}"),
    })?;
    request_from_value(v)
}

/// [`parse_request`] for an already parsed JSON value.
pub fn request_from_value(v: Value) -> Result<JsonRpcRequest<Value>, RequestParseError> {
    let invalid = |id: &Id, m: String| RequestParseError {
        id: id.clone(),
        code: crate::error::ErrorKind::InvalidRequest.code(),
        message: m,
    };
    let Value::Object(mut o) = v else {
        return Err(invalid(&Id::Null, "request must be a JSON object".into()));
    };
    let id = match o.remove("id") {
        None => None,
        Some(v) => match Id::from_value(&v) {
            Some(id) => Some(id),
            None => {
                return Err(invalid(
                    &Id::Null,
                    "id: must be a string, number or null".into(),
                ));
            }
        },
    };
    let rid = id.clone().unwrap_or(Id::Null);
    match o.get("jsonrpc") {
        Some(Value::String(s)) if s == JSONRPC_VERSION => {}
        Some(other) => {
            return Err(invalid(
                &rid,
                format!("jsonrpc: must be \"2.0\", got {other}"),
            ));
        }
        None => return Err(invalid(&rid, "missing required member jsonrpc".into())),
    }
    let method = match o.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(invalid(&rid, "method: must be a string".into())),
        None => return Err(invalid(&rid, "missing required member method".into())),
    };
    let params = match o.remove("params") {
        None => None,
        Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
        Some(Value::Null) => None,
        Some(_) => {
            return Err(invalid(
                &rid,
                "params: must be an object or an array".into(),
            ));
        }
    };
    Ok(JsonRpcRequest {
        jsonrpc: JSONRPC_VERSION.into(),
        id,
        method,
        params,
    })
}

macro_rules! method_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal $(stream $st:tt)?,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)*
        }

        impl $name {
            /// Every method.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }

            /// Looks a method up by its exact wire name.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$v),)* _ => None }
            }

            /// True for the methods answered with an SSE stream.
            pub const fn is_streaming(self) -> bool {
                match self { $($name::$v => method_enum!(@st $($st)?),)* }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownMethod;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_name(s).ok_or_else(|| UnknownMethod(s.to_owned()))
            }
        }
    };
    (@st) => { false };
    (@st $t:tt) => { true };
}

/// A method name no version defines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("method not found: {0}")]
pub struct UnknownMethod(pub String);

method_enum! {
    /// A2A 1.0 JSON-RPC methods (= gRPC rpc names, S1 §5.3).
    V1Method {
        /// `SendMessage`.
        SendMessage => "SendMessage",
        /// `SendStreamingMessage` (SSE).
        SendStreamingMessage => "SendStreamingMessage" stream !,
        /// `GetTask`.
        GetTask => "GetTask",
        /// `ListTasks`.
        ListTasks => "ListTasks",
        /// `CancelTask`.
        CancelTask => "CancelTask",
        /// `SubscribeToTask` (SSE).
        SubscribeToTask => "SubscribeToTask" stream !,
        /// `CreateTaskPushNotificationConfig`.
        CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
        /// `GetTaskPushNotificationConfig`.
        GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
        /// `ListTaskPushNotificationConfigs`.
        ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
        /// `DeleteTaskPushNotificationConfig`.
        DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
        /// `GetExtendedAgentCard`.
        GetExtendedAgentCard => "GetExtendedAgentCard",
    }
}

method_enum! {
    /// A2A 0.3 JSON-RPC methods (S0 §7).
    V03Method {
        /// `message/send`.
        MessageSend => "message/send",
        /// `message/stream` (SSE).
        MessageStream => "message/stream" stream !,
        /// `tasks/get`.
        TasksGet => "tasks/get",
        /// `tasks/cancel`.
        TasksCancel => "tasks/cancel",
        /// `tasks/resubscribe` (SSE).
        TasksResubscribe => "tasks/resubscribe" stream !,
        /// `tasks/pushNotificationConfig/set`.
        PushConfigSet => "tasks/pushNotificationConfig/set",
        /// `tasks/pushNotificationConfig/get`.
        PushConfigGet => "tasks/pushNotificationConfig/get",
        /// `tasks/pushNotificationConfig/list`.
        PushConfigList => "tasks/pushNotificationConfig/list",
        /// `tasks/pushNotificationConfig/delete`.
        PushConfigDelete => "tasks/pushNotificationConfig/delete",
        /// `agent/getAuthenticatedExtendedCard`.
        GetAuthenticatedExtendedCard => "agent/getAuthenticatedExtendedCard",
    }
}

impl V03Method {
    /// The 1.0 method with the same meaning.
    pub const fn to_v1(self) -> V1Method {
        match self {
            V03Method::MessageSend => V1Method::SendMessage,
            V03Method::MessageStream => V1Method::SendStreamingMessage,
            V03Method::TasksGet => V1Method::GetTask,
            V03Method::TasksCancel => V1Method::CancelTask,
            V03Method::TasksResubscribe => V1Method::SubscribeToTask,
            V03Method::PushConfigSet => V1Method::CreateTaskPushNotificationConfig,
            V03Method::PushConfigGet => V1Method::GetTaskPushNotificationConfig,
            V03Method::PushConfigList => V1Method::ListTaskPushNotificationConfigs,
            V03Method::PushConfigDelete => V1Method::DeleteTaskPushNotificationConfig,
            V03Method::GetAuthenticatedExtendedCard => V1Method::GetExtendedAgentCard,
        }
    }
}

impl V1Method {
    /// The 1.0 name (`SendMessage`): [`V1Method::as_str`].
    pub const fn v1_name(self) -> &'static str {
        self.as_str()
    }

    /// The 0.3 name (`message/send`), `None` for `ListTasks`, which 0.3 JSON-RPC lacks.
    pub const fn v03_name(self) -> Option<&'static str> {
        match self.to_v03() {
            Some(m) => Some(m.as_str()),
            None => None,
        }
    }

    /// The operation of a 1.0 name.
    pub fn from_v1_name(name: &str) -> Option<V1Method> {
        V1Method::from_name(name)
    }

    /// The operation of a 0.3 name.
    pub fn from_v03_name(name: &str) -> Option<V1Method> {
        V03Method::from_name(name).map(V03Method::to_v1)
    }

    /// Whether the operation only reads (tasks, push configs, the extended card): what a
    /// read-only credential may call (the gateway's `a2a:read` scope).
    pub const fn reads_only(self) -> bool {
        matches!(
            self,
            V1Method::GetTask
                | V1Method::ListTasks
                | V1Method::SubscribeToTask
                | V1Method::GetTaskPushNotificationConfig
                | V1Method::ListTaskPushNotificationConfigs
                | V1Method::GetExtendedAgentCard
        )
    }

    /// The 0.3 method with the same meaning (`ListTasks` has none, hazard H17).
    pub const fn to_v03(self) -> Option<V03Method> {
        Some(match self {
            V1Method::SendMessage => V03Method::MessageSend,
            V1Method::SendStreamingMessage => V03Method::MessageStream,
            V1Method::GetTask => V03Method::TasksGet,
            V1Method::ListTasks => return None,
            V1Method::CancelTask => V03Method::TasksCancel,
            V1Method::SubscribeToTask => V03Method::TasksResubscribe,
            V1Method::CreateTaskPushNotificationConfig => V03Method::PushConfigSet,
            V1Method::GetTaskPushNotificationConfig => V03Method::PushConfigGet,
            V1Method::ListTaskPushNotificationConfigs => V03Method::PushConfigList,
            V1Method::DeleteTaskPushNotificationConfig => V03Method::PushConfigDelete,
            V1Method::GetExtendedAgentCard => V03Method::GetAuthenticatedExtendedCard,
        })
    }
}

/// A method of either version (the names never collide, so the name tells the version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// A 1.0 method.
    V1(V1Method),
    /// A 0.3 method.
    V03(V03Method),
}

impl Method {
    /// Looks a method up in both sets.
    pub fn parse(s: &str) -> Option<Self> {
        V1Method::from_name(s)
            .map(Method::V1)
            .or_else(|| V03Method::from_name(s).map(Method::V03))
    }

    /// The version the method belongs to.
    pub const fn version(self) -> ProtocolVersion {
        match self {
            Method::V1(_) => ProtocolVersion::V1_0,
            Method::V03(_) => ProtocolVersion::V0_3,
        }
    }

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::V1(m) => m.as_str(),
            Method::V03(m) => m.as_str(),
        }
    }

    /// The meaning in 1.0 terms.
    pub const fn to_v1(self) -> V1Method {
        match self {
            Method::V1(m) => m,
            Method::V03(m) => m.to_v1(),
        }
    }

    /// True for the methods answered with an SSE stream.
    pub const fn is_streaming(self) -> bool {
        match self {
            Method::V1(m) => m.is_streaming(),
            Method::V03(m) => m.is_streaming(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids() {
        for v in [json!("a"), json!(1), json!(1.5), json!(null)] {
            let id: Id = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&id).unwrap(), v);
        }
        assert!(serde_json::from_value::<Id>(json!([1])).is_err());
    }

    #[test]
    fn request_null_id_vs_absent() {
        let r: JsonRpcRequest =
            serde_json::from_value(json!({"jsonrpc":"2.0","id":null,"method":"GetTask"})).unwrap();
        assert_eq!(r.id, Some(Id::Null));
        let r: JsonRpcRequest =
            serde_json::from_value(json!({"jsonrpc":"2.0","method":"GetTask"})).unwrap();
        assert!(r.is_notification());
    }

    #[test]
    fn response_forms() {
        let ok = JsonRpcResponse::success(Id::num(1), json!(null));
        let v = serde_json::to_value(&ok).unwrap();
        assert_eq!(v, json!({"jsonrpc":"2.0","id":1,"result":null}));
        let back: JsonRpcResponse = serde_json::from_value(v).unwrap();
        assert_eq!(back, ok);
        let err = JsonRpcResponse::<Value>::error(
            Id::str("x"),
            JsonRpcError {
                code: -32001,
                message: "Task not found".into(),
                data: None,
            },
        );
        let v = serde_json::to_value(&err).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","id":"x","error":{"code":-32001,"message":"Task not found"}})
        );
        assert!(
            serde_json::from_value::<JsonRpcResponse>(json!({"jsonrpc":"2.0","id":1})).is_err()
        );
        assert!(
            serde_json::from_value::<JsonRpcResponse>(
                json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}})
            )
            .is_err()
        );
    }

    #[test]
    fn parse_request_classifies() {
        assert_eq!(parse_request(b"{").unwrap_err().code, -32700);
        let e = parse_request(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#).unwrap_err();
        assert_eq!((e.code, e.id), (-32600, Id::num(7)));
        assert_eq!(parse_request(br#"[1]"#).unwrap_err().code, -32600);
        assert_eq!(
            parse_request(br#"{"jsonrpc":"2.0","id":1}"#)
                .unwrap_err()
                .code,
            -32600
        );
        assert_eq!(
            parse_request(br#"{"jsonrpc":"2.0","id":{},"method":"a"}"#)
                .unwrap_err()
                .code,
            -32600
        );
        assert_eq!(
            parse_request(br#"{"jsonrpc":"2.0","id":1,"method":"a","params":3}"#)
                .unwrap_err()
                .code,
            -32600
        );
        let r =
            parse_request(br#"{"jsonrpc":"2.0","id":"q","method":"GetTask","params":{"id":"t"}}"#)
                .unwrap();
        assert_eq!(r.method, "GetTask");
        let p: crate::v1::GetTaskRequest = r.params_as().unwrap();
        assert_eq!(p.id, "t");
    }

    #[test]
    fn methods() {
        for m in V1Method::ALL {
            assert_eq!(V1Method::from_name(m.as_str()), Some(*m));
            assert_eq!(
                Method::parse(m.as_str()).unwrap().version(),
                ProtocolVersion::V1_0
            );
        }
        for m in V03Method::ALL {
            assert_eq!(m.to_v1().to_v03(), Some(*m));
            assert_eq!(
                Method::parse(m.as_str()).unwrap().version(),
                ProtocolVersion::V0_3
            );
        }
        assert!(V1Method::SendStreamingMessage.is_streaming());
        assert!(V03Method::TasksResubscribe.is_streaming());
        assert!(!V1Method::GetTask.is_streaming());
        assert_eq!(V1Method::ListTasks.to_v03(), None);
        assert!(Method::parse("tasks/list").is_none());
    }
}
