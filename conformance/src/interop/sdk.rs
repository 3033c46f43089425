//! Which SDK ([`Sdk`]), where its venv and scripts are, and setting the venvs up.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use anyhow::{Context, Result, anyhow};

/// Which official Python SDK to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sdk {
    /// `a2a-sdk` 1.x (1.3.0): protocol 1.0, and 0.3 through its compat layer.
    V1,
    /// `a2a-sdk` 0.3.x (0.3.26): protocol 0.3 only.
    V03,
    /// `a2a-sdk` 1.0.3, the release the DVARA API names: the 1.x scripts run on it unchanged.
    V103,
}

impl Sdk {
    /// The two current releases (1.3.0 and 0.3.26), for table-driven tests.
    pub const ALL: [Sdk; 2] = [Sdk::V1, Sdk::V03];

    /// The venv directory name under `.venv/` (`sdk1`, `sdk03` or `sdk103`).
    pub fn venv_name(self) -> &'static str {
        match self {
            Sdk::V1 => "sdk1",
            Sdk::V03 => "sdk03",
            Sdk::V103 => "sdk103",
        }
    }

    /// The name of its scripts under `interop/agents` and `interop/clients`: a2a-sdk 1.0.3 runs
    /// the 1.x ones (`sdk1_agent.py`, `sdk1_client.py`).
    pub fn script_name(self) -> &'static str {
        match self {
            Sdk::V1 | Sdk::V103 => "sdk1",
            Sdk::V03 => "sdk03",
        }
    }

    /// Whether it is an a2a-sdk 1.x release (protobuf dumps, `TASK_STATE_*`).
    pub fn is_1x(self) -> bool {
        self.script_name() == "sdk1"
    }

    /// The venv's Python interpreter.
    pub fn python(self) -> PathBuf {
        repo_root()
            .join(".venv")
            .join(self.venv_name())
            .join("bin")
            .join("python")
    }

    /// The reference agent script.
    pub fn agent_script(self) -> PathBuf {
        repo_root()
            .join("interop/agents")
            .join(format!("{}_agent.py", self.script_name()))
    }

    /// The client driver script.
    pub fn client_script(self) -> PathBuf {
        repo_root()
            .join("interop/clients")
            .join(format!("{}_client.py", self.script_name()))
    }
}

/// The repository root (parent of this crate's manifest directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// Creates or reuses the venvs by running `python3 interop/setup_venvs.py`, once per process.
///
/// The interpreter is `$A2A_INTEROP_PYTHON` if set, else `python3`. The script's progress goes to
/// this process's stderr. Later calls return the first call's outcome without re-running it.
pub fn ensure_venvs() -> Result<()> {
    static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let python = std::env::var("A2A_INTEROP_PYTHON").unwrap_or_else(|_| "python3".into());
        let script = repo_root().join("interop/setup_venvs.py");
        let status = Command::new(&python)
            .arg(&script)
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .status()
            .map_err(|e| format!("cannot run {python} {}: {e}", script.display()))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{} failed: {status}", script.display()))
        }
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

/// Async form of [`ensure_venvs`] (runs it on a blocking thread).
pub async fn ensure_venvs_async() -> Result<()> {
    tokio::task::spawn_blocking(ensure_venvs)
        .await
        .context("ensure_venvs task panicked")?
}
