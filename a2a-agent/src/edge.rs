//! The one protocol edge of the agent and the gateway: the HTTP-level pieces both use, over the
//! vocabulary of [`a2a_types::version`] and [`a2a_types::envelope`].
//!
//! - [`version`]: `A2A-Version` from the header or query parameter, negotiated against what an
//!   interface serves (none or empty = 0.3, patch ignored, refusals);
//! - [`media`]: the request's content type and the answer's;
//! - [`routes`]: the HTTP+JSON route tables of 1.0 (with tenant prefix) and 0.3 (`/v1`);
//! - [`grpc`]: the gRPC edge (content type, codec, unary and streaming wiring);
//! - [`sse`]: SSE framing (one JSON document per event, error events, heartbeats);
//! - `errors`: an [`A2aError`](crate::A2aError) in the form of the caller's version
//!   ([`A2aError::jsonrpc_error`](crate::A2aError::jsonrpc_error),
//!   [`A2aError::rest_body`](crate::A2aError::rest_body)).
//!
//! The 0.3 translation edge (0.3 wire forms <-> the 1.0 model) lives here too; the 0.3
//! HTTP+JSON pieces the gateway's 0.3 REST entry also uses are public: [`v03_rest_send`],
//! [`v03_rest_push_request`], [`v03_rest_result`] and [`V03Stream`].

mod errors;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod media;
pub(crate) mod names;
pub mod routes;
pub mod sse;
mod v03;
pub mod version;

pub(crate) use v03::*;
pub use v03::{V03Stream, v03_rest_push_request, v03_rest_result, v03_rest_send};
pub use version::{Version, negotiate, requested};
