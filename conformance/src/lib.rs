//! `conformance`: A2A fixtures and the runner that replays them.
//!
//! - [`interop`]: the official Python SDK interop harness (venvs, reference agents, client drivers).
//! - [`fixture`]: the fixture format, one case per JSON file under `conformance/fixtures/<suite>/`.
//! - [`matcher`]: the matcher engine (`"$uuid"`, `"$timestamp"`, `"$absent"`, captures, ...).
//! - [`model`]: model cases (parse / serialize / strict-validate a document), replayed in-process.
//! - [`registry`]: every top-level `a2a-types` type by dialect and name, with its schema.
//! - [`spec`]: extraction and classification of the JSON examples of both specification texts.
//! - [`tls`]: a CA generated per test and a TLS listener in front of a plain server (gRPC and
//!   HTTP over TLS in the client and gateway tests).
//! - [`wire`]: wire cases, replayed over HTTP against a target binary started on loopback.
//! - [`grpc`]: the gRPC form of the wire cases (derived from their JSON-RPC 1.0 form), replayed over h2c.
//! - [`runner`]: runs cases and prints `PASS`/`FAIL` lines and the closing `N passed, N failed` line.
//!
//! The `conformance` binary is the command-line runner (`cargo xtask conformance`), and the
//! `export-schemas` binary writes `schemas/` (`cargo xtask schema`). See `docs/conformance.md`.
//!
//! ```
//! use conformance::matcher::{match_value, Vars};
//! use serde_json::json;
//!
//! let expected = json!({"id": "$uuid", "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": "$timestamp"}});
//! let actual = json!({"id": "9229e770-767c-417b-a0b0-f0741243c589",
//!                     "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": "2025-10-28T10:30:00.000Z"}});
//! assert!(match_value(&expected, &actual, &mut Vars::new()).is_empty());
//! ```
//!
//! Dependencies: `a2a-types` (the models under test), `serde`/`serde_json` (fixtures), `schemars`
//! (schema export), `jsonschema` (schema checks), `regex` (matchers, URL discovery), `reqwest` +
//! `tokio` (the wire replays), `tonic` + `hyper-util` + `http` + `a2a-types`'s `grpc` feature (the
//! gRPC replays), `clap` (the binaries' flags), `anyhow` (binary error reporting), `rcgen` +
//! `tokio-rustls` (the tests' CA and TLS listener, [`tls`]; the same aws-lc-rs rustls as reqwest).

pub mod fixture;
pub mod grpc;
pub mod interop;
pub mod matcher;
pub mod model;
pub mod registry;
pub mod runner;
pub mod spec;
pub mod tls;
pub mod wire;
