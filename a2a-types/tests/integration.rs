//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-types --test integration <file>::`.

// The conformance crate's fixture registry, case model and spec loader, shared with its runner.
#[allow(dead_code)]
#[path = "../../conformance/src/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "../../conformance/src/registry.rs"]
mod registry;
#[allow(dead_code)]
#[path = "../../conformance/src/spec.rs"]
mod spec;

#[cfg(feature = "grpc")]
mod grpc_roundtrip;
mod schemas;
mod spec_examples;
mod strict_table;
mod v03_jsonrpc;
mod v03_proptest;
mod v03_rest;
mod v03_schema;
mod v03_strict;
mod v1_examples;
mod v1_proptest;
mod v1_strict;
