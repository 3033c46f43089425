//! A held hop's story, told on the page of any of its parts: held (the hop the policy held),
//! then approved or denied by whom and when (the decision's audit row), then the peer task it
//! became (the hops on that task), with a link to each.
//!
//! The approval's facts come from the approvals' store (state, approver, reason, peer task);
//! the held hop and the decision are audit rows found from one another: the held hop's task is
//! `gw-approval-<id>` and the decision row names the approval in its evidence. Each is looked
//! for among the same agent's rows next to the one shown (at most [`super::hop_filter::MAX_SCAN`]).

use std::fmt::Write;

use super::backend::seg;
use super::hop_filter::{BATCH, Kind, MAX_SCAN, kind};
use super::html::{esc, unix};
use crate::governance::approval::{ApprovalSummary, TASK_PREFIX};
use crate::state::GatewayState;
use crate::store::backend::{AuditStore, HoldStore};
use crate::store::{AuditRecord, HopFilter};

/// The parts of a held hop's story that were found.
#[derive(Debug, Default)]
pub(crate) struct Story {
    /// The approval's facts (`None`: no longer in the store).
    pub approval: Option<ApprovalSummary>,
    /// The approval id.
    pub id: String,
    /// The workspace and agent.
    pub workspace: String,
    pub agent: String,
    /// The held hop's row.
    pub held: Option<AuditRecord>,
    /// The decision's row.
    pub decision: Option<AuditRecord>,
}

impl Story {
    /// The peer task the held hop became, once approved and sent.
    pub(crate) fn peer_task(&self) -> Option<&str> {
        self.approval
            .as_ref()
            .and_then(|a| a.peer_task_id.as_deref())
            .or_else(|| self.decision.as_ref().and_then(|d| d.task_id.as_deref()))
    }
}

/// The story `rec` is part of, if it is a held hop or a decision on one.
pub(crate) async fn assemble(st: &GatewayState, rec: &AuditRecord) -> Option<Story> {
    let (id, is_held) = match kind(rec) {
        Kind::Held(id) => (id, true),
        Kind::Decision { id, .. } => (id, false),
        _ => return None,
    };
    let workspace = rec.workspace_id.clone()?;
    let agent = rec.target.clone().unwrap_or_default();
    let approval = st
        .holds
        .approval_summary(&workspace, &id)
        .await
        .ok()
        .flatten();
    let mut story = Story {
        approval,
        id,
        workspace,
        agent,
        ..Story::default()
    };
    if is_held {
        story.held = Some(rec.clone());
        story.decision = find_decision(st, &story, rec.seq).await;
    } else {
        story.decision = Some(rec.clone());
        story.held = find_held(st, &story, rec.seq).await;
    }
    Some(story)
}

/// The decision row on `s.id`, after the held hop `after` (oldest first).
async fn find_decision(st: &GatewayState, s: &Story, mut after: i64) -> Option<AuditRecord> {
    let decided = s
        .approval
        .as_ref()
        .is_none_or(|a| !matches!(a.state.as_str(), "pending" | "expired"));
    if !decided {
        return None;
    }
    let mut scanned = 0;
    while scanned < MAX_SCAN {
        let batch = st
            .audit
            .records(Some(&s.workspace), Some(&s.agent), after, BATCH)
            .await
            .ok()?;
        let full = batch.len() as i64 == BATCH;
        for r in batch {
            scanned += 1;
            after = r.seq;
            if matches!(kind(&r), Kind::Decision { ref id, .. } if *id == s.id) {
                return Some(r);
            }
        }
        if !full {
            return None;
        }
    }
    None
}

/// The held hop of `s.id`, before the decision row `before` (newest first).
async fn find_held(st: &GatewayState, s: &Story, before: i64) -> Option<AuditRecord> {
    let f = HopFilter {
        workspace: Some(s.workspace.clone()),
        agent: Some(s.agent.clone()),
        ..HopFilter::default()
    };
    let task = format!("{TASK_PREFIX}{}", s.id);
    let mut cursor = Some(before);
    let mut scanned = 0;
    while scanned < MAX_SCAN {
        let batch = st.audit.hop_page(&f, cursor, BATCH).await.ok()?;
        let full = batch.len() as i64 == BATCH;
        for r in batch {
            scanned += 1;
            cursor = Some(r.seq);
            if r.task_id.as_deref() == Some(task.as_str()) {
                return Some(r);
            }
        }
        if !full {
            return None;
        }
    }
    None
}

/// A link to hop `seq`, or "this hop" when it is the page's own.
fn hop_link(seq: i64, current: i64) -> String {
    if seq == current {
        format!(r#"<a href="/console/hops/{seq}" aria-current="step">hop {seq}</a> (this page)"#)
    } else {
        format!(r#"<a href="/console/hops/{seq}">hop {seq}</a>"#)
    }
}

/// The story as an ordered list, `current` the sequence number of the page showing it.
pub(crate) fn render(s: &Story, current: i64) -> String {
    let a = s.approval.as_ref();
    let approval_href = format!(
        "/console/workspaces/{}/approvals/{}",
        seg(&s.workspace),
        seg(&s.id)
    );
    let mut out = String::from(r#"<ol class="story">"#);
    // 1. Held.
    let held_at = s.held.as_ref().map_or_else(
        || a.map_or_else(String::new, |a| unix(a.created_at)),
        |h| h.ts.get(..19).unwrap_or(&h.ts).replace('T', " ") + "Z",
    );
    let rule = a
        .and_then(|a| a.rule.as_deref())
        .map(|r| format!(" by rule <code>{}</code>", esc(r)))
        .unwrap_or_default();
    let held_link = s.held.as_ref().map_or_else(
        || "the held hop is no longer in the audit".to_owned(),
        |h| hop_link(h.seq, current),
    );
    let _ = write!(
        out,
        r#"<li data-step="held"><strong>Held</strong> at {at}{rule}: {held_link} · <a href="{ah}">approval {id}</a></li>"#,
        at = esc(&held_at),
        ah = esc(&approval_href),
        id = esc(&s.id),
    );
    // 2. Decided.
    let state = a.map_or("unknown", |a| a.state.as_str());
    let decided = match (&s.decision, state) {
        (_, "pending") => format!(
            "<strong>Waiting</strong> for a decision (the hold ends {}): <a href=\"{}\">decide it</a>",
            a.map_or_else(String::new, |a| esc(&unix(a.expires_at))),
            esc(&approval_href)
        ),
        (_, "expired") => {
            "<strong>Expired</strong>: nobody decided before the hold ended; nothing was sent"
                .to_owned()
        }
        (Some(d), _) => {
            let (verb, who) = match kind(d) {
                Kind::Decision {
                    state, approver, ..
                } => (state, approver),
                _ => (state.to_owned(), String::new()),
            };
            let who = a
                .and_then(|a| a.approver.clone())
                .filter(|w| !w.is_empty())
                .unwrap_or(who);
            let reason = a
                .and_then(|a| a.reason.as_deref())
                .filter(|r| !r.is_empty())
                .map(|r| format!(" (reason: {})", esc(r)))
                .unwrap_or_default();
            format!(
                "<strong>{}</strong> by <span class=\"who\">{}</span> at {}{reason}: {}",
                esc(&capitalize(&verb)),
                esc(if who.is_empty() { "?" } else { &who }),
                esc(&(d.ts.get(..19).unwrap_or(&d.ts).replace('T', " ") + "Z")),
                hop_link(d.seq, current)
            )
        }
        (None, st) => format!(
            "<strong>{}</strong>{} (its audit row was not found)",
            esc(&capitalize(st)),
            a.and_then(|a| a.approver.as_deref())
                .map(|w| format!(" by <span class=\"who\">{}</span>", esc(w)))
                .unwrap_or_default()
        ),
    };
    let _ = write!(out, r#"<li data-step="decision">{decided}</li>"#);
    // 3. The peer task.
    let task = match (s.peer_task(), state) {
        (Some(t), _) => format!(
            r#"<strong>Sent</strong>: it became the peer's task <a href="/console/hops?{q}"><code>{t}</code></a> (its hops)"#,
            q = esc(&format!(
                "workspace={}&agent={}&task={}",
                seg(&s.workspace),
                seg(&s.agent),
                seg(t)
            )),
            t = esc(t),
        ),
        (None, "denied" | "expired" | "withdrawn") => {
            "<strong>Not sent</strong>: the peer never saw it".to_owned()
        }
        (None, "failed") => {
            "<strong>Not sent</strong>: approved, but the release was refused (see the decision)"
                .to_owned()
        }
        (None, _) => "<strong>Not sent yet</strong>".to_owned(),
    };
    let _ = write!(out, r#"<li data-step="task">{task}</li></ol>"#);
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(state: &str, approver: Option<&str>, task: Option<&str>) -> ApprovalSummary {
        ApprovalSummary {
            id: "ab12".into(),
            workspace_id: "w".into(),
            agent_id: "echo".into(),
            caller_version: "1.0".into(),
            preview: json!({}),
            context_id: "c".into(),
            state: state.into(),
            rule: Some("needs-a-person".into()),
            approver: approver.map(Into::into),
            reason: None,
            peer_task_id: task.map(Into::into),
            chain: vec![],
            extensions: vec![],
            created_at: 0,
            expires_at: 60,
            key_id: None,
            refusal: None,
        }
    }

    fn row(seq: i64, method: Option<&str>, approver: &str) -> AuditRecord {
        AuditRecord {
            seq,
            ts: "2026-12-07T10:00:00.5Z".into(),
            client_method: method.map(Into::into),
            governance: Some(json!({"approval": {"id": "ab12", "approver": approver}})),
            ..Default::default()
        }
    }

    #[test]
    fn a_decided_story_links_its_three_parts() {
        let s = Story {
            approval: Some(summary("approved", Some("alice"), Some("t-9"))),
            id: "ab12".into(),
            workspace: "w".into(),
            agent: "echo".into(),
            held: Some(row(4, None, "")),
            decision: Some(row(9, Some("approval:approved"), "alice")),
        };
        let html = render(&s, 4);
        assert!(
            html.contains(r#"href="/console/hops/4" aria-current="step""#),
            "{html}"
        );
        assert!(html.contains(r#"href="/console/hops/9""#), "{html}");
        assert!(html.contains(
            "Approved</strong> by <span class=\"who\">alice</span> at 2026-12-07 10:00:00Z"
        ));
        assert!(
            html.contains("/console/hops?workspace=w&amp;agent=echo&amp;task=t-9"),
            "{html}"
        );
        assert!(html.contains("/console/workspaces/w/approvals/ab12"));
    }

    #[test]
    fn a_pending_or_denied_story_says_so() {
        let mut s = Story {
            approval: Some(summary("pending", None, None)),
            id: "ab12".into(),
            workspace: "w".into(),
            agent: "echo".into(),
            held: Some(row(4, None, "")),
            decision: None,
        };
        assert!(render(&s, 4).contains("Waiting</strong> for a decision"));
        s.approval = Some(summary("denied", Some("bob"), None));
        s.decision = Some(row(7, Some("approval:denied"), "bob"));
        let html = render(&s, 7);
        assert!(
            html.contains("Denied</strong> by <span class=\"who\">bob</span>"),
            "{html}"
        );
        assert!(html.contains("Not sent</strong>: the peer never saw it"));
        assert!(html.contains(r#"href="/console/hops/4">hop 4</a>"#));
    }
}
