//! `a2a_types`: serde models of the A2A (Agent2Agent) protocol, versions 0.3 and 1.0, with a
//! strict validator and JSON Schemas.
//!
//! ```
//! use a2a_types::v1::{Message, Part, SendMessageRequest, SendMessageResponse, Task};
//! use a2a_types::jsonrpc::{JsonRpcRequest, V1Method};
//!
//! // A client's first request: a JSON-RPC SendMessage with one text part.
//! let req = JsonRpcRequest::new(1, V1Method::SendMessage.as_str(),
//!     SendMessageRequest::new(Message::user_text("hello")));
//! let wire = serde_json::to_value(&req).unwrap();
//! assert_eq!(wire["params"]["message"]["role"], "ROLE_USER");
//! assert_eq!(wire["params"]["message"]["parts"][0], serde_json::json!({"text": "hello"}));
//!
//! // An agent's answer: a completed task, wrapped as the 1.0 oneof `{"task": ..}`.
//! let resp = SendMessageResponse::from(Task::completed(vec![Part::text("hi!")]));
//! let json = serde_json::to_string(&resp).unwrap();
//! assert!(json.contains("TASK_STATE_COMPLETED"));
//!
//! // Lenient parse (paths on failure) and strict validation (every violation).
//! let back: SendMessageResponse = a2a_types::strict::parse(&json).unwrap();
//! assert_eq!(back, resp);
//! let bad = serde_json::json!({"task": {"id": "t", "status": {"state": "DONE"}}});
//! let v = a2a_types::strict::validate::<SendMessageResponse>(&bad);
//! assert_eq!(v[0].to_string(), "task.status.state: bad enum value \"DONE\"");
//! ```
//!
//! Module map (owners keep these stable; see `docs/architecture.md`):
//! - [`v1`]: ProtoJSON models of A2A 1.0 (`a2a.proto`, package `lf.a2a.v1`).
//! - [`v03`]: A2A 0.3 in its JSON-RPC dialect, and [`v03::rest`] its HTTP+JSON (ProtoJSON of the 0.3 proto) dialect.
//! - [`jsonrpc`]: JSON-RPC 2.0 envelopes and the method name sets of both versions.
//! - [`path`]: strict percent-decoding of HTTP+JSON path segments.
//! - [`envelope`]: the request envelope as a server reads it, the id kept as its exact text.
//! - [`error`]: every A2A error with codes, names, reasons and both versions' wire forms.
//! - [`elide`]: how much of a caller's input an error may quote (every binding's one rule).
//! - [`version`]: `A2A-Version`, extension headers, media types and protocol binding names.
//! - [`timestamp`]: lenient timestamp parsing, UTC `Z` output.
//! - [`binary`]: base64 `bytes` kept verbatim (hazard H6).
//! - `grpc` (feature `grpc`): the 1.0 gRPC binding's rpc table, protobuf <-> 1.0 JSON
//!   conversion, `tonic` codec and `google.rpc.Status` errors.
//! - [`strict`]: the strict validator (every unknown member, missing REQUIRED field and bad enum value, with its JSON path).

//!
//! Dependencies and why they are here:
//! - `serde`, `serde_json`: the wire models are serde types; JSON values for free-form members.
//! - `serde_path_to_error`: the default parse reports the JSON path of a failure.
//! - `schemars`: JSON Schema for every type; the strict validator walks these schemas.
//! - `base64`: checking and decoding `bytes` (kept verbatim as text).
//! - `time`: timestamp parsing, normalization to UTC and formatting.
//! - `uuid`: fresh ids in the constructors (`Message::user_text`, `Task::completed`).
//! - `thiserror`: error types.
//! - Feature `grpc` only: `prost-reflect` (transcodes protobuf <-> ProtoJSON against the
//!   checked-in descriptor of `a2a.proto`, so no generated code and no build script), `prost`
//!   (the wire encoding), `tonic` (codec traits; no transport features), `tonic-types`
//!   (`google.rpc.Status` details). `protox` (dev) compiles the descriptor for
//!   `cargo xtask proto`: no system `protoc` is needed anywhere.

#![warn(missing_docs)]

/// The crate README (the program a new user copies first), compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctest;

pub mod binary;
pub mod elide;
pub mod envelope;
pub mod error;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod jsonrpc;
pub(crate) mod macros;
pub mod path;
pub mod strict;
pub mod timestamp;
pub mod v03;
pub mod v1;
pub mod version;

pub use macros::UnknownEnumValue;

/// A fresh random id (UUID v4, hyphenated) for messages, tasks, contexts and artifacts.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
