//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p conformance --test integration <file>::`.

mod interop_features;
mod interop_harness;
mod parser_fuzz;
mod runner;
