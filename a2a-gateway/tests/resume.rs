//! Resumable streams through the gateway (issue 16): a caller's stream to an a2a-agent peer
//! (which numbers its events) cut after k events and resumed with the gateway's `Last-Event-ID`
//! delivers every event exactly once, in order, for 1.0 and 0.3 callers on JSON-RPC and
//! HTTP+JSON; a peer without ids is resumed from the gateway's own buffer; an id the peer cannot serve gets the gap marker and the Task; a resume by
//! another workspace's key is TaskNotFound; a malformed id is InvalidParams.

use crate::common::*;

use a2a_agent::handler::{Reply, RequestContext, handler_fn};
use a2a_agent::{AgentCard, AgentServer, ServerHandle};
use a2a_types::v1::{Artifact, Part};
use futures::StreamExt;
use serde_json::{Value, json};

/// Artifacts the peer's handler emits before it completes.
const STEPS: usize = 6;

async fn peer() -> ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let h = handler_fn(|ctx: RequestContext| async move {
        for i in 0..STEPS {
            let artifact = Artifact {
                artifact_id: format!("a{i}"),
                parts: vec![Part::text(format!("step {i}"))],
                ..Default::default()
            };
            ctx.emit_artifact(artifact, false, true).await;
        }
        Ok(Reply::text("done"))
    });
    AgentServer::new(
        AgentCard::identity("steps", "resume test agent", "1.0.0"),
        h,
    )
    .validate_auth(false)
    .serve(l)
    .await
    .unwrap()
}

/// One SSE frame: its id, its data (JSON) or its comment.
#[derive(Debug, Clone)]
struct Frame {
    id: Option<String>,
    data: Option<Value>,
    comment: Option<String>,
}

/// Reads SSE frames from `resp` until the stream ends or `max` data frames were read (then the
/// connection is dropped: the cut).
async fn frames(resp: reqwest::Response, max: Option<usize>) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut body = resp.bytes_stream();
    let datas = |out: &Vec<Frame>| out.iter().filter(|f| f.data.is_some()).count();
    while let Some(chunk) = tokio::time::timeout(std::time::Duration::from_secs(20), body.next())
        .await
        .expect("stream stalled")
    {
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let mut f = Frame {
                id: None,
                data: None,
                comment: None,
            };
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    f.id = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    f.data = Some(serde_json::from_str(v.trim()).unwrap());
                } else if let Some(v) = line.strip_prefix(':')
                    && !v.trim().is_empty()
                {
                    f.comment = Some(v.trim().to_owned());
                }
            }
            if f.data.is_some() || f.comment.is_some() {
                out.push(f);
            }
            if max.is_some_and(|m| datas(&out) >= m) {
                return out;
            }
        }
    }
    out
}

/// A caller dialect: how it starts a stream and how it subscribes.
#[derive(Clone, Copy, Debug)]
enum Dialect {
    Rpc10,
    Rest10,
    Rpc03,
    Rest03,
}

impl Dialect {
    fn version(self) -> &'static str {
        match self {
            Dialect::Rpc03 | Dialect::Rest03 => "0.3",
            _ => "1.0",
        }
    }

    fn stream_req(self, env: &Env, agent: &str) -> reqwest::RequestBuilder {
        let mid = uuid::Uuid::new_v4().to_string();
        let (url, body) = match self {
            Dialect::Rpc10 => (
                env.url(&format!("/a2a/{agent}")),
                json!({"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":
                    {"messageId": mid,"role":"ROLE_USER","parts":[{"text":"go"}]}}}),
            ),
            Dialect::Rest10 => (
                env.url(&format!("/a2a/{agent}/v1/message:stream")),
                json!({"message": {"messageId": mid,"role":"ROLE_USER","parts":[{"text":"go"}]}}),
            ),
            Dialect::Rest03 => (
                env.url(&format!("/a2a/{agent}/v1/message:stream")),
                json!({"message": {"messageId": mid,"role":"ROLE_USER","content":[{"text":"go"}]}}),
            ),
            Dialect::Rpc03 => (
                env.url(&format!("/a2a/{agent}")),
                json!({"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":
                    {"kind":"message","messageId": mid,"role":"user","parts":[{"kind":"text","text":"go"}]}}}),
            ),
        };
        self.post(env, &env.key, url, body)
    }

    fn subscribe_req(
        self,
        env: &Env,
        key: &str,
        agent: &str,
        task: &str,
    ) -> reqwest::RequestBuilder {
        let (url, body) = match self {
            Dialect::Rpc10 => (
                env.url(&format!("/a2a/{agent}")),
                json!({"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id": task}}),
            ),
            Dialect::Rest10 | Dialect::Rest03 => (
                env.url(&format!("/a2a/{agent}/v1/tasks/{task}:subscribe")),
                json!({}),
            ),
            Dialect::Rpc03 => (
                env.url(&format!("/a2a/{agent}")),
                json!({"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id": task}}),
            ),
        };
        self.post(env, key, url, body)
    }

    fn post(self, env: &Env, key: &str, url: String, body: Value) -> reqwest::RequestBuilder {
        env.http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("A2A-Version", self.version())
            .bearer_auth(key)
            .body(body.to_string())
    }
}

/// The event a frame carries, in either version and binding.
fn event(f: &Frame) -> &Value {
    let d = f.data.as_ref().unwrap();
    d.get("result").unwrap_or(d)
}

/// What an event is, version-neutral: `task`, `status:<state>`, `artifact:<text>`.
fn shape(ev: &Value) -> String {
    let state = |s: &Value| {
        s.as_str()
            .unwrap_or("")
            .trim_start_matches("TASK_STATE_")
            .to_lowercase()
            .replace('-', "_")
    };
    if ev.get("task").is_some() || ev["kind"] == "task" {
        "task".into()
    } else if let Some(u) = ev.get("statusUpdate") {
        format!("status:{}", state(&u["status"]["state"]))
    } else if ev["kind"] == "status-update" {
        format!("status:{}", state(&ev["status"]["state"]))
    } else {
        let a = ev
            .get("artifactUpdate")
            .map(|u| &u["artifact"])
            .unwrap_or(&ev["artifact"]);
        format!("artifact:{}", a["parts"][0]["text"].as_str().unwrap_or("?"))
    }
}

fn task_id(ev: &Value) -> String {
    let t = ev.get("task").unwrap_or(ev);
    t["id"].as_str().unwrap().to_owned()
}

async fn setup() -> (Env, ServerHandle) {
    let p = peer().await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    env.register("ws1", "steps", p.url(), None);
    (env, p)
}

#[tokio::test]
async fn a_cut_stream_resumed_through_the_gateway_loses_and_repeats_nothing() {
    let (env, p) = setup().await;
    for dialect in [
        Dialect::Rpc10,
        Dialect::Rest10,
        Dialect::Rpc03,
        Dialect::Rest03,
    ] {
        let whole = frames(
            dialect.stream_req(&env, "steps").send().await.unwrap(),
            None,
        )
        .await;
        let expected: Vec<String> = whole.iter().map(|f| shape(event(f))).collect();
        assert_eq!(expected.len(), STEPS + 3, "{dialect:?}: {expected:?}");
        assert!(
            whole
                .iter()
                .all(|f| f.id.as_deref().is_some_and(|i| i.starts_with('p'))),
            "{dialect:?}: every relayed event has a gateway id: {whole:?}"
        );
        // Cut points from a fixed seed (a small LCG), each in 1..len.
        let mut seed: u64 = 16;
        for _ in 0..4 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = 1 + (seed >> 33) as usize % (expected.len() - 1);
            let head = frames(
                dialect.stream_req(&env, "steps").send().await.unwrap(),
                Some(k),
            )
            .await;
            assert_eq!(head.len(), k, "{dialect:?} k={k}");
            let task = task_id(event(&head[0]));
            let last = head[k - 1].id.clone().unwrap();
            let resp = dialect
                .subscribe_req(&env, &env.key, "steps", &task)
                .header("Last-Event-ID", &last)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200, "{dialect:?} k={k}");
            let tail = frames(resp, None).await;
            assert!(
                tail.iter().all(|f| f.comment.is_none()),
                "{dialect:?} k={k}: {tail:?}"
            );
            let got: Vec<String> = head.iter().chain(&tail).map(|f| shape(event(f))).collect();
            assert_eq!(got, expected, "{dialect:?} k={k}");
        }
    }
    env.stop().await;
    p.shutdown().await;
}

#[tokio::test]
async fn an_unservable_id_gets_the_gap_marker_and_the_task() {
    let (env, p) = setup().await;
    for dialect in [
        Dialect::Rpc10,
        Dialect::Rest10,
        Dialect::Rpc03,
        Dialect::Rest03,
    ] {
        let whole = frames(
            dialect.stream_req(&env, "steps").send().await.unwrap(),
            None,
        )
        .await;
        let task = task_id(event(&whole[0]));
        let resp = dialect
            .subscribe_req(&env, &env.key, "steps", &task)
            .header("Last-Event-ID", "p999999")
            .send()
            .await
            .unwrap();
        let tail = frames(resp, None).await;
        assert_eq!(
            tail[0].comment.as_deref(),
            Some("a2a-replay-gap last-event-id=p999999"),
            "{dialect:?}: {tail:?}"
        );
        assert_eq!(shape(event(&tail[1])), "task", "{dialect:?}");
        assert_eq!(task_id(event(&tail[1])), task, "{dialect:?}");
    }
    env.stop().await;
    p.shutdown().await;
}

#[tokio::test]
async fn another_workspace_cannot_resume_and_a_malformed_id_is_invalid_params() {
    let (env, p) = setup().await;
    env.register("ws2", "steps", p.url(), None);
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    let whole = frames(
        Dialect::Rpc10
            .stream_req(&env, "steps")
            .send()
            .await
            .unwrap(),
        None,
    )
    .await;
    let task = task_id(event(&whole[0]));
    let first = whole[0].id.clone().unwrap();
    let other = Dialect::Rpc10
        .subscribe_req(&env, &key2, "steps", &task)
        .header("Last-Event-ID", &first)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(other.contains("-32001"), "TaskNotFound: {other}");
    assert!(!other.contains("artifact"), "{other}");
    // A malformed id, JSON-RPC (1.0 and 0.3) and HTTP+JSON.
    for dialect in [Dialect::Rpc10, Dialect::Rpc03] {
        let resp = dialect
            .subscribe_req(&env, &env.key, "steps", &task)
            .header("Last-Event-ID", "17")
            .send()
            .await
            .unwrap();
        let text = resp.text().await.unwrap();
        assert!(text.contains("-32602"), "{dialect:?}: {text}");
    }
    let resp = Dialect::Rest10
        .subscribe_req(&env, &env.key, "steps", &task)
        .header("Last-Event-ID", "17")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    env.stop().await;
    p.shutdown().await;
}

#[tokio::test]
async fn a_peer_without_ids_is_resumed_from_the_gateways_own_buffer() {
    // The demo echo peer ("echo" in ws1) sends its events without SSE ids.
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "echo", &env.peers[0].url, None);
    for dialect in [
        Dialect::Rpc10,
        Dialect::Rest10,
        Dialect::Rpc03,
        Dialect::Rest03,
    ] {
        let whole = frames(dialect.stream_req(&env, "echo").send().await.unwrap(), None).await;
        let expected: Vec<String> = whole.iter().map(|f| shape(event(f))).collect();
        assert_eq!(expected.len(), 3, "{dialect:?}: {expected:?}");
        assert!(
            whole
                .iter()
                .all(|f| f.id.as_deref().is_some_and(|i| i.starts_with('g'))),
            "{dialect:?}: {whole:?}"
        );
        for k in 1..expected.len() {
            let head = frames(
                dialect.stream_req(&env, "echo").send().await.unwrap(),
                Some(k),
            )
            .await;
            let task = task_id(event(&head[0]));
            let last = head[k - 1].id.clone().unwrap();
            let resp = dialect
                .subscribe_req(&env, &env.key, "echo", &task)
                .header("Last-Event-ID", &last)
                .send()
                .await
                .unwrap();
            let tail = frames(resp, None).await;
            assert!(
                tail.iter().all(|f| f.comment.is_none()),
                "{dialect:?} k={k}: {tail:?}"
            );
            let got: Vec<String> = head.iter().chain(&tail).map(|f| shape(event(f))).collect();
            assert_eq!(got, expected, "{dialect:?} k={k}");
            // Another workspace's key with the same id: the task is not its own.
            let other = dialect
                .subscribe_req(&env, &key2, "echo", &task)
                .header("Last-Event-ID", &last)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(!other.contains("artifact"), "{dialect:?}: {other}");
            assert!(
                other.contains("-32001") || other.contains("TASK_NOT_FOUND"),
                "{dialect:?}: {other}"
            );
        }
        // An id this gateway does not keep: the gap marker, then the Task.
        let task = task_id(event(&whole[0]));
        let resp = dialect
            .subscribe_req(&env, &env.key, "echo", &task)
            .header("Last-Event-ID", "g999999.1")
            .send()
            .await
            .unwrap();
        let tail = frames(resp, None).await;
        assert_eq!(
            tail[0].comment.as_deref(),
            Some("a2a-replay-gap last-event-id=g999999.1"),
            "{dialect:?}: {tail:?}"
        );
        assert_eq!(shape(event(&tail[1])), "task", "{dialect:?}");
    }
    env.stop().await;
}

/// A TCP proxy to `upstream` whose first connection is cut after the response carried `cut`
/// SSE data frames (the body then breaks); later connections pass through.
async fn cutting_proxy(upstream: std::net::SocketAddr, cut: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        let mut nth = 0;
        while let Ok((client, _)) = l.accept().await {
            nth += 1;
            let limit = (nth == 1).then_some(cut);
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = tokio::spawn(async move { tokio::io::copy(&mut cr, &mut sw).await });
                let mut seen: Vec<u8> = Vec::new();
                let mut buf = vec![0u8; 8192];
                while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let start = seen.len();
                    seen.extend_from_slice(&buf[..n]);
                    let end = limit.and_then(|k| end_of_frame(&seen, k));
                    let upto = end.map_or(seen.len(), |e| e.max(start));
                    if cw.write_all(&seen[start..upto]).await.is_err() || end.is_some() {
                        break;
                    }
                }
                up.abort();
            });
        }
    });
    url
}

/// The byte offset just past the `k`-th SSE frame with data in `bytes`.
fn end_of_frame(bytes: &[u8], k: usize) -> Option<usize> {
    let text = String::from_utf8_lossy(bytes);
    let mut count = 0;
    let mut at = 0;
    while let Some(i) = text[at..].find("data:") {
        let data = at + i;
        let end = data + text[data..].find("\n\n")? + 2;
        count += 1;
        if count == k {
            return Some(end);
        }
        at = end;
    }
    None
}

#[tokio::test]
async fn the_clients_automatic_resume_through_the_gateway_loses_and_repeats_nothing() {
    use a2a_client::resume::Reconnect;
    use a2a_client::{A2aClient, Binding, SelectedInterface, Version};
    let (env, p) = setup().await;
    let gw = env
        .gw
        .base_url()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    for (agent, cut) in [("steps", 2), ("steps", 5), ("echo", 1), ("echo", 2)] {
        let proxy = cutting_proxy(gw, cut).await;
        let reconnects = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = reconnects.clone();
        let client = |base: &str| {
            A2aClient::builder()
                .header("authorization", &format!("Bearer {}", env.key))
                .unwrap()
                .reconnect(Reconnect {
                    backoff: std::time::Duration::from_millis(10),
                    on_reconnect: Some(std::sync::Arc::new({
                        let seen = seen.clone();
                        move |_, id: &str| seen.lock().unwrap().push(id.to_owned())
                    })),
                    ..Reconnect::default()
                })
                .from_interface(SelectedInterface::direct(
                    format!("{base}/a2a/{agent}").parse().unwrap(),
                    Binding::JsonRpc,
                    Version::V1,
                ))
                .unwrap()
        };
        let shapes = |c: A2aClient| async move {
            let req =
                a2a_types::v1::SendMessageRequest::new(a2a_types::v1::Message::user_text("go"));
            let mut s = c.stream(req).await.unwrap();
            let mut got = Vec::new();
            while let Some(ev) = s.next().await {
                got.push(shape(&serde_json::to_value(ev.unwrap()).unwrap()));
            }
            got
        };
        // The uninterrupted stream, straight to the gateway.
        let want = shapes(client(&env.gw.base_url())).await;
        assert!(want.len() > cut, "{agent}: {want:?}");
        assert!(reconnects.lock().unwrap().is_empty());
        let got = shapes(client(&proxy)).await;
        assert_eq!(got, want, "{agent} cut {cut}");
        let r = reconnects.lock().unwrap().clone();
        assert_eq!(r.len(), 1, "{agent} cut {cut}: one resume: {r:?}");
        let kind = if agent == "steps" { 'p' } else { 'g' };
        assert!(r[0].starts_with(kind), "{agent}: resumed from {r:?}");
    }
    env.stop().await;
    p.shutdown().await;
}
