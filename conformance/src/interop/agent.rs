//! [`PyAgent`]: a reference agent of one SDK, started on a free port and killed on drop.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::child::{Tail, push_tail, python_env, tail_text};
use super::sdk::Sdk;

/// How long [`PyAgent::start`] waits for the `LISTENING` line.
pub const AGENT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running reference agent (`interop/agents/<sdk>_agent.py`), killed on drop.
///
/// The agent serves its card at `{url}/.well-known/agent-card.json`, JSON-RPC at `{url}/` and
/// HTTP+JSON under `{url}` (1.0 paths, and `/v1/...` for 0.3); see `interop/README.md` for the
/// scripted behaviours (`echo X`, `stream N`, `slow [S]`, `input`, `fail`, `message X`).
#[derive(Debug)]
pub struct PyAgent {
    sdk: Sdk,
    url: String,
    child: Child,
    // Held open: the agent exits when this pipe closes (also when the test process dies).
    stdin: Option<ChildStdin>,
    stderr: Tail,
}

impl PyAgent {
    /// Starts the agent of `sdk` with default options. Call
    /// [`ensure_venvs`](super::ensure_venvs) first.
    pub fn start(sdk: Sdk) -> Result<PyAgent> {
        Self::start_with(sdk, &[])
    }

    /// Starts the agent with extra command-line arguments (e.g. `["--no-compat"]` for the 1.x
    /// agent to serve protocol 1.0 only, `["--log-level", "info"]`).
    pub fn start_with(sdk: Sdk, args: &[&str]) -> Result<PyAgent> {
        let python = sdk.python();
        if !python.exists() {
            bail!(
                "{} missing: call interop::ensure_venvs() first",
                python.display()
            );
        }
        let mut cmd = Command::new(&python);
        cmd.arg(sdk.agent_script())
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        python_env(&mut cmd);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("spawning {}", sdk.agent_script().display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("agent stdout")?;
        let stderr_pipe = child.stderr.take().context("agent stderr")?;
        let stderr: Tail = Arc::new(Mutex::new(VecDeque::new()));
        {
            let tail = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr_pipe).lines().map_while(|l| l.ok()) {
                    push_tail(&tail, line);
                }
            });
        }
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            // Keep draining stdout after the LISTENING line so the agent never blocks on it.
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if let Some(url) = line.strip_prefix("LISTENING ")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let mut agent = PyAgent {
            sdk,
            url: String::new(),
            child,
            stdin,
            stderr,
        };
        match rx.recv_timeout(AGENT_START_TIMEOUT) {
            Ok(url) => {
                agent.url = url;
                Ok(agent)
            }
            Err(_) => {
                let status = agent.child.try_wait().ok().flatten();
                // Give the stderr thread a moment to collect the traceback.
                std::thread::sleep(Duration::from_millis(200));
                bail!(
                    "{:?} agent did not print LISTENING (exit: {status:?}); stderr:\n{}",
                    sdk,
                    tail_text(&agent.stderr)
                )
            }
        }
    }

    /// Async form of [`PyAgent::start`] (spawns on a blocking thread).
    pub async fn start_async(sdk: Sdk) -> Result<PyAgent> {
        tokio::task::spawn_blocking(move || PyAgent::start(sdk))
            .await
            .context("agent start task panicked")?
    }

    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Which SDK this agent runs.
    pub fn sdk(&self) -> Sdk {
        self.sdk
    }

    /// The last lines the agent wrote on stderr (its logs), for assertion messages.
    pub fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }
}

impl Drop for PyAgent {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
