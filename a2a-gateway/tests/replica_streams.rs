//! A stream relayed by one replica, resumed on another (issue 32): a peer that numbers no
//! events (as the official SDK servers) streams through replica A; the caller's connection is
//! cut mid-way; the peer goes on while no caller is connected; the caller resumes on replica
//! B with the last gateway id and gets every later event exactly once, in order (the ones sent
//! meanwhile from the table, the rest live), until the end. Another workspace's key cannot
//! resume it; with PostgreSQL stopped the resume is refused with 503 `a2a_store_unavailable`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use a2a_gateway::store::Agent;
use a2a_gateway::store::backend::{PgRegistry, RegistryStore};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::common::Env;
use crate::gateway_replicas::{quick, replica, seed};
use crate::store_suite::cluster;

/// Artifacts the peer sends, each when the test lets it (one permit each).
const STEPS: usize = 6;

/// A JSON-RPC 1.0 peer without SSE ids: the Task, then `STEPS` artifacts (each waits for a
/// permit of `gate`), then the completed status.
async fn gated_peer(gate: Arc<Semaphore>) -> (String, tokio::task::JoinHandle<()>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let card = json!({
        "name": "Steps", "description": "gated steps", "version": "1.0.0",
        "supportedInterfaces": [{"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "steps", "name": "Steps", "description": "steps", "tags": []}]
    });
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/",
            post(move |axum::Json(req): axum::Json<Value>| {
                let gate = gate.clone();
                async move { answer(req, gate) }
            }),
        );
    let join = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (base, join)
}

fn answer(req: Value, gate: Arc<Semaphore>) -> Response {
    let id = req["id"].clone();
    if req["method"] != "SendStreamingMessage" {
        return axum::Json(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32001, "message": "Task not found"}}))
        .into_response();
    }
    let task = format!("t-{}", fastrand::u64(..));
    let wrap = move |ev: Value| -> Result<Event, Infallible> {
        let data = json!({"jsonrpc": "2.0", "id": id, "result": ev});
        Ok(Event::default().data(data.to_string()))
    };
    let events = async_stream::stream! {
        yield wrap(json!({"task": {"id": task, "contextId": "c1",
            "status": {"state": "TASK_STATE_WORKING"}}}));
        for i in 0..STEPS {
            let Ok(p) = gate.acquire().await else { return };
            p.forget();
            yield wrap(json!({"artifactUpdate": {"taskId": task, "contextId": "c1",
                "artifact": {"artifactId": format!("a{i}"), "parts": [{"text": format!("step {i}")}]}}}));
        }
        yield wrap(json!({"statusUpdate": {"taskId": task, "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"}}}));
    };
    Sse::new(events).into_response()
}

/// One SSE frame: its id, its event (the JSON-RPC result or error) and its comment.
#[derive(Debug)]
struct Frame {
    id: Option<String>,
    data: Option<Value>,
    comment: Option<String>,
}

/// Reads frames until the end, or until `max` data frames were read (then drops the
/// connection: the cut). A stall of 20 s fails (a liveness bound, not a speed claim).
async fn frames(resp: reqwest::Response, max: Option<usize>) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    let mut buf = String::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(20), body.next())
        .await
        .expect("stream stalled")
    {
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buf.find("\n\n") {
            let text: String = buf.drain(..end + 2).collect();
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
            out.push(f);
            if max.is_some_and(|m| out.iter().filter(|f| f.data.is_some()).count() >= m) {
                return out;
            }
        }
    }
    out
}

/// What a data frame is: `task`, `step N`, `completed`, or its error code.
fn shape(f: &Frame) -> String {
    let d = f.data.as_ref().unwrap();
    if let Some(e) = d.get("error") {
        return format!("error {}", e["data"][0]["metadata"]["code"]);
    }
    let r = &d["result"];
    if r.get("task").is_some() {
        "task".into()
    } else if let Some(a) = r.get("artifactUpdate") {
        a["artifact"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    } else {
        r["statusUpdate"]["status"]["state"]
            .as_str()
            .unwrap_or("?")
            .to_owned()
    }
}

fn rpc(env: &Env, key: &str, body: Value, last: Option<&str>) -> reqwest::RequestBuilder {
    let mut r = env
        .http
        .post(env.url("/a2a/steps"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("A2A-Version", "1.0")
        .bearer_auth(key)
        .body(body.to_string());
    if let Some(id) = last {
        r = r.header("Last-Event-ID", id);
    }
    r
}

fn subscribe(task: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_one_replica_resumes_on_another_missing_and_repeating_nothing() {
    let Some(cluster) = cluster() else { return };
    let gate = Arc::new(Semaphore::new(0));
    let (peer, peer_task) = gated_peer(gate.clone()).await;
    cluster.create_database("streams").unwrap();
    let url = cluster.url_of("streams");
    let seeding = PgRegistry::connect(&url, &quick()).await.unwrap();
    let key = seed(&seeding, "http://127.0.0.1:9").await;
    for ws in ["ws1", "ws2"] {
        if ws == "ws2" {
            seeding.create_workspace("ws2", "Two").await.unwrap();
        }
        let agent = Agent {
            workspace_id: ws.into(),
            agent_id: "steps".into(),
            endpoint: peer.clone(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        };
        seeding.upsert_agent(&agent).await.unwrap();
    }
    let (_, key2) = seeding.create_key("ws2", &[], None, None).await.unwrap();
    let (a, _) = replica(&url, &key, true).await;
    let (b, _) = replica(&url, &key, true).await;

    // On A: the Task and two steps, then the cut.
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]}}});
    gate.add_permits(2);
    let head = frames(rpc(&a, &key, send, None).send().await.unwrap(), Some(3)).await;
    let head: Vec<&Frame> = head.iter().filter(|f| f.data.is_some()).collect();
    let got: Vec<String> = head.iter().map(|f| shape(f)).collect();
    assert_eq!(got, ["task", "step 0", "step 1"]);
    let task = head[0].data.as_ref().unwrap()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let last = head[2].id.clone().expect("a gateway event id");
    assert!(last.starts_with('g'), "{last}");
    // The peer goes on while no caller is connected.
    gate.add_permits(2);

    // Another workspace's key on B: the task is not its own.
    let other = rpc(&b, &key2, subscribe(&task), Some(&last))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!other.contains("step"), "{other}");
    assert!(other.contains("-32001"), "{other}");

    // On B with the last id: steps 2 and 3 (sent meanwhile), then the live rest.
    let resp = rpc(&b, &key, subscribe(&task), Some(&last))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let release = {
        let gate = gate.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            gate.add_permits(STEPS - 4);
        })
    };
    let tail = frames(resp, None).await;
    release.await.unwrap();
    assert!(tail.iter().all(|f| f.comment.is_none()), "{tail:?}");
    let got: Vec<String> = tail.iter().map(shape).collect();
    let mut want: Vec<String> = (2..STEPS).map(|i| format!("step {i}")).collect();
    want.push("TASK_STATE_COMPLETED".into());
    assert_eq!(got, want, "{tail:?}");
    // The ids go on from the cut, one by one.
    let stream = last.rsplit_once('.').unwrap().0;
    for (i, f) in tail.iter().enumerate() {
        assert_eq!(
            f.id.as_deref(),
            Some(format!("{stream}.{}", 4 + i).as_str())
        );
    }
    // A second resume on B from the same id reads the same events again, from the table.
    let again = frames(
        rpc(&b, &key, subscribe(&task), Some(&last))
            .send()
            .await
            .unwrap(),
        None,
    )
    .await;
    let got: Vec<String> = again.iter().map(shape).collect();
    assert_eq!(got, want);

    // PostgreSQL stopped: the resume on B is refused with 503 a2a_store_unavailable.
    cluster.stop().unwrap();
    let answered = tokio::time::timeout(
        Duration::from_secs(30),
        rpc(&b, &key, subscribe(&task), Some(&last)).send(),
    );
    let r = answered.await.expect("an answer within 30 s").unwrap();
    assert_eq!(r.status(), 503);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["error"]["data"][0]["metadata"]["code"], "a2a_store_unavailable",
        "{v}"
    );
    cluster.start_again().unwrap();
    a.stop().await;
    b.stop().await;
    peer_task.abort();
    drop(seeding);
}
