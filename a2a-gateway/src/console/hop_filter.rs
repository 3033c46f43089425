//! The hop list's filters (query parameters, so a filtered list is a bookmark and its live
//! updates keep the filter) and what kind of audit row a hop is.
//!
//! Workspace, agent, time and the stored decisions go to the store's keyset query
//! ([`HopFilter`], each served by an index). The rest (held hops, approval decisions, error
//! code, operation, version, binding, text in the trace id, task, and hiding card fetches) are
//! tested on the rows that query returns: [`scan`] reads pages of [`BATCH`] until it has a
//! page of matches or has looked at [`MAX_SCAN`] rows, and says where to go on ("Older").

use serde::Deserialize;

use crate::state::GatewayState;
use crate::store::backend::AuditStore;
use crate::store::{AuditRecord, HopFilter, StoreError};

/// Decisions offered in the filter: the stored ones, and `held` (a hop held for approval) and
/// `approval` (a person's decision on one), told apart by their evidence.
pub(crate) const DECISIONS: [&str; 7] = [
    "allowed",
    "refused",
    "held",
    "approval",
    "killed",
    "duplicate",
    "stream",
];
/// Bindings offered in the filter (as the audit names them).
pub(crate) const BINDINGS: [&str; 3] = ["JSONRPC", "HTTP+JSON", "GRPC"];
/// Versions offered in the filter.
pub(crate) const VERSIONS: [&str; 2] = ["0.3", "1.0"];
/// Operations offered in the filter (as the audit names them: A2A 0.3 method names, the card
/// read, pushes and the gateway's own rows).
pub(crate) const OPERATIONS: [&str; 14] = [
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "agent/card",
    "agent/getAuthenticatedExtendedCard",
    "push:notify",
    "admin:kill",
];
/// Rows read per store call while scanning.
pub(crate) const BATCH: i64 = 200;
/// Rows looked at for one page at most.
pub(crate) const MAX_SCAN: usize = 5_000;

/// What an audit row is, for the list and the overview.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// A hop (allowed, refused, ...).
    Hop,
    /// A hop held for approval `id`.
    Held(String),
    /// A person's decision (`approved`/`denied`) on approval `id`, by `approver`.
    Decision {
        id: String,
        state: String,
        approver: String,
    },
    /// A read of an agent's card (public or extended).
    Card,
    /// Evidence of a governed stream, after its hop (`decision = "stream"`).
    Stream,
    /// A row the gateway writes for itself (a session kill, a sequence gap).
    Gateway,
}

/// The kind of `r` (see [`Kind`]).
pub(crate) fn kind(r: &AuditRecord) -> Kind {
    let approval = r.governance.as_ref().and_then(|g| g.get("approval"));
    let field = |k: &str| {
        approval
            .and_then(|a| a.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    if let Some(m) = r.client_method.as_deref()
        && let Some(state) = m.strip_prefix("approval:")
    {
        return Kind::Decision {
            id: field("id"),
            state: state.to_owned(),
            approver: field("approver"),
        };
    }
    let op = r.operation.as_deref().unwrap_or("");
    if op.starts_with("admin:") || op.starts_with("audit:") {
        return Kind::Gateway;
    }
    if r.decision == "stream" {
        return Kind::Stream;
    }
    if matches!(op, "agent/card" | "agent/getAuthenticatedExtendedCard") {
        return Kind::Card;
    }
    if approval.is_some() && !field("id").is_empty() {
        return Kind::Held(field("id"));
    }
    Kind::Hop
}

/// Whether `r` counts as a hop in the overview (as `a2a_requests_total` counts them): every
/// row but a person's decision, stream evidence and the gateway's own rows.
pub(crate) fn is_hop(r: &AuditRecord) -> bool {
    matches!(kind(r), Kind::Hop | Kind::Held(_) | Kind::Card)
}

/// The query string of the hop list.
#[derive(Deserialize, Default, Debug, Clone)]
pub(crate) struct HopQuery {
    #[serde(default)]
    pub workspace: String,
    #[serde(default)]
    pub agent: String,
    #[serde(default)]
    pub decision: String,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub operation: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub binding: String,
    #[serde(default)]
    pub trace: String,
    #[serde(default)]
    pub task: String,
    /// `1`: card fetches shown (hidden otherwise).
    #[serde(default)]
    pub cards: String,
    #[serde(default)]
    pub since: String,
    #[serde(default)]
    pub until: String,
    pub before: Option<i64>,
    pub after: Option<i64>,
}

/// A `datetime-local` value (`YYYY-MM-DDTHH:MM[:SS]`, read as UTC) or nothing.
pub(crate) fn time_bound(s: &str) -> Result<Option<String>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let ok = s.len() >= 16
        && s.len() <= 19
        && s.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            _ => b.is_ascii_digit(),
        });
    if ok {
        Ok(Some(s.to_owned()))
    } else {
        Err(format!("{s:?} is not a time like 2026-01-31T13:45 (UTC)"))
    }
}

impl HopQuery {
    /// Whether card fetches are shown.
    pub(crate) fn cards(&self) -> bool {
        self.cards == "1"
    }

    /// The store's part of the filter; refuses a value no row can have.
    pub(crate) fn filter(&self) -> Result<HopFilter, String> {
        let some = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
        let d = self.decision.trim();
        if !d.is_empty() && !DECISIONS.contains(&d) {
            return Err(format!(
                "{d:?} is not a decision (one of {})",
                DECISIONS.join(", ")
            ));
        }
        if !self.version.is_empty() && !VERSIONS.contains(&self.version.as_str()) {
            return Err(format!(
                "{:?} is not an A2A version (0.3 or 1.0)",
                self.version
            ));
        }
        if !self.binding.is_empty() && !BINDINGS.contains(&self.binding.as_str()) {
            return Err(format!(
                "{:?} is not a binding (one of {})",
                self.binding,
                BINDINGS.join(", ")
            ));
        }
        let t = self.trace.trim();
        if !t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("{t:?}: a trace id has hex digits only"));
        }
        Ok(HopFilter {
            workspace: some(&self.workspace),
            agent: some(&self.agent),
            // A held hop is stored `allowed`; a decision is either.
            decision: match d {
                "" | "approval" => None,
                "held" => Some("allowed".into()),
                d => Some(d.to_owned()),
            },
            since: time_bound(&self.since)?,
            until: time_bound(&self.until)?,
        })
    }

    /// Whether some filter is tested on the rows (not by the store): then pages are scanned.
    pub(crate) fn scans(&self) -> bool {
        !self.cards()
            || matches!(self.decision.trim(), "held" | "approval")
            || [
                &self.code,
                &self.operation,
                &self.version,
                &self.binding,
                &self.trace,
                &self.task,
            ]
            .iter()
            .any(|v| !v.trim().is_empty())
    }

    /// Whether `r` passes the filters the store does not apply.
    pub(crate) fn matches(&self, r: &AuditRecord) -> bool {
        let k = kind(r);
        if k == Kind::Card && !self.cards() && self.operation.trim().is_empty() {
            return false;
        }
        match self.decision.trim() {
            "held" if !matches!(k, Kind::Held(_)) => return false,
            "approval" if !matches!(k, Kind::Decision { .. }) => return false,
            // A decision is stored `allowed` (or `refused`, a release the peer refused): it
            // is shown under `approval`, not as an allowed hop.
            "allowed" | "refused" if matches!(k, Kind::Decision { .. }) => return false,
            _ => {}
        }
        let eq = |want: &str, have: Option<&str>| {
            let want = want.trim();
            want.is_empty() || have == Some(want)
        };
        let either = |want: &str, a: &Option<String>, b: &Option<String>| {
            want.is_empty() || a.as_deref() == Some(want) || b.as_deref() == Some(want)
        };
        let trace = self.trace.trim().to_ascii_lowercase();
        let task = self.task.trim();
        eq(&self.code, r.error_code.as_deref())
            && eq(&self.operation, r.operation.as_deref())
            && either(&self.version, &r.client_version, &r.peer_version)
            && either(&self.binding, &r.client_binding, &r.peer_binding)
            && (trace.is_empty() || r.trace_id.to_ascii_lowercase().contains(&trace))
            && (task.is_empty() || r.task_id.as_deref() == Some(task))
    }

    /// The filters as a query string (for paging links and live updates).
    pub(crate) fn query(&self) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("workspace", &self.workspace),
            ("agent", &self.agent),
            ("decision", &self.decision),
            ("code", &self.code),
            ("operation", &self.operation),
            ("version", &self.version),
            ("binding", &self.binding),
            ("trace", &self.trace),
            ("task", &self.task),
            ("cards", &self.cards),
            ("since", &self.since),
            ("until", &self.until),
        ] {
            if !v.trim().is_empty() {
                q.append_pair(k, v.trim());
            }
        }
        q.finish()
    }
}

/// A page of matching hops.
pub(crate) struct Scan {
    /// The matches, newest first.
    pub rows: Vec<AuditRecord>,
    /// Rows looked at.
    pub scanned: usize,
    /// Where the next page starts (`before`), when there may be more.
    pub next: Option<i64>,
    /// The newest row looked at (for live updates: rows after it are new).
    pub newest: Option<i64>,
}

/// Up to `want` hops matching `q`, newest first, with `seq < before` (see the module doc).
pub(crate) async fn scan(
    st: &GatewayState,
    q: &HopQuery,
    f: &HopFilter,
    before: Option<i64>,
    want: usize,
) -> Result<Scan, StoreError> {
    if !q.scans() {
        let rows = st.audit.hop_page(f, before, want as i64).await?;
        let next = (rows.len() == want)
            .then(|| rows.last().map(|r| r.seq))
            .flatten();
        let newest = rows.first().map(|r| r.seq);
        return Ok(Scan {
            scanned: rows.len(),
            rows,
            next,
            newest,
        });
    }
    let mut out = Scan {
        rows: Vec::new(),
        scanned: 0,
        next: None,
        newest: None,
    };
    let mut cursor = before;
    loop {
        let batch = st.audit.hop_page(f, cursor, BATCH).await?;
        let full = batch.len() as i64 == BATCH;
        for r in batch {
            out.scanned += 1;
            out.newest.get_or_insert(r.seq);
            cursor = Some(r.seq);
            if q.matches(&r) {
                out.rows.push(r);
                if out.rows.len() == want {
                    out.next = cursor;
                    return Ok(out);
                }
            }
        }
        if !full {
            return Ok(out);
        }
        if out.scanned >= MAX_SCAN {
            out.next = cursor;
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(s: &str) -> HopQuery {
        serde_urlencoded_like(s)
    }

    /// The query string parsed as axum's `Query` does.
    fn serde_urlencoded_like(s: &str) -> HopQuery {
        let uri: axum::http::Uri = format!("/x?{s}").parse().unwrap();
        axum::extract::Query::<HopQuery>::try_from_uri(&uri)
            .unwrap()
            .0
    }

    fn rec(op: &str, decision: &str) -> AuditRecord {
        AuditRecord {
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            operation: Some(op.into()),
            decision: decision.into(),
            client_version: Some("1.0".into()),
            client_binding: Some("JSONRPC".into()),
            peer_version: Some("0.3".into()),
            peer_binding: Some("HTTP+JSON".into()),
            ..Default::default()
        }
    }

    #[test]
    fn filters_parse_and_round_trip() {
        let a = q(
            "workspace=w&decision=held&code=a2a_policy_denied&version=0.3&binding=GRPC&trace=4BF9&cards=1&since=2026-01-31T13:45",
        );
        let f = a.filter().unwrap();
        assert_eq!(f.workspace.as_deref(), Some("w"));
        assert_eq!(
            f.decision.as_deref(),
            Some("allowed"),
            "held is stored allowed"
        );
        assert_eq!(f.since.as_deref(), Some("2026-01-31T13:45"));
        assert!(a.scans() && a.cards());
        let again = q(&a.query());
        assert_eq!(again.query(), a.query());
        assert!(q("decision=approval").filter().unwrap().decision.is_none());
        // Nothing but the store's filters, card fetches shown: the store pages alone.
        assert!(!q("workspace=w&decision=refused&cards=1").scans());
        for bad in [
            "decision=maybe",
            "version=2.0",
            "binding=SOAP",
            "trace=xyz",
            "since=today",
        ] {
            assert!(q(bad).filter().is_err(), "{bad}");
        }
    }

    #[test]
    fn rows_match_the_row_filters() {
        let send = rec("message/send", "allowed");
        let card = rec("agent/card", "allowed");
        assert!(q("").matches(&send));
        assert!(!q("").matches(&card), "card fetches hidden by default");
        assert!(q("cards=1").matches(&card));
        assert!(q("operation=agent/card").matches(&card));
        assert!(q("version=0.3").matches(&send) && q("version=1.0").matches(&send));
        assert!(q("binding=HTTP%2BJSON").matches(&send));
        assert!(!q("binding=GRPC").matches(&send));
        assert!(q("trace=3CE929").matches(&send));
        assert!(!q("trace=ffff").matches(&send));
        assert!(!q("code=a2a_policy_denied").matches(&send));
        let mut held = send.clone();
        held.governance =
            Some(json!({"approval": {"id": "ab12", "approver": "", "state": "pending"}}));
        held.task_id = Some("gw-approval-ab12".into());
        assert_eq!(kind(&held), Kind::Held("ab12".into()));
        assert!(q("decision=held").matches(&held) && !q("decision=held").matches(&send));
        assert!(q("task=gw-approval-ab12").matches(&held));
        let mut decided = send.clone();
        decided.client_method = Some("approval:approved".into());
        decided.governance =
            Some(json!({"approval": {"id": "ab12", "approver": "alice", "state": "approved"}}));
        assert_eq!(
            kind(&decided),
            Kind::Decision {
                id: "ab12".into(),
                state: "approved".into(),
                approver: "alice".into()
            }
        );
        assert!(q("decision=approval").matches(&decided));
        assert!(!q("decision=allowed").matches(&decided));
        assert!(is_hop(&held) && is_hop(&card) && !is_hop(&decided));
        assert!(!is_hop(&rec("admin:kill", "killed")) && !is_hop(&rec("message/send", "stream")));
    }

    #[test]
    fn time_bounds() {
        assert_eq!(
            time_bound("2026-01-31T13:45").unwrap().as_deref(),
            Some("2026-01-31T13:45")
        );
        assert_eq!(time_bound(" ").unwrap(), None);
        assert!(time_bound("yesterday").is_err());
        assert!(time_bound("2026-01-31 13:45").is_err());
    }
}
