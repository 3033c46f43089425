//! ListTasks from the gateway's records (issue 40, item 1): two workspaces and many tasks made
//! directly at a shared peer (a2a-agent's echo agent). Each workspace's listing is exact
//! (contents and `totalSize`), paging covers each of its tasks once, the `status`, `contextId`
//! and `statusTimestampAfter` filters are exact, a page's tasks are current (a task the peer
//! moved on behind the gateway's back shows its new state and leaves its old state's filter),
//! and a listing never reads the peer's list: the peer sees no ListTasks from the gateway and
//! at most a page's worth of GetTask calls (counted by a proxy in front of the peer).
//!
//! How many direct tasks: the failure needs 10,000 tasks newer than a workspace's (the
//! old listing read the peer's newest 100 pages of 100). The test instead counts what the
//! gateway asks the peer, which shows the listing does not depend on the peer's other tasks at
//! any number, and makes 2,000 direct tasks at the JSON-RPC 1.0 peer (about 4 s in a debug
//! build on two cores) and 200 at the HTTP+JSON 1.0 and JSON-RPC 0.3 peers.
//! `LIST_TEST_DIRECT=10000` runs the number.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use crate::common;

use a2a_agent::card::AgentCard;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_agent::{AgentConfig, AgentServer};
use a2a_gateway::errors::Version;
use common::*;
use futures::StreamExt;
use serde_json::{Value, json};

/// Calls the proxy forwarded, by operation.
pub(crate) type Counts = Arc<Mutex<HashMap<String, usize>>>;

/// The operation of a forwarded request: the JSON-RPC method, or the HTTP+JSON path's.
fn operation(method: &http::Method, path: &str, body: &[u8]) -> String {
    if let Some(m) = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned))
    {
        return m;
    }
    match (method.as_str(), path) {
        ("GET", p) if p.trim_end_matches('/').ends_with("/tasks") => "ListTasks".into(),
        ("GET", p) if p.contains("/tasks/") => "GetTask".into(),
        (m, p) => format!("{m} {p}"),
    }
}

/// A proxy at `listener` forwarding every request to `target`, counting operations.
async fn proxy(listener: tokio::net::TcpListener, target: String) -> Counts {
    let counts = Counts::default();
    let seen = counts.clone();
    let http = reqwest::Client::new();
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (http, target, seen) = (http.clone(), target.clone(), seen.clone());
        async move {
            let (parts, body) = req.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let op = operation(&parts.method, parts.uri.path(), &body);
            *seen.lock().unwrap().entry(op).or_default() += 1;
            let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
            let mut out = http.request(parts.method.clone(), format!("{target}{path}"));
            for (k, v) in &parts.headers {
                if k != http::header::HOST && k != http::header::CONTENT_LENGTH {
                    out = out.header(k, v);
                }
            }
            let resp = out.body(body).send().await.unwrap();
            let mut back = axum::response::Response::builder().status(resp.status());
            for (k, v) in resp.headers() {
                if k != http::header::CONTENT_LENGTH && k != http::header::TRANSFER_ENCODING {
                    back = back.header(k, v);
                }
            }
            back.body(axum::body::Body::from(resp.bytes().await.unwrap()))
                .unwrap()
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    counts
}

/// The echo agent behind a counting proxy; its card offers one interface (`binding`,
/// `version`) at the proxy. (agent, proxy URL, counts).
pub(crate) async fn shared_peer(
    binding: &str,
    version: &str,
    tasks: usize,
) -> (a2a_agent::server::ServerHandle, String, Counts) {
    let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", front.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": binding, "protocolVersion": version}]);
    // Room for every task: a peer that drops tasks is what `gone` is for, not this test.
    let cfg = AgentConfig {
        validate_auth: false,
        memory_store_cap: tasks + 1000,
        ..AgentConfig::default()
    };
    let agent = AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .config(cfg)
        .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .await
        .unwrap();
    let counts = proxy(front, agent.url().trim_end_matches('/').to_owned()).await;
    (agent, url, counts)
}

pub(crate) fn message(text: &str, context: Option<&str>, task: Option<&str>) -> Value {
    let mut m = json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
        "parts": [{"text": text}]});
    if let Some(c) = context {
        m["contextId"] = json!(c);
    }
    if let Some(t) = task {
        m["taskId"] = json!(t);
    }
    m
}

fn rpc(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// A 1.0 JSON-RPC call through the gateway with `key`; the result.
pub(crate) async fn call(env: &Env, key: &str, method: &str, params: Value) -> Value {
    let (_, b) = env
        .rpc_key("/a2a/shared", Some("1.0"), rpc(method, params), key)
        .await;
    assert!(b.get("error").is_none(), "{method}: {b}");
    b["result"].clone()
}

/// A SendMessage straight to the agent (not through the gateway); the task.
pub(crate) async fn direct(http: &reqwest::Client, agent: &str, m: Value) -> Value {
    let v: Value = http
        .post(agent)
        .header("A2A-Version", "1.0")
        .json(&rpc("SendMessage", json!({ "message": m })))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["result"]["task"].clone()
}

pub(crate) fn ids(r: &Value) -> Vec<String> {
    r["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks: {r}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

fn set(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}

/// One workspace's tasks through the gateway, by kind.
#[derive(Default)]
struct Made {
    all: Vec<String>,
    input: Vec<String>,
    failed: Vec<String>,
    in_ctx: Vec<String>,
}

/// Makes `n` tasks through the gateway with `key`: every third input-required, every fifth
/// failed, the even ones in context `ctx`.
async fn make(env: &Env, key: &str, n: usize, ctx: &str) -> Made {
    let mut made = Made::default();
    for i in 0..n {
        let text = if i % 3 == 0 {
            "need input"
        } else if i % 5 == 1 {
            "fail now"
        } else {
            "hello"
        };
        let context = (i % 2 == 0).then_some(ctx);
        let t = call(
            env,
            key,
            "SendMessage",
            json!({ "message": message(text, context, None) }),
        )
        .await;
        let id = t["task"]["id"].as_str().unwrap().to_owned();
        match t["task"]["status"]["state"].as_str().unwrap() {
            "TASK_STATE_INPUT_REQUIRED" => made.input.push(id.clone()),
            "TASK_STATE_FAILED" => made.failed.push(id.clone()),
            _ => {}
        }
        if context.is_some() {
            made.in_ctx.push(id.clone());
        }
        made.all.push(id);
    }
    assert!(!made.input.is_empty() && !made.failed.is_empty());
    made
}

/// Every page of a listing with `params` (pageSize `size`): the ids in order, and each page's
/// `totalSize` (all the same).
async fn pages(env: &Env, key: &str, params: Value, size: usize) -> (Vec<String>, u64) {
    let mut seen = vec![];
    let mut total = None;
    let mut token = String::new();
    for _ in 0..1000 {
        let mut p = params.clone();
        p["pageSize"] = json!(size);
        p["pageToken"] = json!(token);
        let r = call(env, key, "ListTasks", p).await;
        let t = r["totalSize"].as_u64().unwrap();
        assert_eq!(*total.get_or_insert(t), t, "totalSize moved: {r}");
        let page = ids(&r);
        assert!(page.len() <= size, "{r}");
        // Newest status first.
        let stamps: Vec<&str> = r["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["status"]["timestamp"].as_str().unwrap())
            .collect();
        assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "{stamps:?}");
        seen.extend(page);
        token = r["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            return (seen, total.unwrap_or(0));
        }
    }
    panic!("paging does not end");
}

/// The scenario at a peer offering (`binding`, `version`), with `direct_n` tasks made directly
/// at the peer.
async fn scenario(binding: &str, version: &str, direct_n: usize) {
    let env = env(Version::V1).await;
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    let (agent, front, counts) = shared_peer(binding, version, direct_n).await;
    env.register("ws1", "shared", &front, None);
    env.register("ws2", "shared", &front, None);
    let a = make(&env, &env.key, 14, "ctx-a").await;
    // The other workspace uses the same context id at the same peer.
    let b = make(&env, &key_b, 9, "ctx-a").await;
    // Direct tasks at the peer, newer than every workspace task, some in the same context and
    // states.
    let http = reqwest::Client::new();
    let base = agent.url().trim_end_matches('/').to_owned();
    let direct_ids: Vec<Value> = futures::stream::iter(0..direct_n)
        .map(|i| {
            let text = if i % 4 == 0 { "need input" } else { "hello" };
            direct(&http, &base, message(text, Some("ctx-a"), None))
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(direct_ids.iter().all(|t| t["id"].is_string()));
    let label = format!("{binding} {version}");

    // Exact listings, each page a bounded number of peer reads and no peer list.
    counts.lock().unwrap().clear();
    let (a_seen, a_total) = pages(&env, &env.key, json!({}), 5).await;
    let peer_calls = counts.lock().unwrap().clone();
    assert_eq!(a_total, a.all.len() as u64, "{label}");
    assert_eq!(a_seen.len(), a.all.len(), "{label}: each task once");
    assert_eq!(set(&a_seen), set(&a.all), "{label}");
    let list_calls = peer_calls.get("ListTasks").copied().unwrap_or(0);
    assert_eq!(
        list_calls, 0,
        "{label}: the peer's list was read: {peer_calls:?}"
    );
    let gets = peer_calls
        .iter()
        .filter(|(op, _)| matches!(op.as_str(), "GetTask" | "tasks/get"))
        .map(|(_, n)| n)
        .sum::<usize>();
    let page_count = a.all.len().div_ceil(5);
    assert!(
        gets <= a.all.len() + page_count * 8,
        "{label}: {gets} reads for {} tasks: {peer_calls:?}",
        a.all.len()
    );
    let (b_seen, b_total) = pages(&env, &key_b, json!({}), 50).await;
    assert_eq!((set(&b_seen), b_total), (set(&b.all), b.all.len() as u64));
    // HTTP+JSON 1.0 and a 0.3 JSON-RPC caller.
    let r: Value = env
        .v1(reqwest::Method::GET, "/a2a/shared/v1/tasks?pageSize=100")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["totalSize"], a.all.len(), "{label}: {r}");
    assert_eq!(set(&ids(&r)), set(&a.all), "{label}");
    let (_, r) = env
        .rpc(
            "/a2a/shared/tasks:list",
            None,
            json!({"jsonrpc": "2.0", "id": 1, "params": {"contextId": "ctx-a", "pageSize": 100}}),
        )
        .await;
    assert_eq!(set(&ids(&r["result"])), set(&a.in_ctx), "{label}: {r}");
    assert_eq!(r["result"]["tasks"][0]["kind"], "task", "{r}");

    // Filters, exact and paged.
    for (params, want) in [
        (json!({"status": "TASK_STATE_INPUT_REQUIRED"}), &a.input),
        (json!({"status": "TASK_STATE_FAILED"}), &a.failed),
        (json!({"contextId": "ctx-a"}), &a.in_ctx),
    ] {
        let (got, total) = pages(&env, &env.key, params.clone(), 3).await;
        assert_eq!(got.len(), want.len(), "{label} {params}: each once");
        assert_eq!(
            (set(&got), total),
            (set(want), want.len() as u64),
            "{label} {params}"
        );
    }
    let both = json!({"status": "TASK_STATE_INPUT_REQUIRED", "contextId": "ctx-a"});
    let (got, _) = pages(&env, &env.key, both, 50).await;
    let want: Vec<String> = a
        .input
        .iter()
        .filter(|t| a.in_ctx.contains(t))
        .cloned()
        .collect();
    assert_eq!(set(&got), set(&want), "{label}");
    // statusTimestampAfter: at or after the status time of the listing's middle task.
    let all = call(&env, &env.key, "ListTasks", json!({"pageSize": 100})).await;
    let tasks = all["tasks"].as_array().unwrap();
    let mid = &tasks[tasks.len() / 2]["status"]["timestamp"];
    let at = mid.as_str().unwrap();
    let later: BTreeSet<String> = tasks
        .iter()
        .filter(|t| t["status"]["timestamp"].as_str().unwrap() >= at)
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    let (got, total) = pages(&env, &env.key, json!({"statusTimestampAfter": at}), 4).await;
    assert_eq!(
        (set(&got), total),
        (later.clone(), later.len() as u64),
        "{label}"
    );

    // A page's tasks are current: an input-required task completed directly at the peer (the
    // gateway sees nothing of it) leaves the input-required listing and shows completed.
    let moved = a.input[0].clone();
    let ctx = tasks
        .iter()
        .find(|t| t["id"] == json!(moved))
        .map(|t| t["contextId"].as_str().unwrap().to_owned());
    let done = direct(&http, &base, message("done", ctx.as_deref(), Some(&moved))).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    let r = call(
        &env,
        &env.key,
        "ListTasks",
        json!({"status": "TASK_STATE_INPUT_REQUIRED"}),
    )
    .await;
    assert_eq!(r["totalSize"], a.input.len() - 1, "{label}: {r}");
    assert!(!ids(&r).contains(&moved), "{label}: {r}");
    let r = call(
        &env,
        &env.key,
        "ListTasks",
        json!({"status": "TASK_STATE_COMPLETED", "pageSize": 100}),
    )
    .await;
    let first = &r["tasks"][0];
    assert_eq!(
        (&first["id"], &first["status"]["state"]),
        (&json!(moved), &json!("TASK_STATE_COMPLETED")),
        "{label}: the completed task is the newest: {r}"
    );
    let completed = a.all.len() - a.input.len() - a.failed.len() + 1;
    assert_eq!(r["totalSize"], completed, "{label}: {r}");
    // And one completed through the gateway is recorded from the answer.
    let other = a.input[1].clone();
    let ctx = tasks
        .iter()
        .find(|t| t["id"] == json!(other))
        .map(|t| t["contextId"].as_str().unwrap().to_owned());
    call(
        &env,
        &env.key,
        "SendMessage",
        json!({"message": message("done", ctx.as_deref(), Some(&other))}),
    )
    .await;
    let r = call(
        &env,
        &env.key,
        "ListTasks",
        json!({"status": "TASK_STATE_COMPLETED", "pageSize": 1}),
    )
    .await;
    assert_eq!(ids(&r), vec![other.clone()], "{label}: {r}");
    assert_eq!(r["totalSize"], completed + 1, "{label}: {r}");
    // B's listing is untouched by all of it.
    let (b_seen, b_total) = pages(&env, &key_b, json!({}), 4).await;
    assert_eq!((set(&b_seen), b_total), (set(&b.all), b.all.len() as u64));
    env.stop().await;
    agent.shutdown().await;
}

fn direct_count(default: usize) -> usize {
    std::env::var("LIST_TEST_DIRECT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_is_exact_beside_many_direct_tasks_jsonrpc_10() {
    scenario("JSONRPC", "1.0", direct_count(2000)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_is_exact_beside_direct_tasks_http_json_10() {
    scenario("HTTP+JSON", "1.0", direct_count(200)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_is_exact_beside_direct_tasks_jsonrpc_03() {
    scenario("JSONRPC", "0.3", direct_count(200)).await;
}

/// The records follow what passes through the gateway: a streamed send's events, a GetTask
/// answer, a CancelTask answer. Each is seen by a status filter at once (no listing has read
/// the task since, and records are refreshed by a listing only after `REFRESH_AFTER_MS`).
#[tokio::test]
async fn answers_and_events_update_the_records() {
    let env = env(Version::V1).await;
    let (agent, front, _) = shared_peer("JSONRPC", "1.0", 0).await;
    env.register("ws1", "shared", &front, None);
    let key = env.key.clone();
    let filtered = |state: &'static str| {
        let env = &env;
        let key = key.clone();
        async move {
            let r = call(env, &key, "ListTasks", json!({ "status": state })).await;
            (ids(&r), r["totalSize"].as_u64().unwrap())
        }
    };
    // A streamed send ending input-required.
    let (s, _, events) = env
        .sse(
            "/a2a/shared",
            Some("1.0"),
            rpc(
                "SendStreamingMessage",
                json!({"message": message("need input", None, None)}),
            ),
        )
        .await;
    assert_eq!(s, 200);
    let first = &events[0]["result"];
    let task = first["task"]["id"]
        .as_str()
        .or_else(|| first["statusUpdate"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("{events:?}"))
        .to_owned();
    assert_eq!(
        filtered("TASK_STATE_INPUT_REQUIRED").await,
        (vec![task.clone()], 1)
    );
    // Completed directly at the peer, then read through the gateway (GetTask).
    let got = call(&env, &key, "GetTask", json!({ "id": task })).await;
    let ctx = got["contextId"].as_str().unwrap().to_owned();
    let http = reqwest::Client::new();
    let base = agent.url().trim_end_matches('/').to_owned();
    direct(&http, &base, message("done", Some(&ctx), Some(&task))).await;
    let got = call(&env, &key, "GetTask", json!({ "id": task })).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        filtered("TASK_STATE_COMPLETED").await,
        (vec![task.clone()], 1)
    );
    // Canceled through the gateway.
    let t = call(
        &env,
        &key,
        "SendMessage",
        json!({"message": message("need input", None, None)}),
    )
    .await;
    let other = t["task"]["id"].as_str().unwrap().to_owned();
    let c = call(&env, &key, "CancelTask", json!({ "id": other })).await;
    assert_eq!(c["status"]["state"], "TASK_STATE_CANCELED", "{c}");
    assert_eq!(filtered("TASK_STATE_CANCELED").await, (vec![other], 1));
    assert_eq!(filtered("TASK_STATE_INPUT_REQUIRED").await, (vec![], 0));
    env.stop().await;
    agent.shutdown().await;
}
