//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-types --test integration <file>::`.

//! Modules that need a feature are compiled with it only (`--features schema,grpc`, or
//! `--all-features`; the workspace's test run has every feature): the strict validator and the
//! JSON Schemas are the `schema` feature, the protobuf conversions `grpc`.

// The conformance crate's fixture registry, case model and spec loader, shared with its runner.
#[cfg(feature = "schema")]
#[allow(dead_code)]
#[path = "../../conformance/src/model.rs"]
mod model;
#[cfg(feature = "schema")]
#[allow(dead_code)]
#[path = "../../conformance/src/registry.rs"]
mod registry;
#[cfg(feature = "schema")]
#[allow(dead_code, unused_imports)]
#[path = "../../conformance/src/spec/mod.rs"]
mod spec;

#[cfg(feature = "grpc")]
mod grpc_roundtrip;
#[cfg(feature = "schema")]
mod schemas;
#[cfg(feature = "schema")]
mod spec_examples;
#[cfg(feature = "schema")]
mod strict_table;
mod v03_jsonrpc;
mod v03_proptest;
mod v03_rest;
#[cfg(feature = "schema")]
mod v03_schema;
#[cfg(feature = "schema")]
mod v03_strict;
#[cfg(feature = "schema")]
mod v1_examples;
mod v1_proptest;
#[cfg(feature = "schema")]
mod v1_strict;
