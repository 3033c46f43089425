//! Building requests from flags: the message of `send`, a task state by name.

use a2a_types::v1;
use anyhow::{Context, Result, anyhow};

use crate::args::SendArgs;

pub(crate) fn parse_state(s: &str) -> Result<v1::TaskState> {
    let upper = s.trim().to_ascii_uppercase().replace('-', "_");
    let name = if upper.starts_with("TASK_STATE_") {
        upper
    } else {
        format!("TASK_STATE_{upper}")
    };
    serde_json::from_value(serde_json::Value::String(name.clone()))
        .map_err(|_| anyhow!("unknown task state {s:?}"))
}

fn media_type_of(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

pub(crate) fn send_request(a: &SendArgs) -> Result<v1::SendMessageRequest> {
    let mut msg = v1::Message::user_text(a.text.clone());
    if let Some(data) = &a.data {
        let value: serde_json::Value =
            serde_json::from_str(data).context("--data is not valid JSON")?;
        msg = msg.with_part(v1::Part::data(value));
    }
    if let Some(path) = &a.file {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let mut part = v1::Part::raw(bytes).with_media_type(media_type_of(path));
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            part = part.with_filename(name);
        }
        msg = msg.with_part(part);
    }
    if let Some(t) = &a.task_id {
        msg = msg.with_task_id(t.clone());
    }
    if let Some(c) = &a.context_id {
        msg = msg.with_context_id(c.clone());
    }
    let mut req = v1::SendMessageRequest::new(msg);
    if a.no_wait || a.history_length.is_some() {
        req = req.with_configuration(v1::SendMessageConfiguration {
            return_immediately: a.no_wait.then_some(true),
            history_length: a.history_length,
            ..Default::default()
        });
    }
    Ok(req)
}
