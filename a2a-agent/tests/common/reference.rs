//! The reference agent on the library: `a2a-agent/examples/exec_agent.sh` written as a Rust
//! handler, so one table of SDK checks (`tests/interop.rs`) runs against both.
//!
//! "quick ..." answers with a direct Message (no task); "fail" fails; "slow" works until it is
//! canceled (at most 60 s); anything else emits progress and a `report.txt` artifact (a file part,
//! or a text part when the text says "inline") and asks which format to use (INPUT_REQUIRED); the
//! answer appends a two-chunk `summary` artifact and completes the task.

use a2a_agent::model::{Artifact, Part, TaskState};
use a2a_agent::{AgentCard, Handler, HandlerError, Reply, RequestContext, handler_fn};
use std::time::Duration;

pub fn card(name: &str) -> AgentCard {
    AgentCard::builder(name, "The exec example's behaviour", "1.0.0")
        .streaming(true)
        .push_notifications(true)
        .build()
}

fn artifact(name: &str, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: name.into(),
        name: Some(name.into()),
        parts,
        ..Artifact::new(vec![])
    }
}

async fn turn(ctx: RequestContext) -> Result<Reply, HandlerError> {
    let text = ctx.text();
    if ctx.task().map(|t| t.status.state) == Some(TaskState::InputRequired) {
        ctx.emit("converting the report").await;
        let chunk = |t: &str| artifact("summary", vec![Part::text(t)]);
        ctx.emit_artifact(chunk(&format!("format: {text}")), false, false)
            .await;
        ctx.emit_artifact(chunk(" (done)"), true, true).await;
        return Ok(Reply::text(format!("Report ready as {text}")));
    }
    if text.starts_with("quick") {
        return Ok(Reply::direct_text(format!("quick answer to: {text}")));
    }
    if text.starts_with("fail") {
        return Err(HandlerError::failed("the agent was asked to fail"));
    }
    if text.starts_with("slow") {
        ctx.emit("working slowly").await;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(60)) => {}
            _ = ctx.cancelled() => return Err(HandlerError::failed("canceled")),
        }
        return Ok(Reply::text("slow job done"));
    }
    ctx.emit("reading the request").await;
    let report = format!("Report for: {text}\n");
    ctx.emit("report written").await;
    let part = if text.contains("inline") {
        Part::text(report)
    } else {
        Part::raw(report.into_bytes())
            .with_media_type("text/plain")
            .with_filename("report.txt")
    };
    ctx.emit_artifact(artifact("report.txt", vec![part]), false, true)
        .await;
    Ok(Reply::input_required(
        "Which format do you want (csv or md)?",
    ))
}

pub fn handler() -> impl Handler {
    handler_fn(turn).direct_replies()
}
