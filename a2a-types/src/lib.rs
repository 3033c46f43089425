//! `a2a_types`: serde models of the A2A (Agent2Agent) protocol, versions 0.3 and 1.0, a parse
//! that reports JSON paths, and (feature `schema`) JSON Schemas and a strict validator.
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
//! // Parse with the JSON path of a failure (default features) ...
//! let back: SendMessageResponse = a2a_types::strict::parse(&json).unwrap();
//! assert_eq!(back, resp);
//! let err = a2a_types::strict::parse::<SendMessageResponse>(
//!     r#"{"task": {"id": "t", "status": {"state": true}}}"#).unwrap_err();
//! assert_eq!(err.path, "task.status.state");
//! // ... and, with the `schema` feature, strict validation (every violation).
//! let bad = serde_json::json!({"task": {"id": "t", "status": {"state": "DONE"}}});
//! let v = a2a_types::strict::validate::<SendMessageResponse>(&bad);
//! assert_eq!(v[0].to_string(), "task.status.state: bad enum value \"DONE\"");
//! ```
//!
//! Translating a message to or from A2A 0.3 is the companion crate `a2ars-translate`
//! (`a2a_translate`), whose docs open with that example.
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
//! - [`strict`]: the path-reporting parse, and (feature `schema`) the strict validator (every
//!   unknown member, missing REQUIRED field and bad enum value, with its JSON path).
//! - `grpc` (feature `grpc`): the 1.0 gRPC binding's rpc table, protobuf <-> 1.0 JSON
//!   conversion, `tonic` codec and `google.rpc.Status` errors.
//!
//! Features (default: none of them; the default build is the serde models and the parse):
//!
//! | feature | adds |
//! | --- | --- |
//! | `schema` | `schemars::JsonSchema` on every type, and the strict validator that walks the schemas |
//! | `grpc` | the gRPC binding's protobuf conversion (`prost-reflect` against the checked-in descriptor) |
//! | `time` | [`timestamp::Timestamp`] from and to `time::OffsetDateTime` (the parsing and formatting are the crate's own) |
//!
//! Why each dependency is there: docs/architecture.md, "Dependencies".

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
