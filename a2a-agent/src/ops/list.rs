//! `ListTasks` in 1.0 terms: page size and history bounds, the caller's filter, and opaque page
//! tokens tied to the filter they were issued for.

use base64::Engine;
use serde_json::{Value, json};

use crate::caller::CallerProfile;
use crate::card::etag;
use crate::error::A2aError;
use crate::model::{ListTasksRequest, ListTasksResponse, Task, TaskState};
use crate::store::TaskFilter;
use crate::tasks::{TaskManager, trim_history};

const DEFAULT_PAGE: i32 = 50;
const MAX_PAGE: i32 = 100;

fn filter_key(f: &TaskFilter) -> String {
    format!(
        "{}|{}|{}|{}",
        f.owner,
        f.context_id.as_deref().unwrap_or(""),
        f.state.map(|s| s.as_str()).unwrap_or(""),
        f.status_timestamp_after
            .as_ref()
            .map(|t| t.unix_millis().to_string())
            .unwrap_or_default()
    )
}

fn fnv(s: &str) -> String {
    etag(s.as_bytes()).trim_matches('"').to_string()
}

fn task_ms(t: &Task) -> i64 {
    t.status
        .timestamp
        .as_ref()
        .map(|x| x.unix_millis() as i64)
        .unwrap_or(0)
}

fn encode_token(filter: &TaskFilter, last: &Task) -> String {
    let v = json!({"f": fnv(&filter_key(filter)), "t": task_ms(last), "i": last.id});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

fn decode_token(filter: &TaskFilter, token: &str) -> Result<(i64, String), A2aError> {
    let bad = || {
        A2aError::invalid_params(
            "invalid pageToken: send back the token of the previous page unchanged",
        )
        .with_meta("field", "pageToken")
    };
    if token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(A2aError::invalid_params(
            "invalid pageToken: numeric offsets are not accepted; use nextPageToken",
        )
        .with_meta("field", "pageToken"));
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let f = v.get("f").and_then(Value::as_str).ok_or_else(bad)?;
    if f != fnv(&filter_key(filter)) {
        return Err(A2aError::invalid_params(
            "invalid pageToken: it was issued for different filters",
        )
        .with_meta("field", "pageToken"));
    }
    let t = v.get("t").and_then(Value::as_i64).ok_or_else(bad)?;
    let i = v.get("i").and_then(Value::as_str).ok_or_else(bad)?;
    Ok((t, i.to_string()))
}

pub(crate) async fn list(
    mgr: &TaskManager,
    req: ListTasksRequest,
    caller: &CallerProfile,
) -> Result<ListTasksResponse, A2aError> {
    // Above the maximum: capped at 100 (the Camel guide), not refused.
    let page_size = req.page_size.unwrap_or(DEFAULT_PAGE).min(MAX_PAGE);
    if page_size < 1 {
        return Err(
            A2aError::invalid_params(format!("pageSize must be between 1 and {MAX_PAGE}"))
                .with_meta("field", "pageSize"),
        );
    }
    if req.history_length.is_some_and(|h| h < 0) {
        return Err(
            A2aError::invalid_params("historyLength must not be negative")
                .with_meta("field", "historyLength"),
        );
    }
    let filter = TaskFilter {
        owner: caller.owner_key(),
        context_id: req.context_id.clone().filter(|c| !c.is_empty()),
        state: req.status.filter(|s| *s != TaskState::Unspecified),
        status_timestamp_after: req.status_timestamp_after.clone(),
    };
    let after = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(tok) => Some(decode_token(&filter, tok)?),
    };
    let page = mgr
        .list_page(&filter, after.as_ref(), page_size as usize)
        .await?;
    let include_artifacts = req.include_artifacts.unwrap_or(false);
    let next = match page.tasks.last() {
        Some(last) if page.more => encode_token(&filter, &last.task),
        _ => String::new(),
    };
    let total = page.total;
    let tasks: Vec<Task> = page
        .tasks
        .into_iter()
        .map(|s| {
            let mut t = s.task;
            if !include_artifacts {
                t.artifacts.clear();
            }
            trim_history(t, req.history_length)
        })
        .collect();
    Ok(ListTasksResponse {
        tasks,
        next_page_token: next,
        page_size,
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    })
}
