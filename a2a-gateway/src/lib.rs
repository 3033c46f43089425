//! `a2a_gateway`: a governed A2A gateway in front of registered peer agents.
//!
//! Callers authenticate with a workspace API key and reach the peers registered in their
//! workspace at `/a2a/{agentId}` over JSON-RPC (A2A 0.3 or 1.0, both method name sets) or the
//! A2A 1.0 HTTP+JSON binding at `/a2a/{agentId}/v1/...`. The gateway reads each peer's card,
//! picks the peer's interface, checks the peer address, translates between the caller's and
//! the peer's version, enforces limits and scopes, serves a governed card and writes one audit
//! record per hop. It governs A2A extensions per workspace ([`governance::extensions`]), checks a peer's card
//! when it is registered ([`admin::registration`]), lists a key's agents as an ARD manifest ([`edge::ard`],
//! off by default) and records every admin action with its admin ([`admin::audit`]). The
//! behaviour reference is the DVARA A2A Gateway API; see `docs/gateway.md`.
//!
//! ```
//! use a2a_gateway::{config::Config, store::Store, keys::Scope, app::Gateway};
//!
//! let store = Store::open_in_memory().unwrap();
//! store.create_workspace("team", "Team").unwrap();
//! let (info, secret) = store.create_key("team", &[Scope::Read], None, None).unwrap();
//! assert!(secret.starts_with("a2agw_"));
//! assert_eq!(store.authenticate(&secret).unwrap().unwrap().key_id, info.key_id);
//! let gateway = Gateway::new(Config::default(), store).unwrap();
//! let _router = gateway.router();
//! ```
//!
//! Why each dependency is here:
//! - `axum`, `tokio`, `futures`, `async-stream`: the HTTP server, SSE and stream proxying;
//! - `reqwest`: calls to peers (cards, trust, pushes; hop requests are built with it); peers'
//!   SSE streams are read with `a2a-client`'s parser (`a2a_client::sse`);
//! - `hyper-util` (`client-legacy`), `hyper-rustls`, `rustls`, `hyper`, `http`, `http-body`,
//!   `http-body-util` (all already built for reqwest and `a2a-client`'s gRPC transport): the
//!   hops' peer requests sent through hyper-util's pooled client directly, without reqwest's
//!   per-request layers (`peer_http`; measured in docs/benchmarks.md);
//! - `rusqlite`: the embedded registry and audit store; `a2a-pg` (`tokio-postgres`,
//!   `deadpool-postgres`): the registry on PostgreSQL for replicas (`store::backend`,
//!   docs/replicas.md);
//! - `aws-lc-rs`, `subtle`, `base64`: key generation, SHA-256 at rest, HMAC page tokens,
//!   constant-time comparison, AES-256-GCM and HKDF for the card signing keys at rest;
//! - `jsonwebtoken` (aws-lc-rs, already built for `a2a-agent`): signed push JWTs of pinned agents
//!   (`trust::push_jwt`); `a2a-client`'s feature `signing`: card signatures both ways (`trust`);
//! - `serde`, `serde_json`, `toml`, `clap`: wire JSON, the config file and the command line;
//! - `regex`: the PII detectors' candidate patterns (`pii`), validated in code afterwards;
//! - `unicode-normalization` (already built for `url`, through `idna`) and
//!   `unicode-general-category` (already in the lock file, through `jsonschema`): the PII
//!   detectors read text normalised first (`pii::normalize`: NFKC per character, format
//!   characters removed, digits of every script, dashes and spaces folded), so that
//!   look-alike characters do not hide an item;
//! - `memchr` (already built for `regex`): the substring tests that let a hop skip parsing a
//!   card for extensions or signatures it does not mention;
//! - `fastrand` (already built for `tempfile`): trace, span and JSON-RPC ids, which need to be
//!   unique, not secret (secrets, tokens and approval ids come from `aws-lc-rs`);
//! - `url`: peer address checks; `time`: audit timestamps; `tracing`, `tracing-subscriber`: logs;
//! - `thiserror`, `anyhow`: error types in the library and the binary;
//! - `metrics`, `metrics-exporter-prometheus` (already built for `a2a-agent`): `/metrics`, on
//!   the agent's recorder and buckets (`a2a_agent::metrics`); `foldhash` (already built for
//!   `a2a-agent`): the hasher of the metrics' label and series maps;
//! - `tonic`, `tonic-types`, `a2a-types`' feature `grpc` (already built for `a2a-agent`): gRPC
//!   callers (`grpc_edge`), their `google.rpc.Status` errors with `ErrorInfo`;
//! - `tokio-util`: the cancellation token that ends streams and waiting calls at shutdown;
//! - `tower` (`util`, already built for `a2a-agent`): re-routing a caller path with a trailing
//!   slash through the router (`ServiceExt::oneshot`);
//! - `cel` (default features off): workspace policies in the Common Expression Language
//!   (docs/gateway/governance.md, "Policy" says why CEL and what it costs to build);
//! - `tikv-jemallocator` (feature `jemalloc`, default, binary only): the binary's allocator, chosen
//!   by measurement over glibc malloc and mimalloc (docs/benchmarks.md, "Allocator");
//! - `fantoccini` (tests only): the operator console's browser tests drive headless
//!   Chromium through chromedriver (WebDriver over loopback HTTP, no TLS features);
//! - `opentelemetry-proto`, `prost` (tests only): the trace tests' OTLP receivers decode
//!   `ExportTraceServiceRequest` and serve the collector's gRPC `TraceService`. The export
//!   itself is `a2a_agent::otel` (docs/operations.md, "Traces"): the gateway's hop spans
//!   are made through it.
//!
//! The operator console ([`console`], docs/console.md) needs no more: its HTML is written by hand
//! with one escaping function, and its stylesheet and script are embedded.

// Refusals are large but cold: boxing them would only add noise on the error paths.
#![allow(clippy::result_large_err)]
#![warn(missing_docs)]

// The layers, top to bottom (docs/architecture.md): each module imports only those below it.
pub mod admin;
pub mod app;
mod background;
pub mod cli;
pub mod config;
pub mod console;
pub mod edge;
pub mod governance;
pub mod hop;
pub mod ids;
pub mod keys;
pub mod metrics;
pub mod open;
pub(crate) mod outbound;
pub mod peer;
pub mod pii;
pub mod protocol;
pub mod push;
pub mod reload;
pub mod state;
pub mod store;
pub mod tasks;
pub mod trust;

// Paths of the previous layout, kept for one release (CHANGELOG, "Changed").
#[doc(hidden)]
pub use admin::audit as admin_audit;
#[doc(hidden)]
pub use admin::registration;
#[doc(hidden)]
pub use admin::settings as ws_settings;
#[doc(hidden)]
pub use app as server;
#[doc(hidden)]
pub use cli as admin_cmd;
#[doc(hidden)]
pub use cli::admin as admin_cli;
#[doc(hidden)]
pub use cli::demo;
#[doc(hidden)]
pub use edge::{ard, wire};
#[doc(hidden)]
pub use governance::extensions;
#[doc(hidden)]
pub use governance::step as seams;
#[doc(hidden)]
pub use hop as pipeline;
#[doc(hidden)]
pub use hop::v03_peer as peer03;
#[doc(hidden)]
pub use protocol::{errors, ops, passed, xlate};
#[doc(hidden)]
pub use tasks::ownership;
