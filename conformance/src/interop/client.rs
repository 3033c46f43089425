//! The client drivers: options, one-shot runs (blocking and async) and interactive [`ClientRun`]s.

use std::collections::VecDeque;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_types::version::Binding;
use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use super::child::{Tail, push_tail, python_env, tail_text};
use super::sdk::Sdk;

/// Default overall time limit of one client run ([`run_client`], [`run_client_async`]).
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);

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
