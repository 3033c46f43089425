//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-agent --test integration <file>::`.

mod agent;
mod agent_edge;
mod blocking;
#[cfg(feature = "cli")]
mod camel_names;
mod camel_wire;
mod common;
mod delegation;
mod edge_service;
mod error_forms;
mod framing;
#[cfg(feature = "grpc")]
mod grpc;
#[cfg(feature = "grpc")]
mod grpc_errors;
mod hardening;
mod header_deadline;
mod idempotent;
mod interop;
mod isolation;
mod library;
#[cfg(feature = "cli")]
mod logs;
mod long_values;
mod memory;
#[cfg(feature = "cli")]
mod metrics;
mod more;
#[cfg(feature = "oidc")]
mod oidc;
#[cfg(feature = "cli")]
mod otlp;
#[cfg(feature = "cli")]
mod probes;
mod push;
mod push_guard;
#[cfg(feature = "cli")]
mod push_outbox;
#[cfg(feature = "cli")]
mod recovery;
#[cfg(feature = "cli")]
mod reload;
mod replicas;
#[cfg(all(feature = "postgres", feature = "cli"))]
mod replicas_fence;
#[cfg(feature = "postgres")]
mod replicas_live;
#[cfg(all(feature = "postgres", feature = "cli"))]
mod replicas_procs;
#[cfg(feature = "postgres")]
mod replicas_push;
mod resume;
#[cfg(feature = "cli")]
mod settings;
#[cfg(feature = "cli")]
mod shutdown;
mod slow_clients;
mod store_bounds;
mod store_suite;
mod turn_store;
mod typed_send;
mod wire;
