//! `a2a_client`: an A2A client for protocol versions 0.3 and 1.0 over JSON-RPC and HTTP+JSON
//! (SSE streams), and with the `grpc` feature 1.0 over gRPC. Every operation is in 1.0 terms;
//! a 0.3 agent is reached through `a2a-translate`.
//!
//! A client that streams (here from the `a2a-agent` demo echo agent, which this crate's tests
//! also use; any A2A agent URL works):
//!
//! ```
//! use a2a_client::A2aClient;
//! use a2a_types::v1::{Message, SendMessageRequest, StreamResponse};
//! use futures::StreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let agent = a2a_agent::AgentServer::new(a2a_agent::demo::echo_card(), a2a_agent::demo::echo_handler())
//! #     .validate_auth(false).serve(listener).await?;
//! # let url = agent.url().to_string();
//! // Card discovery and the choice of binding and version, as the spec says.
//! let client = A2aClient::connect(&url).await?;
//! let mut events = client.stream(SendMessageRequest::new(Message::user_text("hi"))).await?;
//! let mut last = None;
//! while let Some(event) = events.next().await {
//!     match event? {
//!         StreamResponse::StatusUpdate(s) => last = Some(s.status.state),
//!         StreamResponse::ArtifactUpdate(a) => println!("artifact {}", a.artifact.artifact_id),
//!         StreamResponse::Task(t) => last = Some(t.status.state),
//!         StreamResponse::Message(m) => println!("message {m:?}"),
//!     }
//! }
//! assert_eq!(last, Some(a2a_types::v1::TaskState::Completed));
//! # agent.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! The surface:
//! - [`A2aClient`] and [`ClientBuilder`] ([`client`]; see `docs/client.md`): every operation,
//!   credentials, headers, timeouts, retries ([`retry`]) and resumed streams ([`resume`]).
//! - [`discovery`]: the agent card (`/.well-known/agent-card.json`, caching, size limit);
//!   [`select`]: the interface a card offers for what this client speaks ([`Speaks`]).
//! - [`auth`]: API keys, bearer tokens, OAuth 2.0 client credentials.
//! - [`transport`]: the [`transport::Transport`] trait and its JSON-RPC, HTTP+JSON (and gRPC)
//!   implementations; [`sse`]: the Server-Sent Events parser.
//! - Errors ([`error`]): [`ClientError`], [`A2aError`], [`ErrorKind`].
//! - `signing` (feature `signing`): Agent Card signatures.
//!
//! Features (default: none of them):
//!
//! | feature | adds |
//! | --- | --- |
//! | `http2` | HTTP/2 for JSON-RPC and HTTP+JSON (ALPN `h2`); without it HTTP/1.1 |
//! | `grpc` | the 1.0 gRPC transport, plain and TLS (and `http2`) |
//! | `signing` | Agent Card signing and verification (JWS, RFC 8785) |
//! | `cli` | the `a2a` binary (`cargo install --path a2a-client --features cli`), with `grpc` |
//!
//! Without `grpc`, [`Speaks::all`] leaves gRPC out, so selection picks another interface of the
//! card. Why each dependency is there: docs/architecture.md, "Dependencies".
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
