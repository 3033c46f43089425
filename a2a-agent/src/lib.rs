//! `a2a_agent`: serve a handler as an A2A agent over JSON-RPC and HTTP+JSON (both protocol
//! versions, SSE streams), with tasks, cancellation, limits, auth and push notifications.
//!
//! A streaming agent that reports progress, asks for input when it lacks some, and returns an
//! artifact; then a client (`a2a_client`) that streams from it:
//!
//! ```
//! use a2a_agent::prelude::*;
//! use a2a_client::A2aClient;
//! use a2a_types::v1::{SendMessageRequest, StreamResponse as Event};
//! use futures::StreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let card = AgentCard::identity("greeter", "Greets by name", "1.0.0");
//! let handler = handler_fn(|ctx: RequestContext| async move {
//!     let name = ctx.text();
//!     if name.trim().is_empty() {
//!         // The task pauses in TASK_STATE_INPUT_REQUIRED; the caller answers on the same task.
//!         return Ok(Reply::input_required("What is your name?"));
//!     }
//!     ctx.emit("looking up a greeting...").await; // a progress status (TASK_STATE_WORKING)
//!     let card = Artifact::new(vec![Part::text(format!("Hello, {name}!"))]);
//!     ctx.emit_artifact(card, false, true).await;
//!     Ok(Reply::State(TaskState::Completed, None))
//! });
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let server = AgentServer::new(card, handler)
//!     .validate_auth(false) // local only: this card declares no security scheme
//!     .serve(listener)
//!     .await?;
//!
//! let client = A2aClient::connect(server.url()).await?;
//! // No name: the stream ends with the task waiting for input.
//! let mut events = client.stream(SendMessageRequest::new(Message::user_text(""))).await?;
//! let (mut task_id, mut state) = (String::new(), TaskState::Unspecified);
//! while let Some(event) = events.next().await {
//!     if let Event::StatusUpdate(s) = event? {
//!         (task_id, state) = (s.task_id, s.status.state);
//!     }
//! }
//! assert_eq!(state, TaskState::InputRequired);
//! // The answer continues the same task: progress, the artifact, completion.
//! let answer = Message::user_text("Ada").with_task_id(task_id);
//! let mut events = client.stream(SendMessageRequest::new(answer)).await?;
//! let (mut progress, mut greeting, mut last) = (0, String::new(), TaskState::Unspecified);
//! while let Some(event) = events.next().await {
//!     match event? {
//!         Event::StatusUpdate(s) if s.status.state == TaskState::Working => progress += 1,
//!         Event::StatusUpdate(s) => last = s.status.state,
//!         Event::ArtifactUpdate(a) => greeting = a.artifact.parts[0].as_text().unwrap().into(),
//!         _ => {}
//!     }
//! }
//! assert!(progress >= 1);
//! assert_eq!(greeting, "Hello, Ada!");
//! assert_eq!(last, TaskState::Completed);
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! The surface (everything else is internal and hidden from these docs):
//! - [`prelude`]: what a handler author imports.
//! - Handler API ([`handler`]): [`Handler`], [`handler_fn`], [`RequestContext`] (the message,
//!   progress, artifacts, cancellation), [`Reply`], [`HandlerError`], [`SubTask`],
//!   [`ExtensionHandler`]; [`delegate`]: hand work to another agent ([`RequestContext::delegate`]:
//!   progress forwarded, cancel propagated); [`exec`]: serve a command; [`demo`]: an echo agent.
//! - The builder ([`server`]): [`AgentServer`] (card, handler, [`AgentConfig`], store, auth,
//!   metrics), [`ServerHandle`]; the card ([`card`]): [`AgentCard`]; settings: [`config`].
//! - Stores ([`store`]): [`TaskStore`], [`MemoryStore`], `SqliteStore` (feature `sqlite`),
//!   `PostgresStore` (feature `postgres`: one database several replicas share).
//! - Auth ([`auth`]): [`Authenticator`]; `oidc` (feature `oidc`): OAuth 2.0 / OIDC tokens.
//! - Errors ([`error`]): [`A2aError`], [`ErrorKind`], [`ServeError`]; the model: [`model`].
//!
//! Features (default: none of them; docs/agent.md, "Features"):
//!
//! | feature | adds |
//! | --- | --- |
//! | `http2` | HTTP/2: h2c (prior knowledge) beside HTTP/1.1 on the listener, HTTP/2 (ALPN `h2`) on push and delegation calls; without it HTTP/1.1 only |
//! | `sqlite` | the SQLite stores (`sqlite_path`): tasks, replayable events, push configs, sends |
//! | `postgres` | the PostgreSQL stores (`store = "postgres://…"`, `PostgresStore`): the same, in one database replicas share |
//! | `oidc` | OAuth 2.0 / OIDC bearer tokens (JWKS, introspection) |
//! | `grpc` | the A2A 1.0 gRPC binding on the same port (`grpc = true`), with `http2` |
//! | `prometheus` | `GET /metrics` ([`AgentServer::metrics`], `metrics::install`) |
//! | `otel` | OTLP trace export ([`otel`]); without it the span helpers are no-ops |
//! | `cli` | the `a2a-agent` binary (flags, TOML settings, logs) and all of the above |
//! | `jemalloc` | jemalloc as the binary's allocator (in `cli`) |
//!
//! A setting that needs a feature the build left out (`sqlite_path`, `store = "postgres://…"`,
//! `grpc`, `oidc_*`) is refused at start with the feature's name. Why each dependency is there:
//! docs/architecture.md, "Dependencies".
#![warn(missing_docs)]

// The modules by layer, top to bottom: each imports only what lies on its layer or below
// (docs/architecture.md). Modules marked `#[doc(hidden)]` are the runtime's internals, public
// only for the workspace's gateway and tests; they are not part of the supported API.

// The HTTP server, its pipeline and bindings.
pub mod server;
// The operations in 1.0 terms, and the state they run on.
#[doc(hidden)]
pub mod ops;
mod state;
// The task runtime.
#[doc(hidden)]
pub mod tasks;

// The handler API, and what is built on it.
pub mod delegate;
#[doc(hidden)]
pub mod delegation;
pub mod demo;
pub mod exec;
pub mod handler;
pub mod prelude;

// Push delivery, authentication, the card, replay logs.
pub mod auth;
pub mod card;
#[doc(hidden)]
pub mod push;
#[doc(hidden)]
pub mod replay;
#[cfg(feature = "postgres")]
#[doc(hidden)]
pub mod replay_pg;

// Task stores, configuration, token validation, the protocol edge, the typed read of sends.
pub mod config;
#[doc(hidden)]
pub mod edge;
#[cfg(feature = "oidc")]
pub mod oidc;
pub mod store;
mod typed_send;

// The ground: the caller, errors, the model, byte bounds, the listener, the SSRF guard, CORS.
#[doc(hidden)]
pub mod bounds;
#[doc(hidden)]
pub mod caller;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli_tools;
#[doc(hidden)]
pub mod cors;
pub mod error;
mod json_size;
#[doc(hidden)]
pub mod listen;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod logs;
pub mod metrics;
pub mod model;
#[doc(hidden)]
pub mod net_guard;
#[cfg_attr(not(feature = "otel"), path = "otel_off.rs")]
pub mod otel;
#[doc(hidden)]
pub mod settings;

pub use auth::Authenticator;
pub use caller::CallerProfile;
pub use card::AgentCard;
pub use config::AgentConfig;
pub use delegate::{Child, Delegate, DelegateError};
pub use error::{A2aError, ErrorKind};
pub use handler::{
    ExtensionHandler, FnHandler, Handler, HandlerError, Reply, RequestContext, SubTask, handler_fn,
};
pub use server::{AgentServer, ServeError, ServerHandle};
#[cfg(feature = "postgres")]
pub use store::PostgresStore;
#[cfg(feature = "sqlite")]
pub use store::SqliteStore;
pub use store::{MemoryStore, TaskStore};
pub use tasks::recovery::{REPLICA_LOST, RESTARTED};

// Paths of the previous layout, kept for one release (also `auth::CallerProfile` and
// `tasks::Emitter`, named in their modules).

/// Protocol version negotiation: [`edge::version`].
#[doc(hidden)]
pub use edge::version as negotiate;
/// The edge's request parsers as pure functions: [`server::parse`].
#[doc(hidden)]
pub use server::parse;
/// Event fan-out to subscribers: [`tasks::fanout`].
#[doc(hidden)]
pub use tasks::fanout;
/// Idempotent sends: [`tasks::idempotency`].
#[doc(hidden)]
pub use tasks::idempotency;
