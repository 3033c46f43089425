//! Stream resumption (issue 16): a stream whose connection breaks mid-way is resumed with
//! `Last-Event-ID`, and the caller sees every event once; streams without event ids, and
//! clients with reconnection off, end as before.
//!
//! The agent here is a small axum server on 127.0.0.1:0 speaking JSON-RPC 1.0 that numbers its
//! SSE events, honours `Last-Event-ID` on SubscribeToTask, and breaks the first stream's body
//! after a number of events.

use a2a_client::resume::Reconnect;
use a2a_client::retry::Retry;
use a2a_client::{A2aClient, Binding, SelectedInterface, Version};
use a2a_types::v1;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::HeaderMap;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const N: u64 = 12;

/// Event `i` (1-based) of the one task: the task, N-2 artifact chunks, the completed status.
fn event(i: u64) -> Value {
    let result = if i == 1 {
        json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}})
    } else if i < N {
        json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1", "append": i > 2,
            "artifact": {"artifactId": "a", "parts": [{"text": format!("c{i}")}]}}})
    } else {
        json!({"statusUpdate": {"taskId": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"}}})
    };
    json!({"jsonrpc": "2.0", "id": 1, "result": result})
}

/// A request's JSON-RPC method and `messageId`.
type Call = (String, Option<String>);

pub(crate) struct Agent {
    pub(crate) url: String,
    /// `Last-Event-ID` of each request (None: not sent).
    resumes: Arc<Mutex<Vec<Option<String>>>>,
    /// The JSON-RPC method and `messageId` (if any) of each request.
    calls: Arc<Mutex<Vec<Call>>>,
    streams: Arc<AtomicUsize>,
}

/// `cut`: the first stream breaks after this many events; `ids`: whether events are numbered.
pub(crate) async fn agent(cut: u64, ids: bool) -> Agent {
    agent_with(cut, ids, false).await
}

/// [`agent`]; with `resumes_break`, every later stream breaks before its first event too.
pub(crate) async fn agent_with(cut: u64, ids: bool, resumes_break: bool) -> Agent {
    let resumes = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let streams = Arc::new(AtomicUsize::new(0));
    let (r, c, s) = (resumes.clone(), calls.clone(), streams.clone());
    let app = Router::new().fallback(move |headers: HeaderMap, req: Request| {
        let (r, c, s) = (r.clone(), c.clone(), s.clone());
        async move {
            let body = axum::body::to_bytes(req.into_body(), 1 << 20)
                .await
                .unwrap_or_default();
            let call: Value = serde_json::from_slice(&body).unwrap_or_default();
            c.lock().unwrap().push((
                call["method"].as_str().unwrap_or_default().to_string(),
                call["params"]["message"]["messageId"]
                    .as_str()
                    .map(str::to_string),
            ));
            let last = headers
                .get("last-event-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            r.lock().unwrap().push(last.clone());
            let nth = s.fetch_add(1, Ordering::SeqCst);
            let from = last.and_then(|l| l.parse::<u64>().ok()).unwrap_or(0) + 1;
            let stop = match (nth, resumes_break) {
                (0, _) => cut,
                (_, true) => from - 1,
                (_, false) => N,
            };
            let body = futures::stream::iter(from..=N).then(move |i| async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                if i > stop {
                    return Err(std::io::Error::other("connection cut"));
                }
                let id = if ids {
                    format!("id: {i}\n")
                } else {
                    String::new()
                };
                Ok(format!("{id}data: {}\n\n", event(i)))
            });
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(body))
                .unwrap()
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await });
    Agent {
        url,
        resumes,
        calls,
        streams,
    }
}

fn client(url: &str, reconnect: Reconnect) -> A2aClient {
    client_with(url, Retry::default(), reconnect)
}

fn client_with(url: &str, retry: Retry, reconnect: Reconnect) -> A2aClient {
    A2aClient::builder()
        .retry(retry)
        .reconnect(reconnect)
        .from_interface(SelectedInterface::direct(
            url.parse().unwrap(),
            Binding::JsonRpc,
            Version::V1,
        ))
        .unwrap()
}

fn fast() -> Reconnect {
    Reconnect {
        backoff: Duration::from_millis(10),
        ..Reconnect::default()
    }
}

async fn collect(c: &A2aClient) -> Vec<Result<v1::StreamResponse, String>> {
    let req = v1::SendMessageRequest::new(v1::Message::user_text("go"));
    let mut s = c.stream(req).await.unwrap();
    let mut out = Vec::new();
    while let Some(ev) = s.next().await {
        out.push(ev.map_err(|e| e.to_string()));
    }
    out
}

pub(crate) fn texts(evs: &[Result<v1::StreamResponse, String>]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match e {
            Ok(v1::StreamResponse::ArtifactUpdate(a)) => serde_json::to_value(&a.artifact.parts[0])
                .ok()?["text"]
                .as_str()
                .map(str::to_string),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_broken_stream_is_resumed_and_every_event_arrives_once() {
    for cut in [1, 2, 5, N - 1] {
        let a = agent(cut, true).await;
        let reconnects = Arc::new(Mutex::new(Vec::new()));
        let seen = reconnects.clone();
        let c = client(
            &a.url,
            Reconnect {
                on_reconnect: Some(Arc::new(move |n, id| {
                    seen.lock().unwrap().push((n, id.to_string()))
                })),
                ..fast()
            },
        );
        let evs = collect(&c).await;
        assert!(evs.iter().all(Result::is_ok), "cut {cut}: {evs:?}");
        let want: Vec<String> = (2..N).map(|i| format!("c{i}")).collect();
        assert_eq!(texts(&evs), want, "cut {cut}");
        assert_eq!(
            evs.len() as u64,
            N,
            "cut {cut}: one task, the chunks, the status"
        );
        assert_eq!(
            a.resumes.lock().unwrap().clone(),
            vec![None, Some(cut.to_string())],
            "cut {cut}: resumed once, after the last event read"
        );
        assert_eq!(
            reconnects.lock().unwrap().clone(),
            vec![(1, cut.to_string())]
        );
    }
}

#[tokio::test]
async fn without_event_ids_or_with_reconnect_off_the_break_reaches_the_caller() {
    let a = agent(4, false).await;
    let evs = collect(&client(&a.url, fast())).await;
    assert!(evs.last().unwrap().is_err(), "{evs:?}");
    assert_eq!(a.streams.load(Ordering::SeqCst), 1, "no resume without ids");

    let a = agent(4, true).await;
    let off = Reconnect {
        retries: 0,
        ..fast()
    };
    let evs = collect(&client(&a.url, off)).await;
    assert!(evs.last().unwrap().is_err(), "{evs:?}");
    assert_eq!(a.streams.load(Ordering::SeqCst), 1, "reconnect off");
}

#[tokio::test]
async fn spent_reconnections_end_the_stream_with_an_error_naming_the_attempts() {
    let a = agent_with(3, true, true).await;
    let reconnects = Arc::new(Mutex::new(Vec::new()));
    let seen = reconnects.clone();
    let c = client(
        &a.url,
        Reconnect {
            on_reconnect: Some(Arc::new(move |n, id| {
                seen.lock().unwrap().push((n, id.to_string()))
            })),
            ..fast()
        },
    );
    let evs = collect(&c).await;
    assert_eq!(evs.len(), 4, "three events, then the error: {evs:?}");
    assert_eq!(texts(&evs), ["c2", "c3"]);
    let Err(e) = evs.last().unwrap() else {
        panic!("{evs:?}")
    };
    assert!(
        e.starts_with("reconnecting the stream of task t1 after event 3: gave up after 3 attempts"),
        "{e}"
    );
    let three: Vec<(u32, String)> = (1..=3).map(|n| (n, "3".to_string())).collect();
    assert_eq!(reconnects.lock().unwrap().clone(), three);
    assert_eq!(
        a.resumes.lock().unwrap().clone(),
        [None, Some("3".into()), Some("3".into()), Some("3".into())],
        "bounded: the first stream and three resumes"
    );
}

#[tokio::test]
async fn a_stream_broken_before_its_first_event_is_sent_again_with_the_same_message_id() {
    let a = agent(0, true).await;
    let reconnects = Arc::new(Mutex::new(Vec::new()));
    let seen = reconnects.clone();
    // the send is sent again only when the agent is known to dedupe messageIds
    let c = client_with(
        &a.url,
        Retry {
            idempotent_sends: true,
            ..Retry::default()
        },
        Reconnect {
            on_reconnect: Some(Arc::new(move |n, id| {
                seen.lock().unwrap().push((n, id.to_string()))
            })),
            ..fast()
        },
    );
    let evs = collect(&c).await;
    assert!(evs.iter().all(Result::is_ok), "{evs:?}");
    assert_eq!(evs.len() as u64, N, "every event once");
    assert_eq!(reconnects.lock().unwrap().clone(), [(1, String::new())]);
    assert_eq!(
        a.resumes.lock().unwrap().clone(),
        [None, None],
        "from the start"
    );
    let calls = a.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0, "SendStreamingMessage");
    assert_eq!(calls[0], calls[1], "the same send, the same messageId");
    assert!(calls[0].1.is_some());

    // A client that may not repeat sends passes the break on.
    let a = agent(0, true).await;
    let strict = A2aClient::builder()
        .reconnect(fast())
        .retry(a2a_client::retry::Retry {
            idempotent_sends: false,
            ..Default::default()
        })
        .from_interface(SelectedInterface::direct(
            a.url.parse().unwrap(),
            Binding::JsonRpc,
            Version::V1,
        ))
        .unwrap();
    let evs = collect(&strict).await;
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert!(evs[0].is_err());
    assert_eq!(a.streams.load(Ordering::SeqCst), 1);
}
