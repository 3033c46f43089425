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

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// How long [`PyAgent::start`] waits for the `LISTENING` line.
pub const AGENT_START_TIMEOUT: Duration = Duration::from_secs(60);
/// Default overall time limit of one client run ([`run_client`], [`run_client_async`]).
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);
/// How many stderr lines of a child are kept for error messages.
const STDERR_TAIL: usize = 200;

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

/// The binding a client driver uses: the toolkit's one binding vocabulary.
pub use a2a_types::version::Binding;

/// The bindings the Python client drivers speak, for table-driven tests.
pub const DRIVER_BINDINGS: [Binding; 2] = [Binding::JsonRpc, Binding::HttpJson];

/// The driver's `--binding` value of `binding`.
pub fn driver_arg(binding: Binding) -> &'static str {
    match binding {
        Binding::JsonRpc => "jsonrpc",
        Binding::HttpJson => "rest",
        Binding::Grpc => "grpc",
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

fn python_env(cmd: &mut Command) {
    cmd.env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(repo_root());
}

type Tail = Arc<Mutex<VecDeque<String>>>;

fn push_tail(tail: &Tail, line: String) {
    if let Ok(mut t) = tail.lock() {
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(line);
    }
}

fn tail_text(tail: &Tail) -> String {
    tail.lock()
        .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

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
    /// Starts the agent of `sdk` with default options. Call [`ensure_venvs`] first.
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

/// Options for a client driver run.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// `--binding`.
    pub binding: Binding,
    /// `--protocol-version` (1.x driver only: `"1.0"` or `"0.3"` keeps only card interfaces of
    /// that version; `None` lets the SDK choose, which prefers 1.0).
    pub protocol_version: Option<String>,
    /// `--card-path` relative to the URL (default: `/.well-known/agent-card.json`).
    pub card_path: Option<String>,
    /// `--trace`: the driver logs its HTTP traffic on stderr (see [`ClientOutput::stderr`]).
    pub trace: bool,
    /// Overall time limit; the driver is killed when it is exceeded.
    pub timeout: Duration,
}

impl ClientOptions {
    /// Defaults for a binding: no version filter, default card path, no trace, [`CLIENT_TIMEOUT`].
    pub fn new(binding: Binding) -> Self {
        ClientOptions {
            binding,
            protocol_version: None,
            card_path: None,
            trace: false,
            timeout: CLIENT_TIMEOUT,
        }
    }

    fn args(&self) -> Vec<String> {
        let mut v = vec![
            "--binding".to_string(),
            driver_arg(self.binding).to_string(),
        ];
        if let Some(p) = &self.protocol_version {
            v.push("--protocol-version".into());
            v.push(p.clone());
        }
        if let Some(p) = &self.card_path {
            v.push("--card-path".into());
            v.push(p.clone());
        }
        if self.trace {
            v.push("--trace".into());
        }
        v
    }
}

/// Everything a finished client run printed.
#[derive(Debug, Clone)]
pub struct ClientOutput {
    /// One JSON value per stdout line, in order (see `interop/README.md` for the shapes).
    pub lines: Vec<Value>,
    /// The driver's stderr (tracebacks, `--trace` output).
    pub stderr: String,
}

impl ClientOutput {
    /// The closing record of op `i` (not stream events): `{"i": i, "ok": .., ...}`.
    pub fn op(&self, i: usize) -> Option<&Value> {
        self.lines
            .iter()
            .find(|l| l["i"].as_u64() == Some(i as u64) && l.get("event").is_none())
    }

    /// The stream events of op `i`, in arrival order.
    pub fn events(&self, i: usize) -> Vec<&Value> {
        self.lines
            .iter()
            .filter(|l| l["i"].as_u64() == Some(i as u64))
            .filter_map(|l| l.get("event"))
            .collect()
    }
}

fn client_command(
    sdk: Sdk,
    url: &str,
    opts: &ClientOptions,
    interactive: bool,
) -> Result<tokio::process::Command> {
    let python = sdk.python();
    if !python.exists() {
        bail!(
            "{} missing: call interop::ensure_venvs() first",
            python.display()
        );
    }
    let mut std_cmd = Command::new(&python);
    std_cmd
        .arg(sdk.client_script())
        .arg("--url")
        .arg(url)
        .args(opts.args());
    if interactive {
        std_cmd.arg("--interactive");
    }
    python_env(&mut std_cmd);
    let mut cmd = tokio::process::Command::from(std_cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    Ok(cmd)
}

fn parse_line(line: &str) -> Result<Value> {
    serde_json::from_str(line).with_context(|| format!("client printed a non-JSON line: {line:?}"))
}

/// Runs a client driver with `scenario` (a JSON list of ops) against the agent at `url` and
/// returns its output lines. Blocking: do not call it from a runtime that must keep serving the
/// agent under test (use [`run_client_async`] there).
pub fn run_client(sdk: Sdk, url: &str, binding: Binding, scenario: Value) -> Result<Vec<Value>> {
    Ok(run_client_with(sdk, url, &ClientOptions::new(binding), scenario)?.lines)
}

/// [`run_client`] with options, returning stderr too.
pub fn run_client_with(
    sdk: Sdk,
    url: &str,
    opts: &ClientOptions,
    scenario: Value,
) -> Result<ClientOutput> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("building a runtime for run_client")?;
    rt.block_on(run_client_async_with(sdk, url, opts, scenario))
}

/// Async [`run_client`]: safe inside `#[tokio::test]`s that also serve the agent under test.
pub async fn run_client_async(
    sdk: Sdk,
    url: &str,
    binding: Binding,
    scenario: Value,
) -> Result<Vec<Value>> {
    Ok(
        run_client_async_with(sdk, url, &ClientOptions::new(binding), scenario)
            .await?
            .lines,
    )
}

/// Async [`run_client_with`].
pub async fn run_client_async_with(
    sdk: Sdk,
    url: &str,
    opts: &ClientOptions,
    scenario: Value,
) -> Result<ClientOutput> {
    if !scenario.is_array() {
        bail!("scenario must be a JSON array of ops");
    }
    let mut child = client_command(sdk, url, opts, false)?
        .spawn()
        .context("spawning the client driver")?;
    let mut stdin = child.stdin.take().context("client stdin")?;
    let body = serde_json::to_vec(&scenario)?;
    stdin
        .write_all(&body)
        .await
        .context("writing the scenario")?;
    drop(stdin);
    let output = tokio::time::timeout(opts.timeout, child.wait_with_output())
        .await
        .map_err(|_| anyhow!("client driver exceeded {:?}", opts.timeout))?
        .context("waiting for the client driver")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        bail!(
            "client driver failed ({}); stderr:\n{stderr}",
            output.status
        );
    }
    let lines = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_line)
        .collect::<Result<Vec<_>>>()?;
    Ok(ClientOutput { lines, stderr })
}

/// A client driver running in `--interactive` mode: send ops one at a time with
/// [`ClientRun::send`], read output lines as they arrive with [`ClientRun::next_line`].
///
/// Use it when the test must act between ops, e.g. start a background `subscribe`, then make our
/// server emit an event from Rust, then read the event line. The driver is killed on drop.
///
/// ```no_run
/// # async fn demo(url: &str) -> anyhow::Result<()> {
/// use conformance::interop::{Binding, ClientOptions, ClientRun, Sdk};
/// use serde_json::json;
/// let mut run = ClientRun::start(Sdk::V1, url, &ClientOptions::new(Binding::HttpJson)).await?;
/// run.send(json!({"op": "stream", "text": "stream 3", "background": true})).await?;
/// let first = run.next_line().await?.expect("an event");
/// assert!(first.get("event").is_some());
/// let rest = run.finish().await?; // closes stdin, waits, returns the remaining lines
/// # let _ = rest; Ok(()) }
/// ```
#[derive(Debug)]
pub struct ClientRun {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    stderr: Tail,
    timeout: Duration,
}

impl ClientRun {
    /// Spawns the driver of `sdk` in interactive mode against `url`.
    pub async fn start(sdk: Sdk, url: &str, opts: &ClientOptions) -> Result<ClientRun> {
        let mut child = client_command(sdk, url, opts, true)?
            .spawn()
            .context("spawning the client driver")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("client stdout")?;
        let stderr_pipe = child.stderr.take().context("client stderr")?;
        let stderr: Tail = Arc::new(Mutex::new(VecDeque::new()));
        {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr_pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    push_tail(&tail, line);
                }
            });
        }
        Ok(ClientRun {
            child,
            stdin,
            lines: tokio::io::BufReader::new(stdout).lines(),
            stderr,
            timeout: opts.timeout,
        })
    }

    /// Sends one op (a JSON object); it starts running as soon as the driver reads it.
    pub async fn send(&mut self, op: Value) -> Result<()> {
        let stdin = self.stdin.as_mut().context("stdin already closed")?;
        let mut line = serde_json::to_vec(&op)?;
        line.push(b'\n');
        stdin.write_all(&line).await.context("writing an op")?;
        stdin.flush().await.context("flushing an op")?;
        Ok(())
    }

    /// The next output line, waiting at most the run's timeout; `None` when the driver exited.
    pub async fn next_line(&mut self) -> Result<Option<Value>> {
        let next = tokio::time::timeout(self.timeout, self.lines.next_line())
            .await
            .map_err(|_| anyhow!("no client output within {:?}", self.timeout))?
            .context("reading client output")?;
        next.map(|l| parse_line(&l)).transpose()
    }

    /// Reads lines until one satisfies `pred` (returned) and gives back the skipped lines too.
    pub async fn next_matching(
        &mut self,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(Value, Vec<Value>)> {
        let mut skipped = Vec::new();
        while let Some(line) = self.next_line().await? {
            if pred(&line) {
                return Ok((line, skipped));
            }
            skipped.push(line);
        }
        bail!(
            "client exited before a matching line; seen: {skipped:?}; stderr:\n{}",
            self.stderr_tail()
        )
    }

    /// Closes stdin (the driver finishes running ops and background streams, then exits) and
    /// returns the remaining output lines.
    pub async fn finish(mut self) -> Result<Vec<Value>> {
        self.stdin.take();
        let mut rest = Vec::new();
        while let Some(line) = self.next_line().await? {
            rest.push(line);
        }
        let status = tokio::time::timeout(self.timeout, self.child.wait())
            .await
            .map_err(|_| anyhow!("client driver did not exit within {:?}", self.timeout))?
            .context("waiting for the client driver")?;
        if !status.success() {
            bail!(
                "client driver failed ({status}); stderr:\n{}",
                self.stderr_tail()
            );
        }
        Ok(rest)
    }

    /// The last stderr lines of the driver.
    pub fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }
}

/// The task state in a dump of either SDK, normalised to the 0.3 spelling: `completed`,
/// `input-required`, `canceled`, ... Accepts a Task, a `{"task": ..}` send result, a status
/// update event (`{"statusUpdate": ..}` in 1.x, `kind: status-update` in 0.3) or a push body.
/// Returns an empty string when there is no state.
pub fn task_state(v: &Value) -> String {
    let status = if let Some(t) = v.get("task") {
        &t["status"]
    } else if let Some(u) = v.get("statusUpdate") {
        &u["status"]
    } else {
        &v["status"]
    };
    let raw = status["state"].as_str().unwrap_or_default();
    raw.trim_start_matches("TASK_STATE_")
        .to_lowercase()
        .replace('_', "-")
}

/// The kind of a stream event in a dump of either SDK: `task`, `status`, `artifact`, `message`,
/// or `unknown`.
pub fn event_kind(ev: &Value) -> &'static str {
    match ev.get("kind").and_then(Value::as_str) {
        Some("task") => "task",
        Some("status-update") => "status",
        Some("artifact-update") => "artifact",
        Some("message") => "message",
        _ if ev.get("task").is_some() => "task",
        _ if ev.get("statusUpdate").is_some() => "status",
        _ if ev.get("artifactUpdate").is_some() => "artifact",
        _ if ev.get("message").is_some() => "message",
        _ => "unknown",
    }
}

/// The text of the first part of the status message of a Task / send result / status event, in
/// either SDK's dump (`""` when absent).
pub fn status_text(v: &Value) -> String {
    let status = if let Some(t) = v.get("task") {
        &t["status"]
    } else if let Some(u) = v.get("statusUpdate") {
        &u["status"]
    } else {
        &v["status"]
    };
    status["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
