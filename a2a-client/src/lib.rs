//! `a2a_client`: an A2A client for protocol versions 0.3 and 1.0 over JSON-RPC and HTTP+JSON, and
//! 1.0 over gRPC.
//!
//! - [`discovery`]: fetch `/.well-known/agent-card.json` with `A2A-Version`, HTTP caching and a size limit.
//! - [`select`]: pick the interface (url, binding, version, tenant) from a card, as the spec says.
//! - [`sse`]: an incremental Server-Sent Events parser over a byte stream.
//! - [`auth`]: API keys, bearer tokens, OAuth2 client credentials with token caching and refresh.
//! - [`transport`]: the [`transport::Transport`] trait with JSON-RPC and HTTP+JSON implementations,
//!   each for 1.0 and (through `a2a-translate`) 0.3, and gRPC (1.0, without TLS).
//! - [`error`]: typed errors; A2A errors are classified by `ErrorInfo.reason`, then code.
//! - [`client`]: [`A2aClient`], every operation in 1.0 terms. See `docs/client.md`.
//! - [`signing`] (feature `signing`): Agent Card signatures, signing and verification.
//! - [`retry`]: automatic retries after transport failures (sends keep their `messageId`);
//!   [`resume`]: streams that resume after a dropped connection.
//!
//! ```no_run
//! use a2a_client::A2aClient;
//! use a2a_types::v1::{Message, SendMessageRequest};
//! use futures::StreamExt;
//!
//! # async fn demo() -> Result<(), a2a_client::ClientError> {
//! let client = A2aClient::connect("http://127.0.0.1:8080").await?;
//! let mut events = client.stream(SendMessageRequest::new(Message::user_text("hi"))).await?;
//! while let Some(event) = events.next().await {
//!     println!("{:?}", event?);
//! }
//! let task = client.get_task("task-id", Some(10)).await?;
//! # let _ = task;
//! # Ok(()) }
//! ```
//!
//! Selection alone (a pure function, also used by the gateway):
//!
//! ```
//! use a2a_client::select::{select, Binding, CardInterfaces, Speaks, Version};
//!
//! let card = br#"{"supportedInterfaces": [
//!     {"url": "grpc.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
//!     {"url": "https://example.com/a2a", "protocolBinding": "HTTP+JSON",
//!      "protocolVersion": "1.0", "tenant": "acme"}]}"#;
//! let card = CardInterfaces::from_json(card)?;
//! // The card's order decides: gRPC (1.0, `host:port`) comes first.
//! assert_eq!(select(&card, &Speaks::all())?.binding, Binding::Grpc);
//! // A caller that forces a binding gets the first entry of that binding.
//! let chosen = select(&card, &Speaks::only(Some(Binding::HttpJson), None))?;
//! assert_eq!(chosen.binding, Binding::HttpJson);
//! assert_eq!(chosen.version, Version::V1);
//! assert_eq!(chosen.tenant.as_deref(), Some("acme"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Why each dependency is here:
//! - `a2a-types`: the wire models of both versions; `a2a-translate`: reaching 0.3 peers in 1.0 terms.
//! - `reqwest`: HTTP client (rustls, HTTP/2, streaming bodies, connection pooling); `http`, `bytes`: its types.
//! - `futures`, `tokio`: async streams and runtime; `async-trait`: the object-safe `Transport` trait;
//!   `async-stream`: the resuming stream of [`resume`].
//! - `serde`, `serde_json`, `serde_path_to_error`: JSON with error paths; `url`: URLs.
//! - `thiserror`: typed errors; `uuid`: JSON-RPC request ids.
//! - `clap`, `anyhow`: the `a2a` CLI only.
//! - Feature `signing` ([`signing`]): `jsonwebtoken` (JWS algorithms, JWKs), `aws-lc-rs` (key
//!   generation), `serde_json_canonicalizer` (RFC 8785), `base64` (the JWS parts).
//! - `tonic` (no default features: its generic client and codec only) over `hyper-util`'s HTTP/2
//!   client (already built by reqwest): the gRPC transport; protobuf conversion is a2a-types'
//!   feature `grpc` (`prost-reflect` against the checked-in descriptor of `a2a.proto`: no
//!   generated code, no `protoc`, no build script).
//! - `hyper-rustls`, `rustls`, `rustls-platform-verifier`: gRPC over TLS ([`tls`]). tonic's TLS
//!   features would bring a second TLS stack; these are the crates reqwest already builds (same
//!   aws-lc-rs provider, same platform root store), so `https` gRPC trusts exactly what the HTTP
//!   bindings trust, extra roots included.
//!
//! (`eventsource-stream` is not used: the SSE parser is ours, with size limits and tests.)
#![warn(missing_docs)]

pub mod auth;
pub mod client;
mod compat;
pub mod delegation;
pub mod discovery;
pub mod error;
pub mod headers;
pub mod resume;
pub mod retry;
pub mod select;
#[cfg(feature = "signing")]
pub mod signing;
pub mod sse;
#[doc(hidden)]
pub mod tls;
pub mod transport;

pub use client::{A2aClient, ClientBuilder};
pub use error::{A2aError, ClientError, ErrorKind};
pub use select::{Binding, SelectedInterface, Speaks, Version};
