//! The crate's integration tests, compiled as one test binary (one link instead of one per
//! file: less disk and build time). Each file is a module; run one with
//! `cargo nextest run -p a2ars-translate --test integration <file>::`.

mod common;
mod fixtures;
mod oracle;
mod roundtrip;
mod strategies;
