//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-agent --test integration <file>::`.

mod agent;
mod agent_edge;
mod blocking;
mod camel_names;
mod camel_wire;
mod common;
mod delegation;
mod edge_service;
mod error_forms;
mod framing;
mod grpc;
mod grpc_errors;
mod hardening;
mod header_deadline;
mod idempotent;
mod interop;
mod isolation;
mod library;
mod logs;
mod long_values;
mod memory;
mod metrics;
mod more;
mod oidc;
mod otlp;
mod probes;
mod push;
mod push_guard;
mod push_outbox;
mod recovery;
mod reload;
mod resume;
mod settings;
mod shutdown;
mod slow_clients;
mod store_bounds;
mod turn_store;
mod typed_send;
mod wire;
