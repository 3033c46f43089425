//! The console's views over plain HTTP: the hop list's filters, keyset pages and live rows, a
//! hop's page with its trace's records, markup from the store or a peer escaped, and an edit
//! that keeps the agent's write-only credential.

use crate::common;

use a2a_gateway::errors::Version;
use a2a_gateway::store::AuditRecord;
use common::console::*;
use common::*;

/// The `data-seq` of every hop row of a page.
fn seqs(html: &str) -> Vec<i64> {
    html.match_indices("<tr data-seq=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

#[tokio::test]
async fn hop_list_filters_pages_live_rows_and_detail() {
    let env = env(Version::V1).await;
    for i in 0..3 {
        let (status, _) = env
            .rpc("/a2a/echo", Some("1.0"), send10(&format!("hi {i}")))
            .await;
        assert_eq!(status, 200);
    }
    let (_, refused) = env.rpc("/a2a/nope", Some("1.0"), send10("x")).await;
    assert!(refused.get("error").is_some(), "{refused}");
    let c = login(&env).await;
    let (status, all) = c.get("/console/hops").await;
    assert_eq!(status, 200);
    let all_rows = seqs(&all);
    assert_eq!(all_rows.len(), 4, "{all}");
    assert!(all_rows.windows(2).all(|w| w[0] > w[1]), "newest first");
    let (_, refused) = c.get("/console/hops?decision=refused").await;
    assert_eq!(seqs(&refused).len(), 1);
    assert!(refused.contains("nope"));
    let (_, echo) = c.get("/console/hops?workspace=ws1&agent=echo").await;
    assert_eq!(seqs(&echo).len(), 3);
    let (_, other) = c.get("/console/hops?workspace=ws2").await;
    assert!(seqs(&other).is_empty() && other.contains("No hops match."));
    let (_, future) = c.get("/console/hops?since=2999-01-01T00:00").await;
    assert!(seqs(&future).is_empty());
    let (_, past) = c.get("/console/hops?until=2000-01-01T00:00").await;
    assert!(seqs(&past).is_empty());
    let (status, bad) = c.get("/console/hops?since=yesterday").await;
    assert_eq!(status, 400);
    assert!(bad.contains("is not a time like"));
    // Live rows: those after a sequence number, as table rows.
    let newest = all_rows[0];
    let (status, none) = c.get(&format!("/console/hops/live?after={newest}")).await;
    assert_eq!(status, 200);
    assert!(none.is_empty());
    let (_, live) = c
        .get(&format!(
            "/console/hops/live?agent=echo&after={}",
            all_rows[3]
        ))
        .await;
    // The newest (refused, to "nope") is not echo's, the oldest is the bound: two rows.
    assert_eq!(seqs(&live), vec![all_rows[1], all_rows[2]]);
    // Keyset pages: 60 more hops of ws2, 50 a page, "Older" continues below the last.
    for i in 0..60 {
        env.store
            .append_audit(&AuditRecord {
                trace_id: format!("{i:032x}"),
                workspace_id: Some("ws2".into()),
                target: Some("far".into()),
                decision: "allowed".into(),
                status: 200,
                ..Default::default()
            })
            .unwrap();
    }
    let (_, first) = c.get("/console/hops?workspace=ws2").await;
    let first_rows = seqs(&first);
    assert_eq!(first_rows.len(), 50);
    let last = *first_rows.last().unwrap();
    let older = format!("/console/hops?workspace=ws2&amp;before={last}");
    assert!(first.contains(&older), "an Older link");
    let (_, second) = c
        .get(&format!("/console/hops?workspace=ws2&before={last}"))
        .await;
    let second_rows = seqs(&second);
    assert_eq!(second_rows.len(), 10);
    assert!(second_rows.iter().all(|s| *s < last));
    assert!(
        !second.contains("before="),
        "no Older link on the last page"
    );
    // A hop's page: its trace's records (intent and final) and its facts.
    let (status, detail) = c.get(&format!("/console/hops/{}", all_rows[1])).await;
    assert_eq!(status, 200);
    assert!(detail.contains("Audit records of this trace"));
    assert!(detail.contains("SendMessage") && detail.contains("JSONRPC"));
    // Its intent record (written before the peer call) is shown as such, not as unfinished.
    assert_eq!(seqs(&detail).len(), 2, "intent and final record");
    assert!(detail.contains(">intent</td>") && !detail.contains("incomplete"));
    let (status, _) = c.get("/console/hops/999999").await;
    assert_eq!(status, 404);
    env.stop().await;
}

#[tokio::test]
async fn markup_from_the_store_is_escaped() {
    let env = env(Version::V1).await;
    env.store
        .create_workspace("ws3", "<script>alert('name')</script>")
        .unwrap();
    env.store
        .create_key("ws1", &[], Some("<img src=x onerror=alert(1)>"), None)
        .unwrap();
    let c = login(&env).await;
    let (_, ws) = c.get("/console").await;
    assert!(ws.contains("&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;"));
    assert!(!ws.contains("<script>alert"));
    let (_, keys) = c.get("/console/workspaces/ws1/keys").await;
    assert!(keys.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!keys.contains("<img"));
    env.stop().await;
}

#[tokio::test]
async fn editing_an_agent_keeps_its_credential_unseen() {
    let env = env(Version::V1).await;
    let c = login(&env).await;
    let base = c.base.clone();
    let endpoint = env.store.agent("ws1", "echo").unwrap().unwrap().endpoint;
    let (status, _) = c
        .post(
            "/console/workspaces/ws1/agents",
            &[
                ("agent_id", "second"),
                ("endpoint", &endpoint),
                ("credential", "sekret-cred"),
                ("skills", "echo, other"),
                ("csrf", &c.csrf),
            ],
            Some(&base),
        )
        .await;
    assert_eq!(status, 303);
    let a = env.store.agent("ws1", "second").unwrap().unwrap();
    assert_eq!(a.credential.as_deref(), Some("sekret-cred"));
    assert_eq!(a.skills, Some(vec!["echo".into(), "other".into()]));
    let (status, page) = c.get("/console/workspaces/ws1/agents/second").await;
    assert_eq!(status, 200);
    assert!(!page.contains("sekret-cred"));
    assert!(page.contains("echo, other"));
    // Saved again with the credential field empty: the stored one stays.
    let (status, _) = c
        .post(
            "/console/workspaces/ws1/agents",
            &[
                ("agent_id", "second"),
                ("endpoint", &endpoint),
                ("credential", ""),
                ("skills", ""),
                ("csrf", &c.csrf),
            ],
            Some(&base),
        )
        .await;
    assert_eq!(status, 303);
    let a = env.store.agent("ws1", "second").unwrap().unwrap();
    assert_eq!(a.credential.as_deref(), Some("sekret-cred"));
    assert_eq!(a.skills, None);
    let (_, list) = c.get("/console/workspaces/ws1").await;
    assert!(list.contains("second") && !list.contains("sekret-cred"));
    let (status, _) = c
        .post(
            "/console/workspaces/ws1/agents/second/delete",
            &[("csrf", &c.csrf)],
            Some(&base),
        )
        .await;
    assert_eq!(status, 303);
    assert!(env.store.agent("ws1", "second").unwrap().is_none());
    env.stop().await;
}
