//! `a2a_client`: an A2A client for protocol versions 0.3 and 1.0 over JSON-RPC and HTTP+JSON.
//!
//! - [`discovery`]: fetch `/.well-known/agent-card.json` with `A2A-Version`, HTTP caching and a size limit.
//! - [`select`]: pick the interface (url, binding, version, tenant) from a card, as the spec says.
//! - [`sse`]: an incremental Server-Sent Events parser over a byte stream.
//! - [`auth`]: API keys, bearer tokens, OAuth2 client credentials with token caching and refresh.
//!
//! ```
//! use a2a_client::select::{select, Binding, CardInterfaces, Speaks, Version};
//!
//! let card = br#"{"supportedInterfaces": [
//!     {"url": "grpc.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
//!     {"url": "https://example.com/a2a", "protocolBinding": "HTTP+JSON",
//!      "protocolVersion": "1.0", "tenant": "acme"}]}"#;
//! let chosen = select(&CardInterfaces::from_json(card)?, &Speaks::all())?;
//! assert_eq!(chosen.binding, Binding::HttpJson);
//! assert_eq!(chosen.version, Version::V1);
//! assert_eq!(chosen.tenant.as_deref(), Some("acme"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Why each dependency is here:
//! - `a2a-types`: the wire models of both versions; `a2a-translate`: reaching 0.3 peers in 1.0 terms.
//! - `reqwest`: HTTP client (rustls, HTTP/2, streaming bodies, connection pooling); `http`, `bytes`: its types.
//! - `futures`, `tokio`: async streams and runtime; `serde`, `serde_json`: JSON; `url`: URLs.
//! - `thiserror`: typed errors; `tracing`: diagnostics; `uuid`: message ids; `base64`: file parts.
//! - `clap`, `anyhow`: the `a2a` CLI only.
//!
//! (`eventsource-stream` is not used: the SSE parser is ours, with size limits and tests.)
pub mod auth;
pub mod client;
mod compat;
pub mod discovery;
pub mod error;
pub mod headers;
pub mod select;
pub mod sse;
pub mod transport;

pub use client::{A2aClient, ClientBuilder};
pub use error::{A2aError, ClientError, ErrorKind};
pub use select::{Binding, SelectedInterface, Speaks, Version};
