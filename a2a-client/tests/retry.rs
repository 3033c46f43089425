//! Automatic retries of calls (issue 16): a send whose answer is lost (the connection cut after
//! the agent answered, a timeout, a 503) is sent again with the same `messageId`, and the real
//! `a2a-agent` with idempotent sends on runs the handler once; spent retries give
//! `RetriesExhausted` naming the attempts; an A2A error answer is never retried. On JSON-RPC and
//! HTTP+JSON, 1.0 and 0.3.
//!
//! Between client and agent sits [`Proxy`], a TCP relay on 127.0.0.1:0 that does to each
//! connection what the test's plan says. The client keeps no idle connection, so every request
//! is a new connection and the proxy's count is the number of requests.

use a2a_agent::{AgentConfig, AgentServer, Reply, RequestContext, ServerHandle, handler_fn};
use a2a_client::retry::Retry;
use a2a_client::{A2aClient, Binding, ClientError, ErrorKind, SelectedInterface, Version};
use a2a_types::v1;
use futures::StreamExt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does with one connection.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Plan {
    /// Relay both ways.
    Forward,
    /// Relay the request; when the agent's answer starts, close the connection without it.
    CutAfterAnswer,
    /// Relay the request; swallow the answer and keep the connection open (the client times out).
    Hang,
    /// Read the request and answer 503 without relaying it.
    Refuse503,
}

struct Proxy {
    url: String,
    conns: Arc<AtomicUsize>,
}

impl Proxy {
    /// Connections (= requests) so far.
    fn requests(&self) -> usize {
        self.conns.load(Ordering::SeqCst)
    }
}

/// A relay to `upstream` that treats connection `n` (from 0) as `plan(n)` says.
async fn proxy(upstream: SocketAddr, plan: impl Fn(usize) -> Plan + Send + 'static) -> Proxy {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let conns = Arc::new(AtomicUsize::new(0));
    let count = conns.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = l.accept().await {
            let n = count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(relay(client, upstream, plan(n)));
        }
    });
    Proxy { url, conns }
}

async fn relay(mut client: TcpStream, upstream: SocketAddr, plan: Plan) {
    if plan == Plan::Refuse503 {
        read_request(&mut client).await;
        let _ = client
            .write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
        return;
    }
    let Ok(mut agent) = TcpStream::connect(upstream).await else {
        return;
    };
    if plan == Plan::Forward {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut agent).await;
        return;
    }
    let (mut client_r, mut client_w) = client.into_split();
    let (mut agent_r, mut agent_w) = agent.into_split();
    let up = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_r, &mut agent_w).await;
    });
    // Wait for the answer to start: the agent has the request and has acted on it.
    let mut buf = [0u8; 1024];
    let _ = agent_r.read(&mut buf).await;
    if plan == Plan::Hang {
        // Swallow the rest; the relay of the request ends when the client gives up.
        let _ = tokio::io::copy(&mut agent_r, &mut tokio::io::sink()).await;
        let _ = up.await;
    } else {
        up.abort();
    }
    let _ = client_w.shutdown().await;
}

/// Reads one HTTP/1.1 request (head and `content-length` body).
async fn read_request(s: &mut TcpStream) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let Ok(n) = s.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_ascii_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + len {
                return;
            }
        }
    }
}

/// The agent: idempotent sends on; "hold" waits for a cancel, anything else takes 50 ms.
async fn agent() -> (ServerHandle, Arc<AtomicUsize>) {
    agent_with(AgentConfig::default()).await
}

/// [`agent`] on `cfg` (auth validation off, idempotent sends on).
async fn agent_with(cfg: AgentConfig) -> (ServerHandle, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let handler = handler_fn(move |ctx: RequestContext| {
        let r = r.clone();
        async move {
            r.fetch_add(1, Ordering::SeqCst);
            if ctx.text() == "hold" {
                tokio::select! {
                    _ = ctx.cancelled() => {}
                    _ = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
                return Ok(Reply::Empty);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(Reply::Text("done".into()))
        }
    });
    let cfg = AgentConfig {
        validate_auth: false,
        idempotency_window: Duration::from_secs(3600).into(),
        ..cfg
    };
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = AgentServer::new(a2a_agent::demo::echo_card(), handler)
        .config(cfg)
        .serve(l)
        .await
        .unwrap();
    (s, runs)
}

/// Both bindings at both versions.
fn combos() -> [(Binding, Version); 4] {
    [
        (Binding::JsonRpc, Version::V1),
        (Binding::HttpJson, Version::V1),
        (Binding::JsonRpc, Version::V03),
        (Binding::HttpJson, Version::V03),
    ]
}

/// Fast retries that record each retry as (attempt, operation).
fn fast(log: &Arc<Mutex<Vec<(u32, String)>>>) -> Retry {
    let log = log.clone();
    Retry {
        backoff: Duration::from_millis(10),
        // every agent in these tests honours the idempotent-send contract
        idempotent_sends: true,
        on_retry: Some(Arc::new(move |attempt, op, _| {
            log.lock().unwrap().push((attempt, op.to_string()))
        })),
        ..Retry::default()
    }
}

fn client(url: &str, binding: Binding, version: Version, retry: Retry) -> A2aClient {
    A2aClient::builder()
        .http_client(
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
        )
        .timeout(Some(Duration::from_secs(3)))
        .retry(retry)
        .from_interface(SelectedInterface::direct(
            url.parse().unwrap(),
            binding,
            version,
        ))
        .unwrap()
}

fn send_request(blocking: bool) -> v1::SendMessageRequest {
    let req = v1::SendMessageRequest::new(v1::Message::user_text("hi"));
    if blocking {
        return req;
    }
    req.with_configuration(v1::SendMessageConfiguration {
        return_immediately: Some(true),
        ..Default::default()
    })
}

fn task_of(answer: v1::SendMessageResponse) -> v1::Task {
    match answer {
        v1::SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls the agent (directly) until the task is completed.
async fn completed(c: &A2aClient, id: &str) -> v1::Task {
    for _ in 0..200 {
        let t = c.get_task(id, None).await.unwrap();
        if t.status.state == v1::TaskState::Completed {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} did not complete");
}

#[tokio::test]
async fn a_send_whose_answer_is_lost_is_retried_and_the_handler_runs_once() {
    for (binding, version) in combos() {
        for blocking in [true, false] {
            let what = format!("{binding} {version} blocking={blocking}");
            let (agent, runs) = agent().await;
            let p = proxy(agent.local_addr(), |n| {
                if n == 0 {
                    Plan::CutAfterAnswer
                } else {
                    Plan::Forward
                }
            })
            .await;
            let log = Arc::default();
            let c = client(&p.url, binding, version, fast(&log));
            let task = task_of(c.send(send_request(blocking)).await.unwrap());
            assert_eq!(p.requests(), 2, "{what}: sent twice");
            assert_eq!(*log.lock().unwrap(), vec![(2, "SendMessage".to_string())]);
            let direct = client(agent.url(), binding, version, Retry::off());
            let done = completed(&direct, &task.id).await;
            assert_eq!(runs.load(Ordering::SeqCst), 1, "{what}: one handler run");
            if blocking {
                assert_eq!(task.status.state, v1::TaskState::Completed, "{what}");
            }
            assert_eq!(done.id, task.id, "{what}: the caller got the one task");
            agent.shutdown().await;
        }
    }
}

#[tokio::test]
async fn a_timeout_a_503_and_a_lost_stream_opening_are_retried_with_one_run() {
    let (agent, runs) = agent().await;
    let log = Arc::default();

    // A timeout: the first answer never comes.
    let p = proxy(agent.local_addr(), |n| {
        if n == 0 { Plan::Hang } else { Plan::Forward }
    })
    .await;
    let c = A2aClient::builder()
        .http_client(
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
        )
        .timeout(Some(Duration::from_millis(1500)))
        .retry(fast(&log))
        .from_interface(SelectedInterface::direct(
            p.url.parse().unwrap(),
            Binding::JsonRpc,
            Version::V1,
        ))
        .unwrap();
    let task = task_of(c.send(send_request(true)).await.unwrap());
    assert_eq!(task.status.state, v1::TaskState::Completed);
    assert_eq!((p.requests(), runs.load(Ordering::SeqCst)), (2, 1));

    // A 503 from an intermediary: not relayed, retried.
    let p = proxy(agent.local_addr(), |n| {
        if n == 0 {
            Plan::Refuse503
        } else {
            Plan::Forward
        }
    })
    .await;
    let c = client(&p.url, Binding::HttpJson, Version::V1, fast(&log));
    task_of(c.send(send_request(true)).await.unwrap());
    assert_eq!((p.requests(), runs.load(Ordering::SeqCst)), (2, 2));

    // A streaming send whose response is lost before it starts: opened again, same messageId.
    let p = proxy(agent.local_addr(), |n| {
        if n == 0 {
            Plan::CutAfterAnswer
        } else {
            Plan::Forward
        }
    })
    .await;
    let c = client(&p.url, Binding::JsonRpc, Version::V03, fast(&log));
    let req = send_request(true);
    let events: Vec<_> = c.stream(req).await.unwrap().collect().await;
    let last = events.last().unwrap().as_ref().unwrap();
    let state = match last {
        v1::StreamResponse::Task(t) => t.status.state,
        v1::StreamResponse::StatusUpdate(s) => s.status.state,
        other => panic!("{other:?}"),
    };
    assert_eq!(state, v1::TaskState::Completed, "{events:?}");
    assert_eq!((p.requests(), runs.load(Ordering::SeqCst)), (2, 3));
    assert_eq!(log.lock().unwrap().len(), 3, "one retry each");
    agent.shutdown().await;
}

#[tokio::test]
async fn spent_retries_name_the_attempts_and_the_handler_still_ran_once() {
    let (agent, runs) = agent().await;
    for (binding, version) in combos().into_iter().skip(1).take(2) {
        let p = proxy(agent.local_addr(), |_| Plan::CutAfterAnswer).await;
        let log = Arc::default();
        let c = client(&p.url, binding, version, fast(&log));
        let before = runs.load(Ordering::SeqCst);
        let e = c.send(send_request(true)).await.unwrap_err();
        let ClientError::RetriesExhausted {
            what,
            attempts,
            last,
        } = &e
        else {
            panic!("{binding} {version}: {e:?}");
        };
        assert_eq!((what.as_str(), *attempts), ("SendMessage", 3));
        assert!(matches!(**last, ClientError::Transport(_)), "{last:?}");
        assert!(
            e.to_string()
                .starts_with("SendMessage: gave up after 3 attempts; last error: transport error"),
            "{e}"
        );
        assert_eq!(p.requests(), 3);
        // Every attempt reached the agent, which ran the message once.
        assert_eq!(runs.load(Ordering::SeqCst), before + 1);
    }

    // Nothing listens: refused connections are retried too (the request never left).
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let log = Arc::default();
    let strict = Retry {
        idempotent_sends: false,
        ..fast(&log)
    };
    let e = client(&url, Binding::JsonRpc, Version::V1, strict)
        .send(send_request(true))
        .await
        .unwrap_err();
    assert!(
        matches!(e, ClientError::RetriesExhausted { attempts: 3, .. }),
        "{e:?}"
    );
    assert_eq!(log.lock().unwrap().len(), 2);
    agent.shutdown().await;
}

#[tokio::test]
async fn an_answer_is_never_retried_nor_a_lost_send_when_sends_are_not_idempotent() {
    let (agent, runs) = agent().await;
    for (binding, version) in combos() {
        let what = format!("{binding} {version}");
        let p = proxy(agent.local_addr(), |_| Plan::Forward).await;
        let log = Arc::default();
        let c = client(&p.url, binding, version, fast(&log));
        // TaskNotFound: a send continuing a task that does not exist.
        let msg = v1::Message::user_text("hi").with_task_id("no-such-task");
        let e = c.send(v1::SendMessageRequest::new(msg)).await.unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::TaskNotFound), "{what}: {e:?}");
        // InvalidParams: a different message under a messageId already used.
        let first = v1::Message::user_text("one").with_message_id(format!("m-{what}"));
        task_of(c.send(v1::SendMessageRequest::new(first)).await.unwrap());
        let other = v1::Message::user_text("two").with_message_id(format!("m-{what}"));
        let e = c
            .send(v1::SendMessageRequest::new(other))
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::A2a(_)), "{what}: {e:?}");
        assert_eq!(e.kind(), Some(ErrorKind::InvalidParams), "{what}: {e:?}");
        assert_eq!(p.requests(), 3, "{what}: each sent once");
        assert!(log.lock().unwrap().is_empty(), "{what}");
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        4,
        "only the accepted sends ran"
    );

    // A client told the agent does not dedupe sends does not repeat a send that may have run.
    let p = proxy(agent.local_addr(), |_| Plan::CutAfterAnswer).await;
    let log = Arc::default();
    let strict = Retry {
        idempotent_sends: false,
        ..fast(&log)
    };
    let c = client(&p.url, Binding::JsonRpc, Version::V1, strict);
    let e = c.send(send_request(true)).await.unwrap_err();
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
    assert_eq!((p.requests(), runs.load(Ordering::SeqCst)), (1, 5));
    agent.shutdown().await;
}

#[tokio::test]
async fn a_cancel_whose_answer_is_lost_is_retried_and_gives_the_canceled_task() {
    for (binding, version) in combos().into_iter().step_by(3) {
        let (agent, _) = agent().await;
        // 0: the send; 1: the cancel, answer lost; 2: its retry, answered TaskNotCancelable (the
        // task was canceled by 1); 3: the GetTask that finds it canceled.
        let p = proxy(agent.local_addr(), |n| {
            if n == 1 {
                Plan::CutAfterAnswer
            } else {
                Plan::Forward
            }
        })
        .await;
        let log = Arc::default();
        let c = client(&p.url, binding, version, fast(&log));
        let req = v1::SendMessageRequest::new(v1::Message::user_text("hold")).with_configuration(
            v1::SendMessageConfiguration {
                return_immediately: Some(true),
                ..Default::default()
            },
        );
        let task = task_of(c.send(req).await.unwrap());
        let canceled = c.cancel_task(&task.id).await.unwrap();
        assert_eq!(canceled.id, task.id);
        assert_eq!(
            canceled.status.state,
            v1::TaskState::Canceled,
            "{binding} {version}"
        );
        assert_eq!(p.requests(), 4, "{binding} {version}");
        assert_eq!(*log.lock().unwrap(), vec![(2, "CancelTask".to_string())]);
        agent.shutdown().await;
    }
}

#[tokio::test]
async fn a_busy_agent_is_asked_again_and_its_refusal_is_kept_inside_the_spent_retries() {
    let (agent, runs) = agent_with(AgentConfig {
        max_concurrent_tasks: 1,
        ..AgentConfig::default()
    })
    .await;
    let log = Arc::default();
    for (binding, version) in combos() {
        let what = format!("{binding} {version}");
        let c = client(agent.url(), binding, version, fast(&log));
        let hold = v1::SendMessageRequest::new(v1::Message::user_text("hold")).with_configuration(
            v1::SendMessageConfiguration {
                return_immediately: Some(true),
                ..Default::default()
            },
        );
        let held = task_of(c.send(hold).await.unwrap());
        // The one slot is taken: "server busy" (ResourceExhausted) on every attempt.
        let again = v1::Message::user_text("hi").with_message_id(format!("busy-{what}"));
        let e = c
            .send(v1::SendMessageRequest::new(again.clone()))
            .await
            .unwrap_err();
        if (binding, version) == (Binding::JsonRpc, Version::V03) {
            // 0.3 JSON-RPC has no code for it: a generic -32000 (HTTP 200) is an answer, not
            // retried.
            assert!(
                matches!(&e, ClientError::A2a(a) if a.code == Some(-32000)),
                "{e:?}"
            );
        } else {
            assert!(
                matches!(e, ClientError::RetriesExhausted { attempts: 3, .. }),
                "{what}: {e:?}"
            );
            assert_eq!(e.kind(), Some(ErrorKind::ResourceExhausted), "{what}");
        }
        // Once the slot is free the same messageId is accepted: a refusal is not remembered.
        c.cancel_task(&held.id).await.unwrap();
        let mut answer = None;
        for _ in 0..100 {
            match c.send(v1::SendMessageRequest::new(again.clone())).await {
                Ok(a) => {
                    answer = Some(a);
                    break;
                }
                // (0.3 JSON-RPC: only the message says it.)
                Err(e) if e.to_string().contains("server busy") => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                Err(e) => panic!("{what}: {e:?}"),
            }
        }
        let task = task_of(answer.expect("the slot is freed after the cancel"));
        assert_eq!(task.status.state, v1::TaskState::Completed, "{what}");
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        8,
        "four holds and four sends ran"
    );
    assert_eq!(
        log.lock().unwrap().len(),
        3 * 2,
        "two retries on three interfaces"
    );
    agent.shutdown().await;
}
