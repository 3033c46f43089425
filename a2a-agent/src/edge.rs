//! The one protocol edge of the agent and the gateway: the HTTP-level pieces both use, over the
//! vocabulary of [`a2a_types::version`] and [`a2a_types::envelope`].
//!
//! - [`version`]: `A2A-Version` from the header or query parameter, negotiated against what an
//!   interface serves (none or empty = 0.3, patch ignored, refusals);
//! - [`media`]: the request's content type and the answer's;
//! - [`routes`]: the HTTP+JSON route tables of 1.0 (with tenant prefix) and 0.3 (`/v1`);
//! - [`sse`]: SSE framing (one JSON document per event, error events, heartbeats).
//!
//! The 0.3 translation edge of the agent (0.3 wire forms <-> the runtime's 1.0 model) lives here
//! too, crate-private.

pub mod media;
pub mod routes;
pub mod sse;
mod v03;
pub mod version;

pub(crate) use v03::*;
pub use version::{Version, negotiate, requested};
