//! `a2a_translate`: lossless A2A 0.3 <-> 1.0 translation that refuses what it cannot carry.
//!
//! Everything works on the typed models of [`a2a_types`] (no JSON re-parse per field):
//!
//! - [`to_v1`] and [`to_v03`]: one function per type (part, message, task, events,
//!   push configs, send options, requests, results, push delivery bodies, cards, errors), for
//!   the 0.3 JSON-RPC dialect; their `rest` submodules do the same for the 0.3 HTTP+JSON
//!   dialect (ProtoJSON of the 0.3 proto).
//! - [`StreamTranslator`]: 1.0 -> 0.3 streams, synthesizing `final: true` on the last status.
//! - [`rpc`]: typed JSON-RPC calls/results of both versions ([`V03Request`], [`V1Request`],
//!   [`V03Result`], [`V1Result`]) and the method-name map ([`Method`]).
//! - [`Policy`]: strict (refuse, the default) or SDK-compatible where the spec leaves a choice.
//! - [`Untranslatable`]: a refusal `{ path, reason }`; [`Untranslatable::jsonrpc_error_v1`] /
//!   [`Untranslatable::jsonrpc_error_v03`] build the -32004 `a2a_untranslatable` error.
//! - [`CardTranslation`]: a translated card, what was left out and whether signatures were dropped.
//!
//! Conventions shared with the official SDKs: a non-object 1.0 `data` part travels in 0.3 as
//! `{"value": X}` with `metadata.data_part_compat = true` and is unwrapped on the way back.
//! See `docs/translation.md` for every hazard and decision.
//!
//! ```
//! use a2a_translate::{Policy, V1Request, to_v03, to_v1};
//! use serde_json::json;
//!
//! // A 1.0 JSON-RPC call, parsed once into its typed params ...
//! let call = V1Request::parse("SendMessage", Some(json!({
//!     "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": [1, 2]}]}
//! }))).unwrap();
//! // ... translated for a 0.3 agent ...
//! let old = to_v03::request(call.clone(), Policy::Strict).unwrap();
//! assert_eq!(old.method_name(), "message/send");
//! let params = old.params().unwrap();
//! assert_eq!(params["message"]["parts"][0]["data"], json!({"value": [1, 2]}));
//! assert_eq!(params["message"]["parts"][0]["metadata"]["data_part_compat"], true);
//! // ... and back, exactly.
//! assert_eq!(to_v1::request(old, Policy::Strict).unwrap(), call);
//!
//! // What 0.3 cannot carry is refused with a path.
//! let call = V1Request::parse("SendMessage", Some(json!({
//!     "message": {"messageId": "m-1", "role": "ROLE_USER",
//!                 "parts": [{"text": "hi", "filename": "a.txt"}]}
//! }))).unwrap();
//! let err = to_v03::request(call, Policy::Strict).unwrap_err();
//! assert_eq!(err.to_string(),
//!     "params.message.parts[0].filename: A2A 0.3 text parts carry no filename");
//! ```
//!
//! Why each dependency is there: docs/architecture.md, "Dependencies".

mod card;
mod error;
mod errors;
mod path;
mod policy;
mod rest;
pub mod rpc;
mod stream;
pub mod to_v03;
pub mod to_v1;

pub use error::{
    CardTranslation, DOMAIN, Omission, REASON_UNTRANSLATABLE, REASON_UPSTREAM_UNTRANSLATABLE, Side,
    UNTRANSLATABLE_CODE, Untranslatable,
};
pub use errors::reason_of;
pub use policy::Policy;
pub use rpc::{ErrorObject, Method, V1Request, V1Result, V03Request, V03Result};
pub use stream::{Emitted, StreamTranslator};

/// The reserved part-metadata key of the `{"value": X}` data-part convention.
pub const DATA_PART_COMPAT: &str = "data_part_compat";
