//! `a2a_agent`: serve any handler as an A2A agent over JSON-RPC and HTTP+JSON (and, with the
//! `grpc` setting, the 1.0 gRPC binding on the same port).
//!
//! Give it a card and a handler; it serves the card, both bindings, tasks, streaming, limits and
//! auth. Internally everything is A2A 1.0 (`a2a_types::v1`); 0.3 callers are served at the edge.
//!
//! ```
//! use a2a_agent::{AgentServer, AgentCard, Reply, handler_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let card = AgentCard::identity("greeter", "Says hello", "1.0.0");
//! let handler = handler_fn(|ctx: a2a_agent::RequestContext| async move {
//!     ctx.emit("thinking...").await;
//!     Ok(Reply::text(format!("Hello, {}!", ctx.text())))
//! });
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let server = AgentServer::new(card, handler)
//!     .validate_auth(false) // local only: no security scheme in this card
//!     .serve(listener)
//!     .await
//!     .unwrap();
//! println!("serving at {}", server.url());
//! server.shutdown().await;
//! # }
//! ```
//!
//! For a ready-made agent, [`demo::echo_handler`] with [`demo::echo_card`]. A handler hands work
//! to another agent with [`RequestContext::delegate`] (see [`delegate`]: progress forwarded,
//! cancel propagated, the child linked in the task's metadata).
//!
//! Dependencies and why:
//! - `a2a-types`: the protocol model; `a2a-translate`: 0.3 at the edge.
//! - `a2a-client`: a handler's calls to other agents ([`delegate`]: card discovery, both
//!   bindings and versions, resumed streams, the delegation chain header).
//! - `axum`, `tower`, `tower-http` (CORS), `http`, `http-body`, `http-body-util`, `bytes`: the HTTP server and
//!   bounded body reading.
//! - `tokio`, `tokio-util` (cancellation, task tracking), `tokio-stream`, `async-stream`, `futures`:
//!   the runtime, task lifecycle and SSE streams.
//! - `async-trait`: object-safe async handler, store and authenticator traits.
//! - `serde`, `serde_json`, `toml`, `clap`: wire JSON, the config file and the binary's flags.
//! - `rusqlite`: the SQLite task store; `subtle`: constant-time credential comparison.
//! - `uuid`: task/context/message ids (`fast-rng`: no syscall per id); `time`: timestamps;
//!   `base64`: opaque page tokens; `url`: query strings; `thiserror`, `anyhow`: errors.
//! - `foldhash` (already built for hashbrown): the seeded hasher of the task maps (live tasks,
//!   the memory store), several times cheaper than SipHash on task ids; `memchr` (already built
//!   for serde_json): the check that a JSON-RPC body names a send before it is read by type.
//! - `tracing`, `tracing-subscriber`: logs (JSON on request).
//! - `opentelemetry`, `opentelemetry_sdk`, `opentelemetry-otlp`, `tracing-opentelemetry`: trace
//!   export over OTLP ([`otel`], both binaries), off unless an endpoint is set: the W3C trace
//!   context propagator, the batch span processor, the HTTP/protobuf (reqwest's blocking
//!   client) and gRPC (tonic) exporters, and the layer turning `tracing` spans into OTel spans.
//! - `tikv-jemallocator` (feature `jemalloc`, default, binary only): the binary's allocator, chosen
//!   by measurement (docs/benchmarks.md, "Allocator"); embedders keep their own.
//! - `metrics`, `metrics-exporter-prometheus`: the Prometheus `/metrics` endpoint of the binary.
//! - `reqwest`: push webhooks (through [`net_guard`]), JWKS / discovery fetches and RFC 7662
//!   token introspection ([`oidc`]); `jsonwebtoken` (aws-lc-rs): JWT signature and claim checks.
//! - `aws-lc-rs` (already built for `jsonwebtoken`): SHA-256 of a send's message, which tells a
//!   retry from a different message under the same `messageId` ([`idempotency`]).
//! - `hyper`, `hyper-util`, `libc`: the shared protocol edge ([`listen`]): per-connection
//!   header/body/idle timeouts, the connection cap under `RLIMIT_NOFILE`, graceful draining.
//! - `tonic` (no default features: its generic server and codec only): the gRPC binding, served
//!   on the same hyper listener; protobuf conversion is a2a-types' feature `grpc` (`prost-reflect`
//!   against the checked-in descriptor of `a2a.proto`, compiled by `protox` through `cargo xtask
//!   proto`: no generated code, no `protoc`, no build script). Why not generated prost structs:
//!   the 1.0 JSON form is ProtoJSON of the same proto, so one descriptor-driven transcoder is the
//!   whole mapping, and the handlers keep running on the 1.0 JSON operations.
//! - `proptest` (tests only): the byte count of stored tasks checked against `serde_json` on
//!   generated tasks (`json_size`).
//! - `opentelemetry-proto`, `prost` (tests only): the trace tests' OTLP receiver decodes
//!   `ExportTraceServiceRequest` (HTTP/protobuf) and serves the collector's gRPC
//!   `TraceService`.
//! - `ipnet`: not used yet (the SSRF ranges in [`net_guard`] are matched on octets directly).
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
#[cfg(feature = "sqlite")]
pub use store::SqliteStore;
pub use store::{MemoryStore, TaskStore};
pub use tasks::recovery::RESTARTED;

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
