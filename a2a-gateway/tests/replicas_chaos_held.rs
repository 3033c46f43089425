//! Chaos with real processes, continued (issue 32, docs/replicas.md "Failures"): three replicas
//! on one PostgreSQL behind the loopback load balancer. (b) A caller's stream, relayed by the
//! replica the load balancer gave it, is cut by `kill -9` of that replica; the caller resumes
//! through the load balancer (so on another replica) with `Last-Event-ID` and gets the events
//! after that id exactly once, in order, with ids going on from it. The peer numbers no events
//! (the gated peer of `replica_streams.rs`, as the official SDK servers). (c) A blocking send
//! held for approval on a replica that is then killed: the caller's connection drops; the
//! approval, still pending, is decided through another replica, which releases the held
//! request to the peer; the caller's retry of the same send (same message id) through the load
//! balancer gets the approved gateway task naming the released peer task (one approval, one
//! peer call). (d) A caller resumed on replica B of a stream replica A relays follows A's
//! events; `kill -9` of A ends B's stream with the `a2a_stream_relay_lost` error event once
//! A's lease ends.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::common::cluster::{Cluster, WORKSPACE};
use crate::replica_streams::{Frame, gated_peer, shape};
use crate::replicas_chaos::{client, eventually, start};

/// POST of `body` to agent `agent` at `base` (A2A 1.0 JSON-RPC), optionally an SSE request
/// resuming after `last`.
fn post(
    http: &reqwest::Client,
    base: &str,
    agent: &str,
    key: &str,
    body: &Value,
    last: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut r = http
        .post(format!("{base}/a2a/{agent}"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .bearer_auth(key)
        .body(body.to_string());
    if let Some(id) = last {
        r = r
            .header("accept", "text/event-stream")
            .header("Last-Event-ID", id);
    }
    r
}

/// One SSE frame of `text` (the lines between two blank lines).
fn parse(text: &str) -> Frame {
    let mut f = Frame {
        id: None,
        data: None,
        comment: None,
    };
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            f.id = Some(v.trim().to_owned());
        } else if let Some(v) = line.strip_prefix("data:") {
            f.data = serde_json::from_str(v.trim()).ok();
        } else if let Some(v) = line.strip_prefix(':') {
            f.comment = Some(v.trim().to_owned());
        }
    }
    f
}

/// An SSE body read frame by frame.
pub(crate) struct Sse {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: String,
}

impl Sse {
    pub(crate) fn new(resp: reqwest::Response) -> Sse {
        Sse {
            body: resp.bytes_stream().boxed(),
            buf: String::new(),
        }
    }

    /// The next frame; `None` at the end or when the connection drops. A stall of 20 s fails
    /// (a liveness bound).
    pub(crate) async fn next(&mut self) -> Option<Frame> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let text: String = self.buf.drain(..end + 2).collect();
                return Some(parse(&text));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.body.next())
                .await
                .expect("stream stalled");
            match chunk {
                Some(Ok(b)) => self.buf.push_str(&String::from_utf8_lossy(&b)),
                _ => return None,
            }
        }
    }

    /// The next `n` data frames (comments and keep-alives skipped).
    pub(crate) async fn data(&mut self, n: usize) -> Vec<Frame> {
        let mut out = Vec::new();
        while out.len() < n {
            let f = self.next().await.expect("the stream ended early");
            if f.data.is_some() {
                out.push(f);
            } else {
                assert!(f.comment.is_none() || f.id.is_none(), "{f:?}");
            }
        }
        out
    }
}

/// The replica the load balancer gave the one client connection open now.
fn holder(c: &Cluster) -> usize {
    let open = c.lb.open_to();
    assert_eq!(
        open.len(),
        1,
        "one connection open through the load balancer: {open:?}"
    );
    c.index_of(open[0]).expect("a replica's address")
}

/// Rows of `stream_events` of task `task` (written by the relaying replica's writer).
async fn rows_of(c: &Cluster, task: &str) -> i64 {
    let pool = a2a_pg::pool(&c.database, &a2a_pg::PoolOptions::default()).unwrap();
    let rows = a2a_pg::query(
        &pool,
        "SELECT count(*) FROM stream_events WHERE task_id = $1",
        &[&task],
    )
    .await
    .unwrap();
    rows[0].get::<_, i64>(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_by_killing_its_replica_resumes_through_the_load_balancer() {
    let Some((mut c, _echo)) = start(3).await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (peer, peer_task) = gated_peer(gate.clone()).await;
    c.register("steps", &peer).await.unwrap();
    let lb = c.lb.url();
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "s1", "role": "ROLE_USER", "parts": [{"text": "go"}]}}});

    // Through the load balancer: the Task and two steps.
    gate.add_permits(2);
    let http = client();
    let resp = post(&http, &lb, "steps", &c.key, &send, None)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let x = holder(&c);
    let mut sse = Sse::new(resp);
    let head = sse.data(3).await;
    let got: Vec<String> = head.iter().map(shape).collect();
    assert_eq!(got, ["task", "step 0", "step 1"]);
    let task = head[0].data.as_ref().unwrap()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = head[0].id.clone().expect("a gateway event id");
    // The relaying replica's writer has committed the three events (the relay does not wait
    // for it; an event not yet committed when its replica dies is lost to a resume).
    eventually("the events written", 20, || {
        let c = &c;
        let task = task.clone();
        async move { rows_of(c, &task).await >= 3 }
    })
    .await;

    // kill -9 of the relaying replica: the caller's stream drops.
    c.kill(x);
    while let Some(f) = sse.next().await {
        assert!(f.data.is_none(), "an event after the kill: {f:?}");
    }

    // The resume through the load balancer lands on a live replica and reads the table: the
    // events after the Task's id, once each, in order, ids going on from it.
    let http = client();
    let sub =
        json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task}});
    let resp = post(&http, &lb, "steps", &c.key, &sub, Some(&first))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_ne!(holder(&c), x);
    let tail = Sse::new(resp).data(2).await;
    let got: Vec<String> = tail.iter().map(shape).collect();
    assert_eq!(got, ["step 0", "step 1"]);
    let (stream, n) = first.rsplit_once('.').unwrap();
    let n: u64 = n.parse().unwrap();
    for (i, f) in tail.iter().enumerate() {
        assert_eq!(
            f.id.as_deref(),
            Some(format!("{stream}.{}", n + 1 + i as u64).as_str())
        );
    }
    peer_task.abort();
}

/// A blocking SendMessage (A2A 1.0) of `text` with message id `id`, held by the policy.
fn refund(id: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage", "params": {
        "message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]},
        "metadata": {"skill": "refund"}, "configuration": {"returnImmediately": false}}})
}

/// An admin API call through `base`.
async fn admin(
    c: &Cluster,
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = client()
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .bearer_auth(&c.admin_token);
    if let Some(b) = body {
        r = r
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let r = r.send().await.unwrap();
    let s = r.status().as_u16();
    let t = r.text().await.unwrap();
    (s, serde_json::from_str(&t).unwrap_or(Value::String(t)))
}

/// The task a send's claim names (`gateway_sends.task_id` of message id `message`).
async fn claim_of(c: &Cluster, message: &str) -> Option<String> {
    let pool = a2a_pg::pool(&c.database, &a2a_pg::PoolOptions::default()).unwrap();
    let rows = a2a_pg::query(
        &pool,
        "SELECT task_id FROM gateway_sends WHERE message_id = $1",
        &[&message],
    )
    .await
    .unwrap();
    rows.first().and_then(|r| r.get::<_, Option<String>>(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_held_on_a_killed_replica_is_decided_through_another() {
    let Some((mut c, echo)) = start(3).await else {
        return;
    };
    let lb = c.lb.url();
    let policy = json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'", "decision": "approve"}]});
    let path = format!("/admin/workspaces/{WORKSPACE}/policy");
    let (s, r) = admin(&c, &lb, "PUT", &path, Some(policy)).await;
    assert_eq!(s, 200, "{r}");

    // The blocking send, held on the replica the load balancer gives it.
    let (http, key, lb2) = (client(), c.key.clone(), lb.clone());
    let caller = tokio::spawn(async move {
        post(&http, &lb2, "echo", &key, &refund("r1", "refund 10"), None)
            .send()
            .await
    });
    let pending = format!("/admin/workspaces/{WORKSPACE}/approvals?state=pending");
    let direct = c.replicas[0].url();
    let found = Arc::new(std::sync::Mutex::new(String::new()));
    eventually("an approval pending", 20, || {
        let (c, direct, pending, found) = (&c, direct.clone(), pending.clone(), found.clone());
        async move {
            let (_, q) = admin(c, &direct, "GET", &pending, None).await;
            let first = q
                .as_array()
                .and_then(|a| a.first())
                .and_then(|a| a["id"].as_str());
            if let Some(id) = first {
                *found.lock().unwrap() = id.to_owned();
            }
            first.is_some()
        }
    })
    .await;
    let id = found.lock().unwrap().clone();
    assert!(echo.last_body().is_null(), "nothing sent while held");
    // The caller waits once its send's claim names the gateway task (committed before the
    // wait begins): from then on a retry anywhere is answered as the held send.
    let claimed = format!("gw-approval-{id}");
    eventually("the held send's claim completed", 20, || {
        let (c, claimed) = (&c, claimed.clone());
        async move { claim_of(c, "r1").await.as_deref() == Some(claimed.as_str()) }
    })
    .await;
    let x = holder(&c);
    c.kill(x);
    // The waiting caller's connection drops: no answer, no wrong one.
    let cut = tokio::time::timeout(Duration::from_secs(20), caller)
        .await
        .expect("the caller's connection ends")
        .unwrap();
    match cut {
        Err(_) => {}
        Ok(r) => {
            let s = r.status();
            let t = r.text().await;
            assert!(t.is_err(), "an answer from a killed replica: {s} {t:?}");
        }
    }

    // The approval is still pending and is decided through the load balancer (another
    // replica): that replica releases the held request to the peer.
    let (s, r) = admin(
        &c,
        &lb,
        "POST",
        &format!("/admin/workspaces/{WORKSPACE}/approvals/{id}/approve"),
        Some(json!({"approver": "ana"})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let peer_task = r["peerTaskId"]
        .as_str()
        .expect("the released peer task")
        .to_owned();
    assert!(echo.last_body().to_string().contains("refund 10"));

    // A caller that knows the gateway task (a non-blocking send's answer, the approval's id)
    // reads the outcome through any replica: GetTask of it answers the released peer task.
    let get = json!({"jsonrpc": "2.0", "id": "g", "method": "GetTask",
        "params": {"id": format!("gw-approval-{id}")}});
    let got: Value = post(&client(), &lb, "echo", &c.key, &get, None)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    eprintln!("get: {got}");
    assert!(got.get("error").is_none(), "{got}");
    assert_eq!(got["result"]["id"], peer_task.as_str(), "{got}");
    assert_eq!(
        got["result"]["artifacts"][0]["parts"][0]["text"], "echo: refund 10",
        "{got}"
    );

    // The blocking caller whose answer was cut knows neither: it retries the same send (same
    // message id) through the load balancer. The held send claimed its message id when it was
    // held, so the retry (on whichever replica) is answered as the held send is: the gateway
    // task, approved, with the peer's task; nothing is held again and the peer is not called
    // a second time.
    let again = post(
        &client(),
        &lb,
        "echo",
        &c.key,
        &refund("r1", "refund 10"),
        None,
    )
    .send()
    .await
    .unwrap();
    let s = again.status().as_u16();
    let v: Value = again.json().await.unwrap();
    assert_eq!(s, 200, "{v}");
    let task = &v["result"]["task"];
    assert_eq!(task["id"], format!("gw-approval-{id}"), "{v}");
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{v}");
    assert_eq!(task["metadata"]["peerTaskId"], peer_task.as_str(), "{v}");
    let (_, all) = admin(
        &c,
        &lb,
        "GET",
        &format!("/admin/workspaces/{WORKSPACE}/approvals"),
        None,
    )
    .await;
    assert_eq!(all.as_array().map(Vec::len), Some(1), "one approval: {all}");
    assert_eq!(echo.sends(), 1, "the peer got the held request once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_ends_its_stream_once_the_relaying_replica_is_killed() {
    let Some((mut c, _echo)) = start(2).await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (peer, peer_task) = gated_peer(gate.clone()).await;
    c.register("steps", &peer).await.unwrap();
    let (a, b) = (c.replicas[0].url(), c.replicas[1].url());
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "f1", "role": "ROLE_USER", "parts": [{"text": "go"}]}}});

    // The stream relayed by A: the Task and one step.
    gate.add_permits(1);
    let resp = post(&client(), &a, "steps", &c.key, &send, None)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut on_a = Sse::new(resp);
    let head = on_a.data(2).await;
    let task = head[0].data.as_ref().unwrap()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = head[0].id.clone().expect("a gateway event id");
    eventually("the events written", 20, || {
        let c = &c;
        let task = task.clone();
        async move { rows_of(c, &task).await >= 2 }
    })
    .await;

    // A second caller (a real SSE client) resumes on B after the Task: B follows A's events
    // through the table, the kept one and then a live one.
    let sub =
        json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task}});
    let resp = post(&client(), &b, "steps", &c.key, &sub, Some(&first))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut on_b = Sse::new(resp);
    assert_eq!(shape(&on_b.data(1).await[0]), "step 0");
    gate.add_permits(1);
    assert_eq!(shape(&on_b.data(1).await[0]), "step 1");

    // kill -9 of A, the relay: nobody reads the peer any more. B notices once A's lease ends
    // and ends its caller's stream with the error event, in the caller's form (A2A 1.0
    // JSON-RPC), instead of waiting an hour.
    c.kill(0);
    let until = tokio::time::Instant::now() + Duration::from_secs(40);
    let mut end = None;
    while tokio::time::Instant::now() < until {
        match on_b.next().await {
            Some(f) if f.data.is_some() => {
                end = Some(f);
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    let end = end.expect("an error event before the end");
    assert_eq!(shape(&end), "error \"a2a_stream_relay_lost\"", "{end:?}");
    let info = &end.data.as_ref().unwrap()["error"]["data"][0];
    assert_eq!(info["reason"], "A2A_STREAM_RELAY_LOST", "{end:?}");
    // Then the stream ends.
    while let Some(f) = on_b.next().await {
        assert!(f.data.is_none(), "an event after the end: {f:?}");
    }
    drop(on_a);
    peer_task.abort();
}
