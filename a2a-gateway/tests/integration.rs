//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-gateway --test integration <file>::`.

mod admin_audit;
mod ard;
mod cancel_propagation;
mod common;
mod console_browser;
mod console_security;
mod console_speed;
mod console_views;
mod crash;
mod demo;
mod error_forms;
mod extensions;
mod gateway;
mod governance_approval;
mod governance_cli;
mod governance_followup;
mod governance_interop;
mod governance_kill;
mod governance_loops;
mod governance_pii;
mod governance_policy;
mod governance_policy_table;
mod idempotent_sends;
mod interop;
mod interop_peers;
mod interop_table;
mod isolation;
mod limits;
mod pairings;
mod pii_table;
mod push_callback;
mod push_delivery;
mod registration;
mod resume;
mod rust_peer;
mod shutdown;
mod slow_clients;
mod stall;
mod store;
mod store_speed;
mod trust;
mod trust_own;
mod trust_push;
mod unauthenticated;
