//! Resumable streams (issue 16): every SSE event is numbered (`id:`), and a subscriber that comes
//! back with `Last-Event-ID` gets exactly the events it missed, then the live ones, on both
//! bindings in both versions; a resume the replay log cannot serve says so and starts from the
//! task snapshot; the SQLite log serves resumes after a restart.

use crate::common;

use a2a_agent::model::{Artifact, Part, TaskState};
use a2a_agent::{AgentCard, AgentConfig, Handler, HandlerError, Reply, RequestContext};
use common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

/// Emits `n` artifact chunks (`c0`, `c1`, ...) of one artifact, a little apart, then completes.
struct Chunks {
    n: usize,
    gap: Duration,
}

#[async_trait::async_trait]
impl Handler for Chunks {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        for i in 0..self.n {
            tokio::time::sleep(self.gap).await;
            ctx.emit_artifact(
                Artifact {
                    artifact_id: "out".into(),
                    parts: vec![Part::text(format!("c{i}"))],
                    ..Default::default()
                },
                i > 0,
                i + 1 == self.n,
            )
            .await;
        }
        Ok(Reply::State(TaskState::Completed, None))
    }
}

fn card() -> AgentCard {
    a2a_agent::demo::echo_card()
}

async fn start(n: usize, gap_ms: u64, cfg: AgentConfig) -> a2a_agent::ServerHandle {
    start_with(
        card(),
        Chunks {
            n,
            gap: Duration::from_millis(gap_ms),
        },
        cfg,
    )
    .await
}

/// One SSE event as read off the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ev {
    pub(crate) id: Option<u64>,
    pub(crate) comment: Option<String>,
    pub(crate) data: Option<Value>,
}

/// Reads SSE events from `resp`; stops after `limit` data events (dropping the connection).
pub(crate) async fn read(resp: reqwest::Response, limit: usize) -> Vec<Ev> {
    assert!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .starts_with("text/event-stream"),
        "not an event stream: {} {:?}",
        resp.status(),
        resp.headers()
    );
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut s = resp.bytes_stream();
    let mut data_seen = 0;
    while let Some(chunk) = s.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(pos) = buf.find("\n\n") {
            let raw: String = buf.drain(..pos + 2).collect();
            let mut ev = Ev {
                id: None,
                comment: None,
                data: None,
            };
            let mut data = Vec::new();
            for l in raw.lines() {
                if let Some(d) = l.strip_prefix("data:") {
                    data.push(d.strip_prefix(' ').unwrap_or(d).to_string());
                } else if let Some(i) = l.strip_prefix("id:") {
                    ev.id = Some(i.trim().parse().unwrap());
                } else if let Some(c) = l.strip_prefix(':') {
                    let c = c.trim();
                    if !c.is_empty() {
                        ev.comment = Some(c.to_string());
                    }
                }
            }
            if !data.is_empty() {
                ev.data = Some(serde_json::from_str(&data.join("\n")).unwrap());
                data_seen += 1;
            }
            if ev.data.is_some() || ev.comment.is_some() {
                out.push(ev);
            }
            if data_seen >= limit {
                return out;
            }
        }
    }
    out
}

/// A binding and version to drive.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Way {
    RpcV1,
    RpcV03,
    RestV1,
    RestV03,
}

pub(crate) const WAYS: [Way; 4] = [Way::RpcV1, Way::RpcV03, Way::RestV1, Way::RestV03];

pub(crate) fn user_msg(way: Way) -> Value {
    match way {
        Way::RpcV1 | Way::RestV1 => msg("go"),
        Way::RestV03 => {
            json!({"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": "go"}]})
        }
        Way::RpcV03 => json!({
            "kind": "message", "messageId": uuid(), "role": "user",
            "parts": [{"kind": "text", "text": "go"}]
        }),
    }
}

/// Starts a stream of a new task.
async fn send_stream(url: &str, way: Way) -> reqwest::Response {
    let c = client();
    let p = json!({"message": user_msg(way)});
    match way {
        Way::RpcV1 => c.post(format!("{url}/")).header("A2A-Version", "1.0").json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": p}),
        ),
        Way::RpcV03 => c
            .post(format!("{url}/"))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": p})),
        Way::RestV1 => c
            .post(format!("{url}/message:stream"))
            .header("A2A-Version", "1.0")
            .json(&p),
        Way::RestV03 => c.post(format!("{url}/v1/message:stream")).json(&p),
    }
    .send()
    .await
    .unwrap()
}

/// Subscribes to task `id`, resuming after `last` when given.
pub(crate) async fn subscribe(
    url: &str,
    way: Way,
    id: &str,
    last: Option<&str>,
) -> reqwest::Response {
    let c = client();
    let mut r = match way {
        Way::RpcV1 => c.post(format!("{url}/")).header("A2A-Version", "1.0").json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": id}}),
        ),
        Way::RpcV03 => c.post(format!("{url}/")).json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": id}}),
        ),
        Way::RestV1 => c
            .get(format!("{url}/tasks/{id}:subscribe"))
            .header("A2A-Version", "1.0"),
        Way::RestV03 => c.post(format!("{url}/v1/tasks/{id}:subscribe")),
    };
    if let Some(l) = last {
        r = r.header("Last-Event-ID", l);
    }
    r.send().await.unwrap()
}

/// The stream event inside an SSE data line, whatever the binding and version: (kind, body).
pub(crate) fn event(way: Way, data: &Value) -> (String, Value) {
    let v = match way {
        Way::RpcV1 | Way::RpcV03 => {
            assert!(data.get("error").is_none(), "error event: {data}");
            data["result"].clone()
        }
        Way::RestV1 | Way::RestV03 => data.clone(),
    };
    match way {
        Way::RpcV1 | Way::RestV1 => {
            let (k, b) = v.as_object().unwrap().iter().next().unwrap();
            (k.clone(), b.clone())
        }
        Way::RpcV03 => (v["kind"].as_str().unwrap().to_string(), v),
        Way::RestV03 => {
            let (k, b) = v.as_object().unwrap().iter().next().unwrap();
            (k.clone(), b.clone())
        }
    }
}

pub(crate) fn task_id(way: Way, first: &Ev) -> String {
    let (_, b) = event(way, first.data.as_ref().unwrap());
    b["id"]
        .as_str()
        .or_else(|| b["taskId"].as_str())
        .unwrap()
        .to_string()
}

/// The chunk texts of artifact events, in order.
pub(crate) fn chunks(way: Way, evs: &[Ev]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| e.data.as_ref())
        .map(|d| event(way, d))
        .filter(|(k, _)| k == "artifactUpdate" || k == "artifact-update")
        .map(|(_, b)| {
            b["artifact"]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

pub(crate) fn ids(evs: &[Ev]) -> Vec<u64> {
    evs.iter()
        .filter(|e| e.data.is_some())
        .map(|e| e.id.expect("every data event has an id"))
        .collect()
}

/// Whether the last event ends the task COMPLETED.
pub(crate) fn completes(way: Way, evs: &[Ev]) -> bool {
    evs.last()
        .and_then(|e| e.data.as_ref())
        .map(|d| event(way, d))
        .is_some_and(|(_, b)| {
            let s = b["status"]["state"].as_str().unwrap_or("");
            s == "TASK_STATE_COMPLETED" || s == "completed"
        })
}

/// A small deterministic generator (no dependency) for the cut points.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

#[tokio::test]
async fn a_stream_cut_at_random_points_resumes_without_gap_or_duplicate() {
    const N: usize = 12;
    let s = start(N, 3, open_config()).await;
    let url = s.url().to_string();
    let want: Vec<String> = (0..N).map(|i| format!("c{i}")).collect();
    let mut seed = 16u64;
    for way in WAYS {
        for _run in 0..4 {
            // Cut after 1..=N data events (the first is the task snapshot).
            let cut = 1 + (lcg(&mut seed) as usize % N);
            let first = read(send_stream(&url, way).await, cut).await;
            let id = task_id(way, &first[0]);
            let last = first.last().unwrap().id.unwrap().to_string();
            let rest = read(subscribe(&url, way, &id, Some(&last)).await, usize::MAX).await;
            let mut all = first.clone();
            all.extend(rest.iter().cloned());
            // No marker, no second snapshot: only the missed events.
            assert!(
                rest.iter().all(|e| e.comment.is_none()),
                "{way:?}: {rest:?}"
            );
            let got_ids = ids(&all);
            let first_id = got_ids[0];
            let want_ids: Vec<u64> = (first_id..first_id + got_ids.len() as u64).collect();
            assert_eq!(
                got_ids, want_ids,
                "{way:?} cut {cut}: ids consecutive, none twice"
            );
            assert_eq!(
                chunks(way, &all),
                want,
                "{way:?} cut {cut}: every chunk once"
            );
            assert!(completes(way, &all), "{way:?} cut {cut}: ends completed");
        }
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_resume_of_an_ended_task_replays_what_is_left_and_a_plain_subscribe_is_refused() {
    let s = start(3, 0, open_config()).await;
    let url = s.url().to_string();
    for way in WAYS {
        let all = read(send_stream(&url, way).await, usize::MAX).await;
        assert!(completes(way, &all), "{way:?}");
        let id = task_id(way, &all[0]);
        // Resume from the second event: everything after it, then the stream ends.
        let from = all[1].id.unwrap();
        let rest = read(
            subscribe(&url, way, &id, Some(&from.to_string())).await,
            usize::MAX,
        )
        .await;
        assert_eq!(ids(&rest), ids(&all)[2..].to_vec(), "{way:?}");
        let bodies = |evs: &[Ev]| -> Vec<(String, Value)> {
            evs.iter()
                .map(|e| event(way, e.data.as_ref().unwrap()))
                .collect()
        };
        assert_eq!(bodies(&rest), bodies(&all[2..]), "{way:?}: the same events");
        // Resuming from the last event: nothing is missing, the stream ends empty.
        let last = all.last().unwrap().id.unwrap();
        let none = read(
            subscribe(&url, way, &id, Some(&last.to_string())).await,
            usize::MAX,
        )
        .await;
        assert!(none.is_empty(), "{way:?}: {none:?}");
        // Without Last-Event-ID a terminal task still cannot be subscribed to.
        let r = subscribe(&url, way, &id, None).await;
        let body = r.text().await.unwrap();
        assert!(
            body.contains("terminal") || body.contains("UNSUPPORTED") || body.contains("-32004"),
            "{way:?}: {body}"
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_resume_beyond_the_retention_gets_a_marker_and_the_snapshot() {
    let cfg = AgentConfig {
        replay_events_per_task: 2,
        ..open_config()
    };
    let s = start(6, 0, cfg).await;
    let url = s.url().to_string();
    for way in WAYS {
        let all = read(send_stream(&url, way).await, usize::MAX).await;
        let id = task_id(way, &all[0]);
        let from = all[0].id.unwrap();
        let rest = read(
            subscribe(&url, way, &id, Some(&from.to_string())).await,
            usize::MAX,
        )
        .await;
        assert_eq!(
            rest[0].comment.as_deref(),
            Some(format!("a2a-replay-gap last-event-id={from}").as_str()),
            "{way:?}: {rest:?}"
        );
        let (kind, body) = event(way, rest[1].data.as_ref().unwrap());
        assert!(kind == "task" || body["kind"] == "task", "{way:?}: {kind}");
        assert_eq!(rest[1].id, all.last().unwrap().id, "{way:?}");
        assert_eq!(
            rest.len(),
            2,
            "{way:?}: a terminal snapshot ends the stream"
        );
        // An id this agent never sent is a gap too.
        let rest = read(subscribe(&url, way, &id, Some("999999")).await, usize::MAX).await;
        assert!(rest[0].comment.is_some(), "{way:?}: {rest:?}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_last_event_id_that_is_not_a_number_is_invalid_params() {
    let s = start(1, 0, open_config()).await;
    let url = s.url().to_string();
    let all = read(send_stream(&url, Way::RpcV1).await, usize::MAX).await;
    let id = task_id(Way::RpcV1, &all[0]);
    let r = subscribe(&url, Way::RpcV1, &id, Some("abc")).await;
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let r = subscribe(&url, Way::RestV1, &id, Some("abc")).await;
    assert_eq!(r.status().as_u16(), 400);
    s.shutdown().await;
}

/// `X-User: name` is the caller.
struct HeaderAuth;

#[async_trait::async_trait]
impl a2a_agent::auth::Authenticator for HeaderAuth {
    async fn authenticate(
        &self,
        req: &a2a_agent::auth::AuthRequest<'_>,
    ) -> Result<a2a_agent::auth::CallerProfile, a2a_agent::A2aError> {
        let user = req
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                a2a_agent::A2aError::new(a2a_agent::ErrorKind::Unauthenticated, "who are you?")
            })?;
        Ok(a2a_agent::auth::CallerProfile {
            scheme: "oauth2".into(),
            subject: Some(user.to_string()),
            issuer: Some("test".into()),
            ..Default::default()
        })
    }
}

#[tokio::test]
async fn another_caller_cannot_resume_someone_elses_task() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = a2a_agent::AgentServer::new(
        card(),
        Chunks {
            n: 40,
            gap: Duration::from_millis(5),
        },
    )
    .authenticator(std::sync::Arc::new(HeaderAuth))
    .serve(l)
    .await
    .unwrap();
    let url = s.url().to_string();
    let http = client();
    let rpc = |user: &str, method: &str, params: Value, last: Option<&str>| {
        let mut r = http
            .post(format!("{url}/"))
            .header("A2A-Version", "1.0")
            .header("x-user", user)
            .json(&json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params}));
        if let Some(l) = last {
            r = r.header("Last-Event-ID", l);
        }
        r.send()
    };
    let first = read(
        rpc(
            "alice",
            "SendStreamingMessage",
            json!({"message": msg("go")}),
            None,
        )
        .await
        .unwrap(),
        2,
    )
    .await;
    let id = task_id(Way::RpcV1, &first[0]);
    // While the task runs, and once it has ended: bob gets "task not found", never events.
    for _ in 0..2 {
        let r = rpc("bob", "SubscribeToTask", json!({"id": id}), Some("0"))
            .await
            .unwrap();
        let body = r.text().await.unwrap();
        assert!(body.contains("-32001"), "{body}");
        // No event of alice's reaches bob: no result, no chunk text (a bare "c0" could occur
        // inside the task id, so look for the JSON string).
        assert!(!body.contains("\"result\""), "{body}");
        assert!(!body.contains("\"c0\""), "{body}");
        wait_task_as(&url, "alice", &id).await;
    }
    // Alice can.
    let rest = read(
        rpc("alice", "SubscribeToTask", json!({"id": id}), Some("0"))
            .await
            .unwrap(),
        usize::MAX,
    )
    .await;
    assert!(completes(Way::RpcV1, &rest));
    s.shutdown().await;
}

/// Waits (bounded tries) until alice's task has ended.
async fn wait_task_as(url: &str, user: &str, id: &str) {
    for _ in 0..1000 {
        let v: Value = client()
            .post(format!("{url}/"))
            .header("A2A-Version", "1.0")
            .header("x-user", user)
            .json(&json!({"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": id}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if state(&v["result"]) == "TASK_STATE_COMPLETED" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never completed");
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_sqlite_log_serves_a_resume_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = AgentConfig {
        sqlite_path: Some(dir.path().join("agent.db")),
        ..open_config()
    };
    let s = start(4, 0, cfg.clone()).await;
    let url = s.url().to_string();
    let all = read(send_stream(&url, Way::RpcV1).await, usize::MAX).await;
    assert!(completes(Way::RpcV1, &all));
    let id = task_id(Way::RpcV1, &all[0]);
    s.shutdown().await;

    let s = start(4, 0, cfg).await;
    let url = s.url().to_string();
    for way in WAYS {
        let rest = read(
            subscribe(&url, way, &id, Some(&all[1].id.unwrap().to_string())).await,
            usize::MAX,
        )
        .await;
        assert_eq!(ids(&rest), ids(&all)[2..].to_vec(), "{way:?}: {rest:?}");
        assert_eq!(chunks(way, &rest), chunks(Way::RpcV1, &all[2..]), "{way:?}");
    }
    s.shutdown().await;
}

/// Emits `n` large artifact chunks as fast as it can, then completes.
struct BigChunks {
    n: usize,
    size: usize,
}

#[async_trait::async_trait]
impl Handler for BigChunks {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        for i in 0..self.n {
            ctx.emit_artifact(
                Artifact {
                    artifact_id: "big".into(),
                    parts: vec![Part::text(format!("c{i}:{}", "x".repeat(self.size)))],
                    ..Default::default()
                },
                i > 0,
                i + 1 == self.n,
            )
            .await;
        }
        Ok(Reply::State(TaskState::Completed, None))
    }
}

#[tokio::test]
async fn a_slow_subscriber_cut_by_the_disconnect_policy_resumes_and_loses_nothing() {
    const N: usize = 48;
    let cfg = AgentConfig {
        sse_queue_capacity: 2,
        sse_overflow_policy: a2a_agent::fanout::OverflowPolicy::Disconnect,
        ..open_config()
    };
    let s = start_with(
        card(),
        BigChunks {
            n: N,
            size: 256 * 1024,
        },
        cfg,
    )
    .await;
    let url = s.url().to_string();
    let resp = send_stream(&url, Way::RpcV1).await;
    // Read nothing until the handler is done, so the queue overflows and the stream is cut.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let first = read(resp, usize::MAX).await;
    let id = task_id(Way::RpcV1, &first[0]);
    let got_first = chunks_prefix(&first);
    assert!(
        got_first.len() < N && !completes(Way::RpcV1, &first),
        "the stream was not cut (read {} chunks); the test needs a smaller queue",
        got_first.len()
    );
    let last = first.last().unwrap().id.unwrap().to_string();
    let rest = read(
        subscribe(&url, Way::RpcV1, &id, Some(&last)).await,
        usize::MAX,
    )
    .await;
    let mut all = got_first;
    all.extend(chunks_prefix(&rest));
    let want: Vec<String> = (0..N).map(|i| format!("c{i}")).collect();
    assert_eq!(all, want, "every chunk exactly once across the cut");
    assert!(completes(Way::RpcV1, &rest));
    s.shutdown().await;
}

/// The `cN` prefix of each artifact chunk's text (the chunks are large).
fn chunks_prefix(evs: &[Ev]) -> Vec<String> {
    chunks(Way::RpcV1, evs)
        .into_iter()
        .map(|t| t.split(':').next().unwrap_or("").to_string())
        .collect()
}
