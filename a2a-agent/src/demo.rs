//! The built-in demo agent (`a2a-agent serve --echo`).
//!
//! It answers with the user's text. Keywords in the text change its behaviour, for tests and demos:
//! - `stream`: emits two WORKING updates and an artifact (`echo`) before answering;
//! - `slow`: waits (up to 60 s) until the task is canceled, then stops;
//! - `sleep:N`: waits N milliseconds before answering;
//! - `fail`: the task FAILS;
//! - `input`: asks for more input (INPUT_REQUIRED); the next message on the task completes it.

use crate::card::AgentCard;
use crate::handler::{FnHandler, HandlerError, Reply, RequestContext, handler_fn};
use crate::model::{Artifact, Part, TaskState};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

type EchoFut = Pin<Box<dyn Future<Output = Result<Reply, HandlerError>> + Send>>;

/// The echo handler.
pub fn echo_handler() -> FnHandler<fn(RequestContext) -> EchoFut> {
    handler_fn(echo as fn(RequestContext) -> EchoFut)
}

fn echo(ctx: RequestContext) -> EchoFut {
    Box::pin(async move {
        let text = ctx.text();
        if text.contains("fail") {
            return Err(HandlerError::failed("echo was asked to fail"));
        }
        if text.contains("input") {
            return Ok(Reply::input_required("echo needs more input"));
        }
        if let Some(ms) = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("sleep:"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                _ = ctx.cancelled() => return Err(HandlerError::failed("canceled")),
            }
        }
        if text.contains("slow") {
            ctx.emit("echo is taking its time").await;
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(60)) => {}
                _ = ctx.cancelled() => return Err(HandlerError::failed("canceled")),
            }
        }
        if text.contains("stream") {
            ctx.emit("echo: step 1").await;
            ctx.emit_state(TaskState::Working, "echo: step 2").await;
            let art = Artifact {
                artifact_id: "echo".into(),
                name: Some("echo".into()),
                parts: vec![Part::text(text.clone())],
                ..Artifact::new(vec![])
            };
            ctx.emit_artifact(art, false, true).await;
        }
        Ok(Reply::Text(text))
    })
}

/// The demo card: streaming on, one `echo` skill.
pub fn echo_card() -> AgentCard {
    AgentCard::builder("echo", "Echoes the text it receives", "1.0.0")
        .streaming(true)
        .skill(
            "echo",
            "Echo",
            "Answers with the text it receives",
            &["demo"],
        )
        .build()
}
