//! Lists the gateway pages itself: ListTasks filtered to the caller's own tasks, and push config
//! lists of 0.3 peers for 1.0 callers; page tokens are HMAC'd offsets bound to what they page.

use serde_json::{Value, json};

use crate::keys;
use crate::outbound::PeerCall;
use crate::protocol::ops::Operation;
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{tasks::ownership, tasks::ownership::Owner, tasks::ownership::OwnershipStore};

/// A page of a push config list the gateway serves itself: offset, size and the task it pages.
pub(crate) struct PushPage {
    offset: usize,
    size: usize,
    task: String,
}

/// gateway paging: a 1.0 caller asking a 0.3 peer (which cannot page) for one page of push
/// configs; the gateway reads the whole list and pages it ([`push_page_slice`]).
pub(crate) fn push_page(
    st: &GatewayState,
    op: Operation,
    peer: Version,
    caller: Version,
    params: &Value,
) -> Result<Option<PushPage>, Refusal> {
    if !(op == Operation::ListTaskPushNotificationConfigs
        && peer == Version::V03
        && caller == Version::V1)
    {
        return Ok(None);
    }
    let task = params
        .get("taskId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let size = params
        .get("pageSize")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    let token = params
        .get("pageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    if size.is_none() && token.is_none() {
        return Ok(None);
    }
    let offset = match token {
        Some(t) => verify_page_token(st, &task, t).ok_or_else(|| {
            Refusal::invalid_params("params.pageToken: not a token this gateway issued")
        })?,
        None => 0,
    };
    Ok(Some(PushPage {
        offset,
        size: size.unwrap_or(usize::MAX).max(1),
        task,
    }))
}

/// The caller's page of the peer's whole push config list `res`.
pub(crate) fn push_page_slice(st: &GatewayState, page: &PushPage, res: &Value) -> Value {
    let all = res
        .get("configs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let end = page.offset.saturating_add(page.size).min(all.len());
    let slice: Vec<Value> = all
        .get(page.offset.min(all.len())..end)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let next = if end < all.len() {
        page_token(st, &page.task, end)
    } else {
        String::new()
    };
    json!({"configs": slice, "nextPageToken": next})
}

/// Largest ListTasks page the gateway serves (and asks its peers for).
pub(crate) const MAX_LIST_PAGE: usize = 100;
/// Peer pages read at most for one ListTasks call.
pub(crate) const MAX_PEER_PAGES: usize = 100;

/// One page of a ListTasks answer the gateway pages itself: the size asked for, the scope its
/// tokens are bound to (owner and filters) and where the page starts (the offset, and the last
/// task id of the previous page for keyset paging).
pub(crate) struct ListPage {
    size: usize,
    scope: String,
    offset: usize,
    last: String,
}

impl ListPage {
    /// Reads `pageSize` (1..=[`MAX_LIST_PAGE`], 50 by default) and checks `pageToken` (a token
    /// this gateway issued for the same owner and filters, else -32602).
    pub(crate) fn read(st: &GatewayState, owner: &Owner, params: &Value) -> Result<Self, Refusal> {
        let size = params
            .get("pageSize")
            .and_then(Value::as_u64)
            .map(|n| (n as usize).clamp(1, MAX_LIST_PAGE))
            .unwrap_or(50);
        let mut filter = params.clone();
        if let Some(o) = filter.as_object_mut() {
            o.remove("pageSize");
            o.remove("pageToken");
        }
        let scope = format!(
            "tasks\n{}\n{}\n{filter}",
            owner.workspace_id, owner.agent_id
        );
        let (offset, last) = match params
            .get("pageToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            Some(t) => verify_list_token(st, &scope, t).ok_or_else(|| {
                Refusal::invalid_params("params.pageToken: not a token this gateway issued")
            })?,
            None => (0, String::new()),
        };
        Ok(ListPage {
            size,
            scope,
            offset,
            last,
        })
    }

    /// The page of `all` (the whole filtered list, in order) as a ListTasks answer built on
    /// `base`: `tasks`, `nextPageToken` (empty on the last page), `pageSize`, `totalSize`.
    pub(crate) fn answer(&self, st: &GatewayState, all: Vec<Value>, base: Value) -> Value {
        let total = all.len();
        let offset = self.start(&all);
        let end = offset.saturating_add(self.size).min(total);
        let slice: Vec<Value> = all
            .get(offset.min(total)..end)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        let next = match slice.last().and_then(cursor) {
            Some(last) if end < total => list_token(st, &self.scope, end, &last),
            _ => String::new(),
        };
        let mut out = base;
        if !out.is_object() {
            out = json!({});
        }
        if let Some(o) = out.as_object_mut() {
            o.insert("tasks".into(), Value::Array(slice));
            o.insert("nextPageToken".into(), json!(next));
            o.insert("pageSize".into(), json!(self.size));
            o.insert("totalSize".into(), json!(total));
        }
        out
    }
}

impl ListPage {
    /// Where the page starts in `all` (newest status first, S1 §3.1.4). Keyset: after the last
    /// task the previous page returned, so tasks created or updated meanwhile (which move to the
    /// front) do not shift the pages. If that task was updated since (it moved to the front) or
    /// is gone, the page goes on with the first task not newer than its old status timestamp and
    /// not itself, so nothing of the previous page comes again. The offset serves a token with
    /// no cursor.
    fn start(&self, all: &[Value]) -> usize {
        if self.last.is_empty() {
            return self.offset;
        }
        let (ts, id) = self
            .last
            .split_once('\n')
            .unwrap_or(("", self.last.as_str()));
        let at = all
            .iter()
            .position(|t| ownership::listed_task_id(t) == Some(id));
        if let Some(i) = at
            && all.get(i).is_some_and(|t| same_time(status_time(t), ts))
        {
            return i + 1;
        }
        all.iter()
            .position(|t| ownership::listed_task_id(t) != Some(id) && not_newer(status_time(t), ts))
            .unwrap_or(all.len())
    }
}

/// A task's place in the order, as carried by a page token: its status timestamp and id.
fn cursor(task: &Value) -> Option<String> {
    let id = ownership::listed_task_id(task)?;
    Some(format!("{}\n{id}", status_time(task)))
}

fn status_time(task: &Value) -> &str {
    task.pointer("/status/timestamp")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn parse_time(t: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
}

/// The status timestamp of a 1.0 task, if it reads (the order of ListTasks, S1 §3.1.4).
pub(crate) fn status_timestamp(task: &Value) -> Option<time::OffsetDateTime> {
    parse_time(status_time(task))
}

fn same_time(a: &str, b: &str) -> bool {
    match (parse_time(a), parse_time(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Whether status time `a` is not newer than `b` (unreadable times: only an equal one is).
fn not_newer(a: &str, b: &str) -> bool {
    match (parse_time(a), parse_time(b)) {
        (Some(x), Some(y)) => x <= y,
        _ => a == b,
    }
}

/// ListTasks for the caller's own tasks only: reads the peer's list (its filters and order) in
/// pages of [`MAX_LIST_PAGE`], keeps the owner's tasks and pages that filtered list itself
/// ([`ListPage`]: page tokens are HMAC'd offsets into it, bound to owner and filter;
/// `totalSize` counts only the owner's tasks).
pub(crate) async fn list_owned(
    st: &GatewayState,
    ctx: &PeerCall<'_>,
    owners: &dyn OwnershipStore,
    endpoint: &str,
    owner: &Owner,
    params: &Value,
    mut peer_params: Value,
) -> Result<Answer, Refusal> {
    let page = ListPage::read(st, owner, params)?;
    let owned: std::collections::HashSet<String> = owners
        .list(endpoint, owner, 0, i64::MAX)
        .map_err(|e| Refusal::internal(&e.to_string()))?
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    if let Some(o) = peer_params.as_object_mut() {
        o.insert("pageSize".into(), json!(MAX_LIST_PAGE));
        o.remove("pageToken");
    }
    let mut mine = Vec::new();
    let mut first: Option<Value> = None;
    for _ in 0..MAX_PEER_PAGES {
        let answer = ctx.call(Operation::ListTasks, peer_params.clone()).await?;
        let Answer::Unary(answer) = answer else {
            return Err(Refusal::upstream_invalid_response("expected a task list"));
        };
        let tasks = answer
            .get("tasks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        mine.extend(ownership::owned_only(tasks, &owned));
        let next = answer
            .get("nextPageToken")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        first.get_or_insert(answer);
        if next.is_empty() {
            break;
        }
        if let Some(o) = peer_params.as_object_mut() {
            o.insert("pageToken".into(), json!(next));
        }
    }
    Ok(Answer::Unary(page.answer(
        st,
        mine,
        first.unwrap_or_else(|| json!({})),
    )))
}

/// A ListTasks page token: the offset and the last task id of the page, HMAC'd with the scope.
fn list_token(st: &GatewayState, scope: &str, offset: usize, last: &str) -> String {
    let hex: String = last.bytes().map(|b| format!("{b:02x}")).collect();
    let tag = page_token(st, &format!("{scope}\n{last}"), offset);
    format!("{tag}.{hex}")
}

fn verify_list_token(st: &GatewayState, scope: &str, token: &str) -> Option<(usize, String)> {
    let (tag, hex) = token.rsplit_once('.')?;
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()?;
    let last = String::from_utf8(bytes).ok()?;
    let offset = verify_page_token(st, &format!("{scope}\n{last}"), tag)?;
    Some((offset, last))
}

pub(crate) fn page_token(st: &GatewayState, task: &str, offset: usize) -> String {
    let tag = aws_lc_rs::hmac::sign(&st.page_key, format!("{task}\n{offset}").as_bytes());
    let hex: String = tag.as_ref()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("gw1.{offset}.{hex}")
}

pub(crate) fn verify_page_token(st: &GatewayState, task: &str, token: &str) -> Option<usize> {
    let mut it = token.splitn(3, '.');
    if it.next()? != "gw1" {
        return None;
    }
    let offset: usize = it.next()?.parse().ok()?;
    let expected = page_token(st, task, offset);
    keys::digest_eq(expected.as_bytes(), token.as_bytes()).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, ts: &str) -> Value {
        json!({"id": id, "status": {"state": "TASK_STATE_WORKING", "timestamp": ts}})
    }

    fn after(last: &Value) -> ListPage {
        ListPage {
            size: 2,
            scope: String::new(),
            offset: 2,
            last: cursor(last).unwrap(),
        }
    }

    #[test]
    fn the_next_page_never_repeats_the_previous_one() {
        let (t1, t2, t3) = (
            "2026-01-01T00:00:01Z",
            "2026-01-01T00:00:02.5Z",
            "2026-01-01T00:00:03Z",
        );
        // page 1 was [a, b]; the cursor is b at 00:00:02
        let b_then = task("b", "2026-01-01T00:00:02Z");
        let page = after(&b_then);
        // nothing changed: after b
        let all = [task("a", t2), b_then.clone(), task("c", t1)];
        assert_eq!(page.start(&all), 2);
        // b was updated since and moved to the front: still c, not a again
        let all = [task("b", t3), task("a", t2), task("c", t1)];
        assert_eq!(page.start(&all), 2);
        // b is gone: c
        let all = [task("a", t2), task("c", t1)];
        assert_eq!(page.start(&all), 1);
        // c was updated and moved to the front: it is skipped, nothing repeats
        let all = [task("c", t3), task("a", t2), b_then];
        assert_eq!(page.start(&all), 3);
        // the same instant written differently is the same time
        let page = after(&task("b", "2026-01-01T00:00:02.000Z"));
        let all = [task("a", t2), task("b", "2026-01-01T00:00:02Z")];
        assert_eq!(page.start(&all), 2);
    }
}
