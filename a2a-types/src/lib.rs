//! `a2a_types`: serde models of the A2A protocol, versions 0.3 and 1.0.
//!
//! Module map (owners keep these stable; see `docs/architecture.md`):
//! - [`v1`]: ProtoJSON models of A2A 1.0 (`a2a.proto`, package `lf.a2a.v1`).
//! - [`v03`]: A2A 0.3 in its JSON-RPC dialect, and [`v03::rest`] its HTTP+JSON (ProtoJSON of the 0.3 proto) dialect.
//! - [`jsonrpc`]: JSON-RPC 2.0 envelopes and the method name sets of both versions.
//! - [`error`]: every A2A error with codes, names, reasons and both versions' wire forms.
//! - [`version`]: `A2A-Version`, extension headers, media types and protocol binding names.
//! - [`timestamp`]: lenient timestamp parsing, UTC `Z` output.
//! - [`binary`]: base64 `bytes` kept verbatim (hazard H6).
//! - [`strict`]: the strict validator (every unknown member, missing REQUIRED field and bad enum value, with its JSON path).

pub mod binary;
pub mod error;
pub mod jsonrpc;
pub(crate) mod macros;
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
