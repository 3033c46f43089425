//! Python SDK interop harness: the official `a2a-sdk` (1.3.0, 1.0.3 and 0.3.x) as reference
//! agents and clients for Rust integration tests.
//!
//! The Python side lives in `interop/` at the repository root (read `interop/README.md`: it lists
//! the scripted agent behaviours, the client ops, and the exact JSON each SDK version sends per
//! binding). This module starts those scripts from Rust:
//!
//! - [`ensure_venvs`] creates or reuses `.venv/sdk1`, `.venv/sdk03` and `.venv/sdk103` (once per
//!   process; the script itself is idempotent and takes a file lock, so parallel test binaries
//!   are fine).
//! - [`PyAgent::start`] runs a reference agent on `127.0.0.1:<free port>` and gives its base URL;
//!   the agent is killed when the value is dropped, and it also exits by itself when the test
//!   process dies (it watches its stdin pipe).
//! - [`run_client`] / [`run_client_async`] run a client driver with a JSON scenario and return
//!   one JSON value per output line; [`ClientRun`] reads lines as they arrive and can feed ops
//!   one at a time (`--interactive`).
//!
//! Which call to use: if the test itself serves HTTP on a tokio runtime (e.g. our agent under test,
//! or a webhook receiver) and the Python client talks to it, use the async functions
//! ([`run_client_async`], [`ClientRun`]); the blocking [`run_client`] would stall a
//! current-thread runtime and deadlock.
//!
//! ```no_run
//! use conformance::interop::{self, Binding, PyAgent, Sdk};
//! use serde_json::json;
//!
//! interop::ensure_venvs()?;
//! let agent = PyAgent::start(Sdk::V1)?;
//! let lines = interop::run_client(
//!     Sdk::V1,
//!     agent.url(),
//!     Binding::JsonRpc,
//!     json!([{"op": "send", "text": "echo hi"}, {"op": "get", "taskId": "$last.task_id"}]),
//! )?;
//! assert_eq!(lines[0]["ok"], true);
//! assert_eq!(lines[1]["result"]["status"]["state"], "TASK_STATE_COMPLETED");
//! # Ok::<(), anyhow::Error>(())
//! ```

mod agent;
mod child;
mod client;
mod dump;
mod sdk;

/// The binding a client driver uses: the toolkit's one binding vocabulary.
pub use a2a_types::version::Binding;

pub use agent::{AGENT_START_TIMEOUT, PyAgent};
pub use client::{
    CLIENT_TIMEOUT, ClientOptions, ClientOutput, ClientRun, DRIVER_BINDINGS, driver_arg,
    run_client, run_client_async, run_client_async_with, run_client_with,
};
pub use dump::{event_kind, status_text, task_state};
pub use sdk::{Sdk, ensure_venvs, ensure_venvs_async, repo_root};
