//! Many held requests and the console (issue 39, item 8): the serving binary holds sends of
//! 1 MiB each (a policy rule asks for approval), the store API copies them to 200 held requests
//! (holding 200 through an unoptimized build takes two minutes), then the binary, restarted on
//! the same file, serves the workspaces page and the approval queue many times. The process's
//! peak resident memory (VmHWM) grows by a small part of the held bytes, never by the bodies;
//! the counts are exact and the queue pages through every held request, a page at a time.

use crate::common;

use std::collections::HashSet;

use a2a_gateway::errors::Version;
use a2a_gateway::store::Store;
use a2a_gateway::store::backend::{HoldStore, SqliteHolds};
use common::console::{client, login_with};
use common::echo::start_echo;
use common::{seed_file, spawn_serve};
use serde_json::{Value, json};

const TOKEN: &str = "held-admin";
/// Held requests (the first [`THROUGH_GATEWAY`] held by the gateway, the rest copies of them),
/// and the bytes of each one's file part (base64 characters).
const HELD: usize = 200;
const THROUGH_GATEWAY: usize = 4;
const PART: usize = 1024 * 1024;
/// Loads of each page.
const LOADS: usize = 10;

/// A process's `VmRSS` and `VmHWM` (peak) in KiB, from `/proc/<pid>/status`.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {status}"))
    };
    (kib("VmRSS:"), kib("VmHWM:"))
}

/// Stops the child however the test ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A 1.0 SendMessage the policy holds: one file part of [`PART`] base64 characters.
fn held_send(i: usize) -> Value {
    let fill = char::from(b'A' + u8::try_from(i % 26).unwrap_or(0));
    let raw: String = std::iter::repeat_n(fill, PART).collect();
    json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {
        "message": {"messageId": format!("held-{i}"), "role": "ROLE_USER",
            "parts": [{"text": format!("refund number {i}")},
                {"raw": raw, "mediaType": "application/octet-stream", "filename": "scan.bin"}]},
        "metadata": {"skill": "refund"},
        "configuration": {"returnImmediately": true}}})
}

async fn admin(base: &str, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut req = client()
        .request(method, format!("{base}{path}"))
        .bearer_auth(TOKEN);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    assert!(status < 300, "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

async fn page(base: &str, cookie: &str, path: &str) -> String {
    let r = client()
        .get(format!("{base}{path}"))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "{path}");
    r.text().await.unwrap()
}

/// The `data-approval` ids of a queue page's rows.
fn row_ids(html: &str) -> Vec<String> {
    html.match_indices("<tr data-approval=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect()
}

/// The href of the queue's link to older approvals, unescaped.
fn older(html: &str) -> Option<String> {
    let at = html.find(r#"id="older" href=""#)?;
    let rest = &html[at + r#"id="older" href=""#.len()..];
    Some(rest[..rest.find('"')?].replace("&amp;", "&"))
}

/// The cell of the pending count in the workspaces page's row of `ws`.
fn pending_cell(html: &str, ws: &str) -> String {
    let at = html
        .find(&format!(">{ws}</a></th>"))
        .unwrap_or_else(|| panic!("no row of {ws}"));
    let row = &html[at..at + html[at..].find("</tr>").unwrap()];
    let last = row.rfind("<td>").unwrap();
    row[last + 4..row.rfind("</td>").unwrap()].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_pages_over_200_held_mebibyte_sends_read_no_bodies() {
    let peer = start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        Version::V1,
        None,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "echo", &peer.url);
    let args = ["--admin-token", TOKEN, "--approval-wait", "0"];
    let (child, base) = spawn_serve(&db, &args);
    let gw = Child(child);
    let rule = json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'",
        "decision": "approve"}]});
    admin(
        &base,
        reqwest::Method::PUT,
        "/admin/workspaces/ws/policy",
        Some(rule),
    )
    .await;
    admin(
        &base,
        reqwest::Method::POST,
        "/admin/workspaces",
        Some(json!({"id": "quiet", "name": "Nothing held"})),
    )
    .await;
    let http = reqwest::Client::new();
    let mut calls = Vec::new();
    for i in 0..THROUGH_GATEWAY {
        let (http, url, key) = (http.clone(), format!("{base}/a2a/echo"), key.clone());
        calls.push(tokio::spawn(async move {
            let r = http
                .post(url)
                .bearer_auth(key)
                .header("A2A-Version", "1.0")
                .json(&held_send(i))
                .send()
                .await
                .unwrap();
            let v: Value = r.json().await.unwrap();
            let id = v["result"]["task"]["metadata"]["approvalId"].as_str();
            id.unwrap_or_else(|| panic!("not held: {v}")).to_owned()
        }));
    }
    let mut live = Vec::new();
    for c in calls {
        live.push(c.await.unwrap());
    }
    assert!(peer.last_body().is_null(), "nothing reached the peer");
    drop(gw);
    let mut ids: HashSet<String> = live.iter().cloned().collect();
    {
        let approvals = SqliteHolds::new(Store::open(&db).unwrap());
        let stored = held_send(0)["params"].to_string().len();
        for n in THROUGH_GATEWAY..HELD {
            let mut a = approvals
                .approval("ws", &live[n % THROUGH_GATEWAY])
                .await
                .unwrap()
                .unwrap();
            assert_eq!(a.params.len(), stored);
            a.summary.id = format!("copy{n:04}");
            a.summary.created_at -= i64::try_from(n).unwrap();
            approvals.create_approval(&a).await.unwrap();
            ids.insert(a.summary.id.clone());
        }
    }
    assert_eq!(ids.len(), HELD);
    let (child, base) = spawn_serve(&db, &args);
    let gw = Child(child);
    // Two of them denied: 198 pending, 2 denied.
    let denied: Vec<String> = ids.iter().take(2).cloned().collect();
    for id in &denied {
        let path = format!("/admin/workspaces/ws/approvals/{id}/deny");
        let body = json!({"approver": "ana", "reason": "no"});
        admin(&base, reqwest::Method::POST, &path, Some(body)).await;
    }
    drop(gw);
    // A fresh process over the same file: its peak memory is what the pages cost.
    let (child, base) = spawn_serve(&db, &args);
    let gw = Child(child);
    let pid = gw.0.id();
    let (code, cookie) = login_with(&client(), &base, TOKEN).await;
    assert_eq!(code, 303);
    let cookie = cookie.unwrap();
    let (rss0, hwm0) = memory(pid);
    let (mut workspaces, mut queue) = (String::new(), String::new());
    for _ in 0..LOADS {
        workspaces = page(&base, &cookie, "/console").await;
        queue = page(&base, &cookie, "/console/approvals").await;
    }
    let (rss1, hwm1) = memory(pid);
    let held_kib = u64::try_from(HELD * PART / 1024).unwrap();
    eprintln!(
        "{HELD} held of {PART} B ({held_kib} KiB); {LOADS} loads of each page: \
         VmRSS {rss0} -> {rss1} KiB, VmHWM {hwm0} -> {hwm1} KiB"
    );
    assert!(
        hwm1.saturating_sub(hwm0) < held_kib / 8,
        "the peak grew by {} KiB over {held_kib} KiB held",
        hwm1 - hwm0
    );
    // Exact counts: 198 pending in ws, none in the workspace without holds.
    assert_eq!(pending_cell(&workspaces, "ws"), "198", "{workspaces}");
    assert_eq!(pending_cell(&workspaces, "quiet"), "0");
    assert!(queue.len() < 256 * 1024, "{} bytes", queue.len());
    // The queue, a page at a time: every pending approval once, none denied.
    let mut seen = HashSet::new();
    let mut html = page(&base, &cookie, "/console/approvals?workspace=ws").await;
    assert!(html.contains("198 pending"), "{html}");
    let mut pages = 1;
    loop {
        let rows = row_ids(&html);
        assert!(!rows.is_empty() && rows.len() <= 50, "{} rows", rows.len());
        for id in rows {
            assert!(seen.insert(id.clone()), "{id} twice");
        }
        let Some(next) = older(&html) else { break };
        html = page(&base, &cookie, &next).await;
        pages += 1;
    }
    assert_eq!(pages, 4);
    let pending: HashSet<String> = ids
        .difference(&denied.iter().cloned().collect())
        .cloned()
        .collect();
    assert_eq!(seen, pending);
    let denied_page = page(
        &base,
        &cookie,
        "/console/approvals?workspace=ws&state=denied",
    )
    .await;
    let mut shown = row_ids(&denied_page);
    shown.sort();
    let mut want = denied.clone();
    want.sort();
    assert_eq!(shown, want);
    assert!(denied_page.contains("2 denied"), "{denied_page}");
    // The admin API's list: a page of summaries, no request in them.
    let list = admin(
        &base,
        reqwest::Method::GET,
        "/admin/workspaces/ws/approvals?state=pending&limit=20",
        None,
    )
    .await;
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 20);
    assert!(
        list.iter()
            .all(|a| a.get("params").is_none() && a.get("request").is_none())
    );
    let listed = serde_json::to_string(list).unwrap().len();
    assert!(listed < 20 * 4096, "{listed} bytes for 20 summaries");
    // One approval's page still shows the whole request, also one of 12 MiB (past what the
    // console read of an admin answer before: 8 MiB).
    let one = denied[0].clone();
    let detail = page(
        &base,
        &cookie,
        &format!("/console/workspaces/ws/approvals/{one}"),
    )
    .await;
    assert!(detail.len() > PART, "{} bytes", detail.len());
    {
        let approvals = SqliteHolds::new(Store::open(&db).unwrap());
        let mut a = approvals.approval("ws", &live[0]).await.unwrap().unwrap();
        let mut params: Value = serde_json::from_str(&a.params).unwrap();
        params["message"]["parts"][1]["raw"] = json!("B".repeat(12 << 20));
        a.params = params.to_string();
        a.summary.id = "big".into();
        approvals.create_approval(&a).await.unwrap();
    }
    let detail = page(&base, &cookie, "/console/workspaces/ws/approvals/big").await;
    assert!(detail.len() > 12 << 20, "{} bytes", detail.len());
    assert!(detail.contains("BBBBBBBB"));
    drop(gw);
    peer.shutdown().await;
}
