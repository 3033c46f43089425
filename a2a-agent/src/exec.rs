//! The `--exec` command runner: one process per message.
//!
//! The command runs through `sh -c` with the message text on stdin and the message JSON in the
//! `A2A_MESSAGE` environment variable (also `A2A_TASK_ID`, `A2A_CONTEXT_ID`). Each stderr line
//! becomes a WORKING progress update; stdout is the final answer; a non-zero exit fails the task
//! with the tail of stderr as the reason. Canceling the task kills the process.

use crate::handler::{Handler, HandlerError, Reply, RequestContext};
use async_trait::async_trait;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// Runs a shell command per message.
#[derive(Debug, Clone)]
pub struct ExecHandler {
    command: String,
}

impl ExecHandler {
    /// A handler running `command` (a `sh -c` command line).
    pub fn new(command: impl Into<String>) -> Self {
        ExecHandler {
            command: command.into(),
        }
    }
}

const TAIL_LINES: usize = 20;

#[async_trait]
impl Handler for ExecHandler {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        let message_json = serde_json::to_string(ctx.message()).unwrap_or_default();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .env("A2A_MESSAGE", message_json)
            .env("A2A_TASK_ID", ctx.task_id())
            .env("A2A_CONTEXT_ID", ctx.context_id())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HandlerError::failed(format!("cannot start command: {e}")))?;
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
        let out_reader = async move {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf).await;
            buf
        };
        let run = async {
            let ((), tail, out) = tokio::join!(writer, err_reader, out_reader);
            let status = child.wait().await;
            (status, tail, out)
        };
        let (status, tail, out) = tokio::select! {
            r = run => r,
            _ = ctx.cancelled() => {
                return Err(HandlerError::failed("canceled"));
            }
        };
        let status = status.map_err(|e| HandlerError::failed(format!("command failed: {e}")))?;
        if !status.success() {
            let reason = if tail.is_empty() {
                format!("command exited with {status}")
            } else {
                tail
            };
            return Err(HandlerError::failed(reason));
        }
        let answer = String::from_utf8_lossy(&out)
            .trim_end_matches('\n')
            .to_string();
        Ok(Reply::Text(answer))
    }
}
