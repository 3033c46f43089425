//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-client --test integration <file>::`.

mod auth;
mod cli;
mod cli_resume;
mod discovery;
mod grpc;
mod grpc_tls;
mod history;
mod interop_sdk;
mod resume;
mod retry;
mod select_table;
mod wire;
