//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-client --test integration <file>::`.

//!
//! Modules that need a feature are compiled with it only (`--all-features`; the workspace's test
//! run has every feature): the `a2a` binary is the `cli` feature, the gRPC transport `grpc`.

mod auth;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod cli_resume;
mod discovery;
#[cfg(feature = "grpc")]
mod grpc;
#[cfg(feature = "grpc")]
mod grpc_tls;
mod history;
mod interop_sdk;
mod resume;
mod retry;
mod select_table;
mod wire;
