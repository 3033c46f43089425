//! Approval test helpers: held sends, decisions, the queue, events of a stream.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use super::gov::admin;
use super::{Env, send03, send10};

pub fn policy() -> Value {
    json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'", "decision": "approve"}]})
}

/// A send of `parts` (1.0 form) held by [`policy`]; `v` `None` is 0.3 (parts turned into the
/// 0.3 form), non-blocking unless `blocking`.
pub fn held_parts(v: Option<&str>, parts: &[Value], ctx: Option<&str>, blocking: bool) -> Value {
    let mut r = if v.is_some() { send10("") } else { send03("") };
    let parts: Vec<Value> = parts
        .iter()
        .map(|p| match (v, p.get("text"), p.get("data")) {
            (Some(_), _, _) => p.clone(),
            (None, Some(t), _) => json!({"kind": "text", "text": t}),
            (None, None, Some(d)) => json!({"kind": "data", "data": d}),
            _ => p.clone(),
        })
        .collect();
    r["params"]["message"]["parts"] = json!(parts);
    if let Some(c) = ctx {
        r["params"]["message"]["contextId"] = json!(c);
    }
    r["params"]["metadata"] = json!({"skill": "refund"});
    r["params"]["configuration"] = if v.is_some() {
        json!({"returnImmediately": !blocking})
    } else {
        json!({"blocking": blocking})
    };
    r
}

pub fn held(v: Option<&str>, text: &str) -> Value {
    held_parts(v, &[json!({"text": text})], None, false)
}

pub fn result_task(b: &Value) -> &Value {
    let r = &b["result"];
    if r.get("task").is_some() {
        &r["task"]
    } else {
        r
    }
}

pub fn approval_id(b: &Value) -> String {
    let id = result_task(b)["id"].as_str().unwrap_or("");
    assert!(id.starts_with("gw-approval-"), "{b}");
    id.trim_start_matches("gw-approval-").to_owned()
}

pub fn get(v: Option<&str>, gw_task: &str) -> Value {
    let m = if v.is_some() { "GetTask" } else { "tasks/get" };
    json!({"jsonrpc":"2.0","id":"g","method": m,"params":{"id": gw_task}})
}

/// A send into the gateway task `gw_task`.
pub fn send_into(v: Option<&str>, gw_task: &str) -> Value {
    let mut r = if v.is_some() {
        send10("and one more thing")
    } else {
        send03("and one more thing")
    };
    r["params"]["message"]["taskId"] = json!(gw_task);
    r
}

pub async fn decide(env: &Env, id: &str, verb: &str, reason: Option<&str>) -> (u16, Value) {
    admin(
        env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/{verb}"),
        Some(json!({"approver": "ana", "reason": reason})),
    )
    .await
}

/// Opens an SSE request and returns a channel of its events as they arrive.
pub async fn events(
    env: &Env,
    key: &str,
    v: Option<&str>,
    body: Value,
) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
    let mut req = env
        .http
        .post(env.url("/a2a/echo"))
        .header("content-type", "application/json")
        .bearer_auth(key)
        .body(body.to_string());
    if let Some(v) = v {
        req = req.header("A2A-Version", v);
    }
    let resp = req.send().await.unwrap();
    sse_channel(resp)
}

/// The `data:` events of an SSE answer, parsed, on a channel as they arrive (`Null` for one
/// that is not JSON); the channel closes when the stream ends.
pub fn sse_channel(resp: reqwest::Response) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut bytes = resp.bytes_stream();
        let mut buf = String::new();
        while let Some(Ok(chunk)) = bytes.next().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(i) = buf.find("\n\n") {
                let block: String = buf.drain(..i + 2).collect();
                for l in block.lines() {
                    if let Some(d) = l.strip_prefix("data:") {
                        let _ = tx.send(serde_json::from_str(d.trim()).unwrap_or(Value::Null));
                    }
                }
            }
        }
    });
    rx
}

/// Every event until the stream ends (at most 5 s).
pub async fn rest_of(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Value>) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(ev)) => out.push(ev),
            Ok(None) => return out,
            Err(_) => panic!("the stream did not end: {out:?}"),
        }
    }
}

/// The id of the pending approval that appears first (polling the queue).
pub async fn pending_id(env: &Env) -> String {
    for _ in 0..50 {
        let (_, q) = admin(
            env,
            "GET",
            "/admin/workspaces/ws1/approvals?state=pending",
            None,
        )
        .await;
        if let Some(id) = q
            .as_array()
            .and_then(|a| a.first())
            .and_then(|a| a["id"].as_str())
        {
            return id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("nothing held");
}

pub async fn governed(env: &Env) {
    let (s, b) = admin(env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{b}");
    let pii = json!({"actions": {"EMAIL": "redact"}});
    let (s, b) = admin(env, "PUT", "/admin/workspaces/ws1/pii", Some(pii)).await;
    assert_eq!(s, 200, "{b}");
}
