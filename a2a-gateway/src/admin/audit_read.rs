//! `GET /admin/admin-audit?workspace=&after=&limit=&actor=&action=&since=&until=`: the admin
//! audit rows ([`super::audit`]) as a JSON list, oldest first.
//!
//! `workspace` is exact; `actor` matches (any case) part of the actor's kind, subject (the
//! operator), address or console session (`console`, `oidc:alice`, `admin-token`, `cli`,
//! `127.0.0.1`, `session:1a2b`); `action` part of
//! the action (`PUT /admin/workspaces/{ws}/policy`, `cli agent-add`); `since` / `until` are
//! RFC 3339 times or prefixes (`2026-12-07T10:00`), `since` included, `until` not. The rows
//! after `after` are read in pages of [`SCAN_PAGE`] until `limit` rows match (at most 1,000)
//! or the log ends; `until` ends the read at the first row past it (rows are in time order).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::state::GatewayState;
use crate::store::backend::{AdminAuditRecord, AuditStore};

/// Rows read from the store at a time while filtering.
pub const SCAN_PAGE: i64 = 1000;

/// The query of `GET /admin/admin-audit`.
#[derive(Debug, Default, Deserialize)]
pub struct AdminAuditQuery {
    /// Exact workspace id.
    pub workspace: Option<String>,
    /// Rows after this sequence number.
    pub after: Option<i64>,
    /// At most this many rows (100 by default, 1 to 1,000).
    pub limit: Option<i64>,
    /// Part of the actor's kind, subject, address or console session.
    pub actor: Option<String>,
    /// Part of the action.
    pub action: Option<String>,
    /// At or after this time (RFC 3339 or a prefix).
    pub since: Option<String>,
    /// Before this time (RFC 3339 or a prefix).
    pub until: Option<String>,
}

/// A set filter's text (trimmed, lowercased), `None` when empty.
fn set(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_ascii_lowercase)
}

impl AdminAuditQuery {
    /// Whether `r` passes the actor, action and `since` filters.
    fn keeps(&self, r: &AdminAuditRecord) -> bool {
        if let Some(a) = set(&self.actor) {
            let hit = [
                Some(r.actor.kind.as_str()),
                Some(r.actor.subject.as_str()),
                r.actor.remote.as_deref(),
                r.detail["session"].as_str(),
            ]
            .into_iter()
            .flatten()
            .any(|f| f.to_ascii_lowercase().contains(&a));
            if !hit {
                return false;
            }
        }
        if let Some(a) = set(&self.action)
            && !r.action.to_ascii_lowercase().contains(&a)
        {
            return false;
        }
        if let Some(s) = self
            .since
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            && r.ts.as_str() < s
        {
            return false;
        }
        true
    }

    /// Whether `r` is at or past `until` (the read ends there).
    fn past_until(&self, r: &AdminAuditRecord) -> bool {
        self.until
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .is_some_and(|u| r.ts.as_str() >= u)
    }
}

/// The rows `q` selects (see the module doc).
pub async fn select<A: AuditStore>(
    audit: &A,
    q: &AdminAuditQuery,
) -> Result<Vec<AdminAuditRecord>, crate::store::StoreError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let filtered = set(&q.actor).is_some()
        || set(&q.action).is_some()
        || set(&q.since).is_some()
        || set(&q.until).is_some();
    let mut after = q.after.unwrap_or(0);
    let mut out = Vec::new();
    loop {
        let page_size = if filtered { SCAN_PAGE } else { limit };
        let rows = audit
            .admin_records(q.workspace.as_deref(), after, page_size)
            .await?;
        let last = rows.len() < usize::try_from(page_size).unwrap_or(usize::MAX);
        for r in rows {
            after = r.seq;
            if q.past_until(&r) {
                return Ok(out);
            }
            if q.keeps(&r) {
                out.push(r);
                if out.len() >= usize::try_from(limit).unwrap_or(usize::MAX) {
                    return Ok(out);
                }
            }
        }
        if last || !filtered {
            return Ok(out);
        }
    }
}

/// `GET /admin/admin-audit`: the rows the query selects, as a JSON list.
pub(crate) async fn export(
    State(st): State<Arc<GatewayState>>,
    Query(q): Query<AdminAuditQuery>,
) -> Response {
    match select(&st.audit, &q).await {
        Ok(rows) => axum::Json(rows).into_response(),
        Err(e) => crate::protocol::render::render(
            crate::protocol::render::Form::Rest,
            &crate::protocol::errors::Refusal::admin(500, &e.to_string()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::backend::AdminIdentity;
    use serde_json::json;

    fn row(seq: i64, ts: &str, kind: &str, subject: &str, action: &str) -> AdminAuditRecord {
        AdminAuditRecord {
            seq,
            ts: ts.into(),
            actor: AdminIdentity {
                kind: kind.into(),
                subject: subject.into(),
                remote: Some("127.0.0.1:5000".into()),
            },
            action: action.into(),
            workspace_id: None,
            status: 200,
            detail: json!({"session": "session:ab12"}),
        }
    }

    #[test]
    fn filters_match_parts_in_any_case() {
        let r = row(
            1,
            "2026-12-07T10:00:00Z",
            "console",
            "oidc:alice@example.com",
            "PUT /admin/workspaces/{ws}/policy",
        );
        let q = |actor: &str, action: &str, since: &str, until: &str| AdminAuditQuery {
            actor: Some(actor.into()),
            action: Some(action.into()),
            since: Some(since.into()),
            until: Some(until.into()),
            ..Default::default()
        };
        assert!(q("SESSION:AB", "policy", "2026-12-07T10", "").keeps(&r));
        assert!(q("oidc:alice", "", "", "").keeps(&r));
        assert!(q("127.0.0.1", "", "", "").keeps(&r));
        assert!(!q("cli", "", "", "").keeps(&r));
        assert!(!q("", "pii", "", "").keeps(&r));
        assert!(!q("", "", "2026-12-07T10:01", "").keeps(&r));
        assert!(q("", "", "", "2026-12-07T10:00").past_until(&r));
        assert!(!q("", "", "", "2026-12-07T10:01").past_until(&r));
    }
}
