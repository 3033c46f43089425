//! Lists the gateway pages itself: ListTasks (the caller's own tasks, `super::list_tasks`), and
//! push config lists of 0.3 peers for 1.0 callers; page tokens are HMAC'd offsets (and, for
//! ListTasks, the previous page's last task) bound to what they page.

use serde_json::{Value, json};

use crate::keys;
use crate::protocol::ops::Operation;
use crate::protocol::reveal::status_nanos;
use crate::state::GatewayState;
use crate::tasks::ownership::Owner;
use crate::{protocol::errors::Refusal, protocol::errors::Version};

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
/// Peer pages of a 1.0 peer's ListTasks read at most by a context kill's scan
/// (`crate::admin::governance`; a caller's ListTasks never reads the peer's list).
pub(crate) const MAX_PEER_PAGES: usize = 100;

/// One page of a ListTasks answer the gateway pages itself: the size asked for, the scope its
/// tokens are bound to (owner and filters) and where the page starts (the offset, and the
/// previous page's last task for keyset paging).
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

    /// The page size.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Tasks listed on the pages before this one (where a token without a cursor starts).
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// The previous page's last task: its recorded status time (Unix nanoseconds, -1 none) and
    /// id; the page starts after it in the order (newest status first, then by id), so tasks
    /// updated meanwhile (which move to the front) do not shift the pages and nothing of the
    /// previous page comes again. `None` on the first page (and for a token with no cursor).
    pub(crate) fn cursor(&self) -> Option<(i64, &str)> {
        if self.last.is_empty() {
            return None;
        }
        let (at, id) = self
            .last
            .split_once('\n')
            .unwrap_or(("", self.last.as_str()));
        // Tokens of earlier versions carry the RFC 3339 timestamp.
        let at = at
            .parse::<i64>()
            .ok()
            .or_else(|| status_nanos(at))
            .unwrap_or(-1);
        Some((at, id))
    }

    /// The ListTasks answer (1.0): `tasks`, `nextPageToken` (after `next`, the page's last
    /// task, when more follow; else empty), `pageSize`, `totalSize`. `listed`: the tasks the
    /// page took from the records (the next token's offset).
    pub(crate) fn answer(
        &self,
        st: &GatewayState,
        tasks: Vec<Value>,
        total: u64,
        next: Option<(i64, &str)>,
        listed: usize,
    ) -> Value {
        let next = match next {
            Some((at, id)) => list_token(
                st,
                &self.scope,
                self.offset.saturating_add(listed),
                &format!("{at}\n{id}"),
            ),
            None => String::new(),
        };
        json!({"tasks": tasks, "nextPageToken": next, "pageSize": self.size, "totalSize": total})
    }
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

    fn page(last: &str) -> ListPage {
        ListPage {
            size: 2,
            scope: String::new(),
            offset: 2,
            last: last.into(),
        }
    }

    #[test]
    fn cursors_of_this_and_earlier_tokens() {
        assert_eq!(page("").cursor(), None);
        assert_eq!(page("1500\nb").cursor(), Some((1500, "b")));
        assert_eq!(page("-1\nb").cursor(), Some((-1, "b")));
        // An earlier version's token carries the timestamp itself.
        assert_eq!(
            page("1970-01-01T00:00:02.5Z\nb").cursor(),
            Some((2_500_000_000, "b"))
        );
        assert_eq!(page("\nb").cursor(), Some((-1, "b")));
    }
}
