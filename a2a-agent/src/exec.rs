//! The `--exec` command runner: one process per message.
//!
//! The command runs through `sh -c` with the message text on stdin and the message JSON in the
//! `A2A_MESSAGE` environment variable (also `A2A_TASK_ID`, `A2A_CONTEXT_ID`; on a follow-up turn
//! of a task, e.g. after INPUT_REQUIRED, `A2A_FOLLOW_UP=1`, `A2A_TASK_STATE` (the state before
//! this turn, e.g. `input-required`) and `A2A_TASK` (the task JSON, history included)). Each
//! stderr line becomes a WORKING progress update; a non-zero exit fails the task with the tail of
//! stderr as the reason. Canceling the task kills the process and whatever it started (its
//! process group).
//!
//! stdout is read per [`ExecEvents`]: the whole of it is the answer text ([`ExecEvents::Text`],
//! the default), or each line is an event ([`ExecEvents::Jsonl`], `--exec-events jsonl`):
//!
//! | line | effect |
//! | --- | --- |
//! | `{"type":"status","state":"working","text":"..."}` | a status update (`text` optional) |
//! | `{"type":"artifact","name":"r.txt","parts":[...],"append":false,"lastChunk":true}` | an artifact update (`artifactId` optional: derived from `name`; `text` or `file` instead of `parts`) |
//! | `{"type":"message","text":"..."}` | the answer is a direct message and no task (when nothing was emitted before; else the task completes with it) |
//! | `{"type":"final","state":"input-required","text":"..."}` | the turn ends in that state (`completed`, `input-required`, `failed`, `rejected`, `auth-required`, `canceled`) |
//!
//! Parts are A2A 1.0 parts (`{"text":..}`, `{"raw":base64,"mediaType":..,"filename":..}`,
//! `{"url":..}`, `{"data":..}`); `"file":"path"` (or `{"path":..,"mediaType":..}`) reads a file
//! into a raw part. A line that is not a JSON object is answer text, as in the text mode; an
//! object with an unknown `type` is ignored (logged).

use crate::handler::{Handler, HandlerError, Reply, RequestContext};
use crate::model::{Artifact, Message, Part, Role, TaskState};
use async_trait::async_trait;
use serde_json::Value;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// How the program's stdout is read (`--exec-events`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecEvents {
    /// All of stdout is the answer text. The default.
    #[default]
    Text,
    /// Each stdout line is a JSON event (see the module docs).
    Jsonl,
}

impl std::str::FromStr for ExecEvents {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(ExecEvents::Text),
            "jsonl" | "json-lines" => Ok(ExecEvents::Jsonl),
            o => Err(format!("--exec-events must be text or jsonl, not {o:?}")),
        }
    }
}

/// Runs a shell command per message.
#[derive(Debug, Clone)]
pub struct ExecHandler {
    command: String,
    events: ExecEvents,
}

impl ExecHandler {
    /// A handler running `command` (a `sh -c` command line), stdout read as text.
    pub fn new(command: impl Into<String>) -> Self {
        ExecHandler {
            command: command.into(),
            events: ExecEvents::Text,
        }
    }

    /// Read stdout as `events`.
    pub fn events(mut self, events: ExecEvents) -> Self {
        self.events = events;
        self
    }
}

const TAIL_LINES: usize = 20;

/// A task state from its 1.0 (`TASK_STATE_INPUT_REQUIRED`) or 0.3 / short (`input-required`,
/// `input_required`) name.
pub fn parse_state(s: &str) -> Option<TaskState> {
    let n = s
        .trim()
        .to_ascii_lowercase()
        .replace('_', "-")
        .trim_start_matches("task-state-")
        .to_string();
    Some(match n.as_str() {
        "submitted" => TaskState::Submitted,
        "working" => TaskState::Working,
        "completed" | "done" => TaskState::Completed,
        "failed" => TaskState::Failed,
        "canceled" | "cancelled" => TaskState::Canceled,
        "rejected" => TaskState::Rejected,
        "input-required" => TaskState::InputRequired,
        "auth-required" => TaskState::AuthRequired,
        _ => return None,
    })
}

fn short_state(s: TaskState) -> String {
    s.as_str()
        .trim_start_matches("TASK_STATE_")
        .to_ascii_lowercase()
        .replace('_', "-")
}

/// The parts of an event line: `parts`, or `text`, or `file`.
async fn event_parts(ev: &Value) -> Result<Vec<Part>, String> {
    if let Some(p) = ev.get("parts") {
        return serde_json::from_value(p.clone()).map_err(|e| format!("invalid parts: {e}"));
    }
    if let Some(f) = ev.get("file") {
        let (path, media) = match f {
            Value::String(p) => (p.clone(), None),
            o => (
                o.get("path")
                    .and_then(Value::as_str)
                    .ok_or("file needs a path")?
                    .to_string(),
                o.get("mediaType")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ),
        };
        let bytes = tokio::fs::read(&path)
            .await
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        let name = std::path::Path::new(&path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.clone());
        let media = media.unwrap_or_else(|| guess_media_type(&name).to_string());
        return Ok(vec![
            Part::raw(bytes).with_media_type(media).with_filename(name),
        ]);
    }
    Ok(ev
        .get("text")
        .and_then(Value::as_str)
        .map(|t| vec![Part::text(t)])
        .unwrap_or_default())
}

fn guess_media_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

fn agent_message(parts: Vec<Part>) -> Message {
    Message {
        message_id: uuid::Uuid::new_v4().to_string(),
        role: Role::Agent,
        parts,
        ..Default::default()
    }
}

/// What the event lines decided so far.
#[derive(Default)]
struct Turn {
    text: String,
    direct: Option<Message>,
    last: Option<(TaskState, Vec<Part>)>,
}

/// Apply one stdout line of the JSON-lines protocol.
async fn apply_line(ctx: &RequestContext, line: &str, turn: &mut Turn) {
    let ev: Value = match serde_json::from_str(line) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            if !turn.text.is_empty() {
                turn.text.push('\n');
            }
            turn.text.push_str(line);
            return;
        }
    };
    let parts = match event_parts(&ev).await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "--exec event line ignored");
            return;
        }
    };
    let state = ev
        .get("state")
        .and_then(Value::as_str)
        .and_then(parse_state);
    match ev.get("type").and_then(Value::as_str).unwrap_or("") {
        "status" => {
            let msg = (!parts.is_empty()).then(|| agent_message(parts));
            ctx.emit_status(state.unwrap_or(TaskState::Working), msg)
                .await;
        }
        "artifact" => {
            let name = ev.get("name").and_then(Value::as_str).map(str::to_string);
            let id = ev
                .get("artifactId")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| name.clone())
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let artifact = Artifact {
                artifact_id: id,
                name,
                description: ev
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                parts,
                ..Default::default()
            };
            let append = ev.get("append").and_then(Value::as_bool).unwrap_or(false);
            let last = ev.get("lastChunk").and_then(Value::as_bool).unwrap_or(true);
            ctx.emit_artifact(artifact, append, last).await;
        }
        "message" => turn.direct = Some(agent_message(parts)),
        "final" => turn.last = Some((state.unwrap_or(TaskState::Completed), parts)),
        other => tracing::warn!(kind = other, "--exec event line of unknown type ignored"),
    }
}

/// Kills the process group of the program on drop (a canceled turn, a shutdown, a dropped
/// handler future) unless disarmed; `kill_on_drop` alone reaches only `sh` itself.
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|p| libc::pid_t::try_from(p).ok()) {
            // SAFETY: kill(2) on the process group our own child leads (`process_group(0)`);
            // the group id cannot be reused while any member of it lives.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

#[async_trait]
impl Handler for ExecHandler {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        let message_json = serde_json::to_string(ctx.message()).unwrap_or_default();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&self.command)
            .env("A2A_MESSAGE", message_json)
            .env("A2A_TASK_ID", ctx.task_id())
            .env("A2A_CONTEXT_ID", ctx.context_id())
            .env(
                "A2A_EXEC_EVENTS",
                match self.events {
                    ExecEvents::Text => "text",
                    ExecEvents::Jsonl => "jsonl",
                },
            );
        if let Some(t) = ctx.task() {
            cmd.env("A2A_FOLLOW_UP", "1")
                .env("A2A_TASK_STATE", short_state(t.status.state))
                .env("A2A_TASK", serde_json::to_string(t).unwrap_or_default());
        }
        // Its own process group, so that a turn ended early kills what `sh -c CMD` started too.
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HandlerError::failed(format!("cannot start command: {e}")))?;
        let mut group = GroupKill(child.id());
        let text = ctx.text();
        let mut stdin = child.stdin.take();
        let writer = async move {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(text.as_bytes()).await;
                let _ = s.shutdown().await;
            }
            drop(stdin);
        };
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| HandlerError::failed("no stdout"))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| HandlerError::failed("no stderr"))?;
        let ctx2 = ctx.clone();
        let err_reader = async move {
            let mut tail: std::collections::VecDeque<String> = Default::default();
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                ctx2.emit(line.clone()).await;
                tail.push_back(line);
                if tail.len() > TAIL_LINES {
                    tail.pop_front();
                }
            }
            tail.into_iter().collect::<Vec<_>>().join("\n")
        };
        let events = self.events;
        let ctx3 = ctx.clone();
        let out_reader = async move {
            let mut turn = Turn::default();
            match events {
                ExecEvents::Text => {
                    let mut buf = Vec::new();
                    let _ = stdout.read_to_end(&mut buf).await;
                    turn.text = String::from_utf8_lossy(&buf)
                        .trim_end_matches('\n')
                        .to_string();
                }
                ExecEvents::Jsonl => {
                    let mut lines = BufReader::new(stdout).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if line.trim().is_empty() {
                            continue;
                        }
                        apply_line(&ctx3, &line, &mut turn).await;
                    }
                }
            }
            turn
        };
        let run = async {
            let ((), tail, turn) = tokio::join!(writer, err_reader, out_reader);
            let status = child.wait().await;
            (status, tail, turn)
        };
        let (status, tail, turn) = tokio::select! {
            r = run => r,
            _ = ctx.cancelled() => {
                return Err(HandlerError::failed("canceled"));
            }
        };
        // The program ended by itself: what it left running in the background is its business.
        group.0 = None;
        let status = status.map_err(|e| HandlerError::failed(format!("command failed: {e}")))?;
        if !status.success() {
            let reason = if tail.is_empty() {
                format!("command exited with {status}")
            } else {
                tail
            };
            return Err(HandlerError::failed(reason));
        }
        Ok(match turn {
            Turn {
                last: Some((state, mut parts)),
                text,
                ..
            } => {
                if parts.is_empty() && !text.is_empty() {
                    parts.push(Part::text(text));
                }
                if state == TaskState::Completed && parts.is_empty() {
                    Reply::Empty
                } else {
                    Reply::Message(Message {
                        parts,
                        ..agent_message(vec![])
                    })
                    .with_state(state)
                }
            }
            Turn {
                direct: Some(m), ..
            } => Reply::Direct(m),
            Turn { text, .. } if events == ExecEvents::Jsonl && text.is_empty() => Reply::Empty,
            Turn { text, .. } => Reply::Text(text),
        })
    }

    fn may_reply_directly(&self) -> bool {
        self.events == ExecEvents::Jsonl
    }
}

trait WithState {
    fn with_state(self, state: TaskState) -> Reply;
}

impl WithState for Reply {
    /// A message reply ending the turn in `state` (COMPLETED: a plain message reply).
    fn with_state(self, state: TaskState) -> Reply {
        match (self, state) {
            (r, TaskState::Completed) => r,
            (Reply::Message(m), s) => {
                let text = m
                    .parts
                    .iter()
                    .filter_map(|p| p.as_text())
                    .collect::<Vec<_>>()
                    .join("\n");
                Reply::State(s, (!text.is_empty()).then_some(text))
            }
            (r, _) => r,
        }
    }
}
