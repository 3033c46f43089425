//! The gRPC binding of A2A 1.0 (feature `grpc`): the service's rpc table, the one conversion
//! between protobuf messages and the 1.0 JSON models of [`crate::v1`], a `tonic` codec, and
//! errors as `google.rpc.Status` ([`status`]).
//!
//! How the messages are converted: the 1.0 JSON form *is* ProtoJSON of `a2a.proto` (the spec's
//! ADR-001), and [`crate::v1`] models exactly that JSON. So instead of generated prost structs plus
//! hand-written field-by-field mappings, a message is transcoded between its protobuf bytes and
//! its ProtoJSON value by `prost-reflect` against the descriptor of `a2a.proto` (oneofs for
//! parts and payloads, `Struct` metadata, enum names, RFC 3339 timestamps, base64 bytes: all
//! the ProtoJSON rules in one library), and the JSON value to and from [`crate::v1`] by serde.
//! Round trips over the JSON fixtures (`tests/grpc_roundtrip.rs`) hold it lossless.
//!
//! Why a checked-in descriptor and not a build script: `proto/a2a_v1.binpb` is the
//! `FileDescriptorSet` of `proto/a2a.proto`, compiled by `protox` (pure Rust, no system `protoc`)
//! through `cargo xtask proto`; `cargo xtask test` fails when it is stale. Users of the crate
//! build neither `protox` nor generated code.
//!
//! Only the 1.0 service (`lf.a2a.v1.A2AService`) is described here. The 0.3 service
//! (`a2a.v1.A2AService`, resource-name requests) is not served or called: see `docs/agent.md`.

pub mod fault;
pub mod status;

use std::sync::OnceLock;

use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, ReflectMessage,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The full name of the 1.0 service.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The protobuf package of the 1.0 messages.
pub const PACKAGE: &str = "lf.a2a.v1";

/// The compiled `a2a.proto` (see the module docs).
const DESCRIPTOR: &[u8] = include_bytes!("../../proto/a2a_v1.binpb");

/// One rpc of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rpc {
    /// The rpc name, which is also the 1.0 JSON-RPC method name.
    pub name: &'static str,
    /// The request message (full name).
    pub request: &'static str,
    /// The response message (full name).
    pub response: &'static str,
    /// Server streaming.
    pub streaming: bool,
}

const fn rpc(
    name: &'static str,
    request: &'static str,
    response: &'static str,
    streaming: bool,
) -> Rpc {
    Rpc {
        name,
        request,
        response,
        streaming,
    }
}

/// Every rpc of `lf.a2a.v1.A2AService`.
pub const RPCS: [Rpc; 11] = [
    rpc(
        "SendMessage",
        "lf.a2a.v1.SendMessageRequest",
        "lf.a2a.v1.SendMessageResponse",
        false,
    ),
    rpc(
        "SendStreamingMessage",
        "lf.a2a.v1.SendMessageRequest",
        "lf.a2a.v1.StreamResponse",
        true,
    ),
    rpc(
        "GetTask",
        "lf.a2a.v1.GetTaskRequest",
        "lf.a2a.v1.Task",
        false,
    ),
    rpc(
        "ListTasks",
        "lf.a2a.v1.ListTasksRequest",
        "lf.a2a.v1.ListTasksResponse",
        false,
    ),
    rpc(
        "CancelTask",
        "lf.a2a.v1.CancelTaskRequest",
        "lf.a2a.v1.Task",
        false,
    ),
    rpc(
        "SubscribeToTask",
        "lf.a2a.v1.SubscribeToTaskRequest",
        "lf.a2a.v1.StreamResponse",
        true,
    ),
    rpc(
        "CreateTaskPushNotificationConfig",
        "lf.a2a.v1.TaskPushNotificationConfig",
        "lf.a2a.v1.TaskPushNotificationConfig",
        false,
    ),
    rpc(
        "GetTaskPushNotificationConfig",
        "lf.a2a.v1.GetTaskPushNotificationConfigRequest",
        "lf.a2a.v1.TaskPushNotificationConfig",
        false,
    ),
    rpc(
        "ListTaskPushNotificationConfigs",
        "lf.a2a.v1.ListTaskPushNotificationConfigsRequest",
        "lf.a2a.v1.ListTaskPushNotificationConfigsResponse",
        false,
    ),
    rpc(
        "GetExtendedAgentCard",
        "lf.a2a.v1.GetExtendedAgentCardRequest",
        "lf.a2a.v1.AgentCard",
        false,
    ),
    rpc(
        "DeleteTaskPushNotificationConfig",
        "lf.a2a.v1.DeleteTaskPushNotificationConfigRequest",
        "google.protobuf.Empty",
        false,
    ),
];

impl Rpc {
    /// The rpc named `name` (the 1.0 method name).
    pub fn named(name: &str) -> Option<&'static Rpc> {
        RPCS.iter().find(|r| r.name == name)
    }

    /// The rpc of an HTTP/2 request path `/lf.a2a.v1.A2AService/{name}`.
    pub fn of_path(path: &str) -> Option<&'static Rpc> {
        let name = path
            .strip_prefix('/')?
            .strip_prefix(SERVICE)?
            .strip_prefix('/')?;
        Self::named(name)
    }

    /// The request path, `/lf.a2a.v1.A2AService/{name}`.
    pub fn path(&self) -> String {
        format!("/{SERVICE}/{}", self.name)
    }

    /// A codec for the server side: decodes the request, encodes the response.
    pub fn server_codec(&self) -> Result<JsonCodec, Status> {
        Ok(JsonCodec {
            encode: descriptor(self.response)?,
            decode: descriptor(self.request)?,
            decodes_requests: true,
        })
    }

    /// A codec for the client side: encodes the request, decodes the response.
    pub fn client_codec(&self) -> Result<JsonCodec, Status> {
        Ok(JsonCodec {
            encode: descriptor(self.request)?,
            decode: descriptor(self.response)?,
            decodes_requests: false,
        })
    }
}

/// A message that could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message_type}: {detail}")]
pub struct ConvertError {
    /// The protobuf message type.
    pub message_type: String,
    /// What went wrong.
    pub detail: String,
}

impl From<ConvertError> for Status {
    fn from(e: ConvertError) -> Self {
        Status::internal(e.to_string())
    }
}

fn pool() -> Result<&'static DescriptorPool, ConvertError> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(DESCRIPTOR).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| ConvertError {
            message_type: "a2a_v1.binpb".into(),
            detail: e.clone(),
        })
}

/// The descriptor of the message `full_name` (`lf.a2a.v1.Task`, `google.protobuf.Empty`).
pub fn descriptor(full_name: &str) -> Result<MessageDescriptor, ConvertError> {
    pool()?
        .get_message_by_name(full_name)
        .ok_or_else(|| ConvertError {
            message_type: full_name.into(),
            detail: "not in a2a.proto".into(),
        })
}

fn err(desc: &MessageDescriptor, e: impl std::fmt::Display) -> ConvertError {
    ConvertError {
        message_type: desc.full_name().into(),
        detail: e.to_string(),
    }
}

/// ProtoJSON value -> protobuf message. Members unknown to the proto are ignored (they have no
/// field to travel in); everything else must have the proto's type.
pub fn json_to_message(
    desc: &MessageDescriptor,
    json: &Value,
) -> Result<DynamicMessage, ConvertError> {
    let opts = DeserializeOptions::new().deny_unknown_fields(false);
    DynamicMessage::deserialize_with_options(desc.clone(), json, &opts).map_err(|e| err(desc, e))
}

/// Protobuf message -> ProtoJSON value (camelCase names, enum names, default fields omitted).
/// Numbers of `google.protobuf.Value` (a double) that are whole and exact are written as integers,
/// as the JSON they came from had them (`3`, not `3.0`).
pub fn message_to_json(msg: &DynamicMessage) -> Result<Value, ConvertError> {
    let mut v = serde_json::to_value(msg).map_err(|e| err(&msg.descriptor(), e))?;
    whole_numbers(&mut v);
    Ok(v)
}

/// Largest integer a double holds exactly (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

fn whole_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() <= EXACT
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(whole_numbers),
        Value::Object(o) => o.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// ProtoJSON value -> protobuf bytes of `full_name`.
pub fn encode_json(full_name: &str, json: &Value) -> Result<Vec<u8>, ConvertError> {
    Ok(json_to_message(&descriptor(full_name)?, json)?.encode_to_vec())
}

/// Protobuf bytes of `full_name` -> ProtoJSON value.
pub fn decode_json(full_name: &str, bytes: &[u8]) -> Result<Value, ConvertError> {
    let desc = descriptor(full_name)?;
    let msg = DynamicMessage::decode(desc.clone(), bytes).map_err(|e| err(&desc, e))?;
    message_to_json(&msg)
}

/// A [`crate::v1`] value -> protobuf bytes of `full_name`.
pub fn to_proto<T: Serialize>(full_name: &str, value: &T) -> Result<Vec<u8>, ConvertError> {
    let json = serde_json::to_value(value).map_err(|e| ConvertError {
        message_type: full_name.into(),
        detail: e.to_string(),
    })?;
    encode_json(full_name, &json)
}

/// Protobuf bytes of `full_name` -> a [`crate::v1`] value.
pub fn from_proto<T: DeserializeOwned>(full_name: &str, bytes: &[u8]) -> Result<T, ConvertError> {
    let json = decode_json(full_name, bytes)?;
    serde_json::from_value(json).map_err(|e| ConvertError {
        message_type: full_name.into(),
        detail: e.to_string(),
    })
}

/// A `tonic` codec whose items are ProtoJSON values: it encodes one message type and decodes
/// another (see [`Rpc::server_codec`], [`Rpc::client_codec`]).
#[derive(Debug, Clone)]
pub struct JsonCodec {
    encode: MessageDescriptor,
    decode: MessageDescriptor,
    /// Server side: what it decodes is the caller's request (bad input is INVALID_ARGUMENT).
    decodes_requests: bool,
}

impl Codec for JsonCodec {
    type Encode = Value;
    type Decode = Value;
    type Encoder = JsonEncoder;
    type Decoder = JsonDecoder;

    fn encoder(&mut self) -> JsonEncoder {
        JsonEncoder(self.encode.clone())
    }

    fn decoder(&mut self) -> JsonDecoder {
        JsonDecoder {
            desc: self.decode.clone(),
            requests: self.decodes_requests,
        }
    }
}

/// The encoding half of [`JsonCodec`].
#[derive(Debug, Clone)]
pub struct JsonEncoder(MessageDescriptor);

impl Encoder for JsonEncoder {
    type Item = Value;
    type Error = Status;

    fn encode(&mut self, item: Value, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        let msg = json_to_message(&self.0, &item)?;
        msg.encode(dst)
            .map_err(|e| Status::internal(format!("{}: {e}", self.0.full_name())))
    }
}

/// The decoding half of [`JsonCodec`].
#[derive(Debug, Clone)]
pub struct JsonDecoder {
    desc: MessageDescriptor,
    requests: bool,
}

impl Decoder for JsonDecoder {
    type Item = Value;
    type Error = Status;

    /// A request (server side) that does not decode, or has a value ProtoJSON cannot carry, is
    /// the caller's INVALID_ARGUMENT with the field's path ([`fault`]), never INTERNAL. An
    /// answer (client side) that does not is the server's fault: INTERNAL
    /// [`UNREADABLE_ANSWER`], with the path too.
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Value>, Status> {
        use prost::bytes::Buf as _;
        let bytes = src.copy_to_bytes(src.remaining());
        let desc = &self.desc;
        let msg = match DynamicMessage::decode(desc.clone(), bytes.clone()) {
            Ok(m) => m,
            Err(e) => {
                let at = fault::wire_fault(desc, &bytes);
                return Err(unreadable(desc, self.requests, at, &e.to_string()));
            }
        };
        match message_to_json(&msg) {
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(unreadable(
                desc,
                self.requests,
                fault::value_fault(&msg),
                &e.detail,
            )),
        }
    }
}

/// The `ErrorInfo` reason of the status a client's decoder gives an answer it cannot read
/// (domain [`UNREADABLE_DOMAIN`]); see [`is_unreadable_answer`].
pub const UNREADABLE_ANSWER: &str = "UNREADABLE_ANSWER";
/// The `ErrorInfo` domain of [`UNREADABLE_ANSWER`]: this implementation's, not the A2A one.
pub const UNREADABLE_DOMAIN: &str = "a2a-rs.dev";

/// Whether `s` is a client decoder's own status for an answer it could not read (not an error
/// the server sent).
pub fn is_unreadable_answer(s: &Status) -> bool {
    use tonic_types::StatusExt;
    s.get_error_details()
        .error_info()
        .is_some_and(|i| i.reason == UNREADABLE_ANSWER && i.domain == UNREADABLE_DOMAIN)
}

/// The status of a message that cannot be read, with the field's path in the message: a
/// request is the caller's `InvalidParamsError` (INVALID_ARGUMENT, with a
/// `google.rpc.BadRequest` violation); an answer is INTERNAL [`UNREADABLE_ANSWER`].
fn unreadable(
    desc: &MessageDescriptor,
    request: bool,
    at: Option<fault::Fault>,
    detail: &str,
) -> Status {
    use crate::error::A2aError;
    let (path, why) = match at {
        Some((path, why)) => (
            Some(if path.is_empty() {
                "$".to_owned()
            } else {
                path
            }),
            why,
        ),
        None => (None, detail.to_owned()),
    };
    let message = match &path {
        Some(p) => format!("invalid {}: {p}: {why}", desc.full_name()),
        None => format!("invalid {}: {why}", desc.full_name()),
    };
    if !request {
        use tonic_types::{ErrorDetails, StatusExt};
        let message = crate::elide::message(&message).into_owned();
        let details = ErrorDetails::with_error_info(
            UNREADABLE_ANSWER,
            UNREADABLE_DOMAIN,
            std::collections::HashMap::new(),
        );
        return Status::with_error_details(tonic::Code::Internal, message, details);
    }
    let mut e = A2aError::invalid_params(message);
    if let Some(p) = path {
        e = e.with_field_violation(p, why);
    }
    status::to_status(&e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rpc_is_in_the_descriptor() {
        let pool = pool().expect("descriptor decodes");
        let service = pool.get_service_by_name(SERVICE).expect("service");
        let names: Vec<String> = service.methods().map(|m| m.name().to_string()).collect();
        assert_eq!(names.len(), RPCS.len());
        for m in service.methods() {
            let r = Rpc::named(m.name()).expect("rpc in the table");
            assert_eq!(r.request, m.input().full_name());
            assert_eq!(r.response, m.output().full_name());
            assert_eq!(r.streaming, m.is_server_streaming());
            assert!(!m.is_client_streaming());
        }
    }

    #[test]
    fn unreadable_requests_are_the_callers_and_answers_the_servers() {
        let desc = descriptor("lf.a2a.v1.GetTaskRequest").expect("descriptor");
        let at = Some(("id".to_owned(), "not valid UTF-8".to_owned()));
        let s = unreadable(&desc, true, at.clone(), "decode error");
        assert_eq!(s.code(), tonic::Code::InvalidArgument);
        assert!(
            s.message().contains("id: not valid UTF-8"),
            "{}",
            s.message()
        );
        let e = status::from_status(&s);
        assert_eq!(e.kind, crate::error::ErrorKind::InvalidParams);
        assert_eq!(e.field_violations[0].field, "id");
        assert!(!is_unreadable_answer(&s));
        let s = unreadable(&desc, false, at, "decode error");
        assert_eq!(s.code(), tonic::Code::Internal);
        assert!(is_unreadable_answer(&s));
        // A server's status naming the same reason in the A2A domain is not this client's own.
        let forged = status::to_status(&crate::error::A2aError::internal("x"));
        assert!(!is_unreadable_answer(&forged));
    }

    #[test]
    fn paths() {
        let r = Rpc::of_path("/lf.a2a.v1.A2AService/GetTask").expect("known");
        assert_eq!(r.name, "GetTask");
        assert_eq!(r.path(), "/lf.a2a.v1.A2AService/GetTask");
        assert!(Rpc::of_path("/a2a.v1.A2AService/GetTask").is_none());
        assert!(Rpc::of_path("/lf.a2a.v1.A2AService/Nope").is_none());
    }
}
