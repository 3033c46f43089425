//! SDK interop beyond the core scenarios of `interop_harness.rs`: interactive streams and
//! cancellation, push delivery to a loopback webhook, the agent process's lifetime, auth and
//! extension headers, capabilities switched off, error cases and the venv setup itself.

use std::net::TcpStream;
use std::time::Duration;

use conformance::interop::{
    self, Binding, ClientOptions, ClientRun, PyAgent, Sdk, event_kind as kind_of, status_text,
    task_state as state_of,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::interop_harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_subscribe_then_cancel() {
    interop::ensure_venvs_async().await.expect("venvs");
    for sdk in Sdk::ALL {
        let agent = PyAgent::start_async(sdk).await.expect("agent");
        for binding in interop::DRIVER_BINDINGS {
            let mut opts = ClientOptions::new(binding);
            opts.timeout = Duration::from_secs(45);
            let mut run = ClientRun::start(sdk, agent.url(), &opts)
                .await
                .expect("client");
            run.send(json!({"op": "send", "text": "slow 20", "blocking": false}))
                .await
                .unwrap();
            let (sent, _) = run.next_matching(|l| l["i"] == 0).await.unwrap();
            assert_eq!(sent["ok"], true, "{sent}");
            let task_id = sent["task_id"].as_str().unwrap().to_string();
            run.send(json!({"op": "subscribe", "taskId": task_id, "background": true}))
                .await
                .unwrap();
            // 1.x: the subscription starts with the Task (current state); 0.3.26: it starts with
            // the next live event (no snapshot)
            let (first, _) = run
                .next_matching(|l| l.get("event").is_some())
                .await
                .unwrap();
            let want = if sdk == Sdk::V1 { "task" } else { "status" };
            assert_eq!(
                kind_of(&first["event"]),
                want,
                "{sdk:?}/{binding:?}: {first}"
            );
            assert_eq!(first["task_id"], task_id.as_str());
            run.send(json!({"op": "cancel", "taskId": task_id}))
                .await
                .unwrap();
            // read until both the cancel result and the end of the subscription are in
            let mut seen = Vec::new();
            let mut cancel = None;
            let mut done = None;
            while cancel.is_none() || done.is_none() {
                let line = run.next_line().await.unwrap().expect("client exited early");
                if line["op"] == "cancel" {
                    cancel = Some(line.clone());
                }
                if line["op"] == "subscribe" && line["done"] == true {
                    done = Some(line.clone());
                }
                seen.push(line);
            }
            let (cancel, done) = (cancel.unwrap(), done.unwrap());
            assert_eq!(cancel["ok"], true, "{cancel}");
            assert_eq!(state_of(&cancel["result"]), "canceled");
            assert_eq!(done["ok"], true, "{done}");
            // 1.x: the subscription's last event is the canceled status. 0.3.26: the stream just
            // closes after the cancel (the canceled status is not delivered to resubscribers).
            if sdk == Sdk::V1 {
                let last = seen
                    .iter()
                    .rev()
                    .find(|l| l.get("event").is_some())
                    .map(|l| state_of(&l["event"]))
                    .unwrap_or_else(|| state_of(&first["event"]));
                assert_eq!(last, "canceled", "{sdk:?}/{binding:?}: {seen:?}");
            }
            let rest = run.finish().await.unwrap();
            assert!(rest.is_empty(), "{rest:?}");
        }
    }
}

/// A one-route webhook receiver on 127.0.0.1:0: records (headers, body) of each POST.
async fn webhook() -> (String, mpsc::UnboundedReceiver<(String, Value)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_string();
                    let len = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if buf.len() < end + 4 + len {
                        continue;
                    }
                    let body =
                        serde_json::from_slice(&buf[end + 4..end + 4 + len]).unwrap_or(Value::Null);
                    let _ = tx.send((head.to_lowercase(), body));
                    let _ = sock
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                        )
                        .await;
                    return;
                }
            });
        }
    });
    (url, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_deliver_push_to_loopback_webhook() {
    interop::ensure_venvs_async().await.expect("venvs");
    for sdk in Sdk::ALL {
        let agent = PyAgent::start_async(sdk).await.expect("agent");
        let (hook, mut rx) = webhook().await;
        let out = interop::run_client_async(
            sdk,
            agent.url(),
            Binding::JsonRpc,
            json!([
                {"op": "send", "text": "input"},
                {"op": "push_set", "taskId": "$0.task_id", "url": hook, "token": "tok-9"},
                {"op": "send", "text": "done now", "taskId": "$0.task_id"},
            ]),
        )
        .await
        .expect("client run");
        for line in &out {
            assert_eq!(line["ok"], true, "{sdk:?}: {line}");
        }
        let task_id = out[0]["task_id"].as_str().unwrap().to_string();
        let mut bodies = Vec::new();
        // deliveries for the follow-up turn; stop at the completed one
        while let Ok(Some((head, body))) =
            tokio::time::timeout(Duration::from_secs(20), rx.recv()).await
        {
            assert!(
                head.contains("x-a2a-notification-token: tok-9"),
                "{sdk:?}: {head}"
            );
            let done = state_of(&body) == "completed";
            bodies.push(body);
            if done {
                break;
            }
        }
        assert!(
            !bodies.is_empty(),
            "{sdk:?}: no delivery; agent log:\n{}",
            agent.stderr_tail()
        );
        let last = bodies.last().unwrap();
        assert_eq!(state_of(last), "completed", "{sdk:?}: {bodies:?}");
        let id = last
            .get("statusUpdate")
            .map(|u| u["taskId"].clone())
            .or_else(|| last.get("task").map(|t| t["id"].clone()))
            .unwrap_or_else(|| last["id"].clone());
        assert_eq!(id, task_id.as_str(), "{sdk:?}: {last}");
    }
}

#[test]
fn agent_process_ends_on_drop() {
    setup();
    let agent = PyAgent::start(Sdk::V03).expect("agent");
    let addr = agent.url().trim_start_matches("http://").to_string();
    assert!(TcpStream::connect(&addr).is_ok());
    drop(agent);
    assert!(
        TcpStream::connect(&addr).is_err(),
        "agent still listening after drop"
    );
}

#[test]
fn api_key_and_extension_header() {
    setup();
    for sdk in Sdk::ALL {
        let agent = PyAgent::start_with(sdk, &["--api-key", "sekret"]).expect("agent");
        // 1.x reads `A2A-Extensions`; 0.3.26 reads the legacy `X-A2A-Extensions`
        let ext_header = if sdk == Sdk::V1 {
            "A2A-Extensions"
        } else {
            "X-A2A-Extensions"
        };
        for binding in interop::DRIVER_BINDINGS {
            let out = run(
                sdk,
                &agent,
                binding,
                json!([
                    {"op": "card"},
                    {"op": "send", "text": "echo a"},
                    {"op": "headers", "headers": {"X-API-Key": "sekret",
                                                  ext_header: "urn:a2a-rs:interop:echo-ext"}},
                    {"op": "send", "text": "ext"},
                    {"op": "headers", "headers": {ext_header: null}},
                    {"op": "send", "text": "ext"},
                ]),
            );
            let card = &ok(&out, 0)["result"];
            let scheme = &card["securitySchemes"]["apiKey"];
            let declared = if sdk == Sdk::V1 {
                &scheme["apiKeySecurityScheme"]
            } else {
                scheme
            };
            assert_eq!(declared["name"], "X-API-Key", "{card}");
            assert_eq!(
                card["capabilities"]["extensions"][0]["uri"],
                "urn:a2a-rs:interop:echo-ext"
            );
            assert_eq!(err(&out, 1)["httpStatus"], 401, "{sdk:?}/{binding:?}");
            assert_eq!(
                status_text(&ok(&out, 3)["result"]),
                "extensions: urn:a2a-rs:interop:echo-ext"
            );
            assert_eq!(status_text(&ok(&out, 5)["result"]), "extensions: none");
        }
    }
}

#[test]
fn capabilities_off_and_error_cases() {
    setup();
    for sdk in Sdk::ALL {
        let off = PyAgent::start_with(sdk, &["--no-streaming", "--no-push", "--no-extended-card"])
            .expect("agent with capabilities off");
        let on = PyAgent::start(sdk).expect("agent");
        for binding in interop::DRIVER_BINDINGS {
            let out = run(
                sdk,
                &off,
                binding,
                json!([
                    {"op": "send", "text": "echo a"},
                    {"op": "stream", "text": "stream 1"},
                    {"op": "push_set", "taskId": "$0.task_id", "url": "http://127.0.0.1:9/h"},
                    {"op": "extended_card"},
                    {"op": "subscribe", "taskId": "$0.task_id"},
                ]),
            );
            // streaming off in the card: the SDK client falls back to one blocking send
            let events = out.events(1);
            assert_eq!(events.len(), 1, "{sdk:?}/{binding:?}");
            assert_eq!(state_of(events[0]), "completed");
            // ... and refuses to subscribe on the client side
            assert_eq!(err(&out, 4)["type"], "NotImplementedError");
            // no extended card: the SDK client hands back the public card
            let card = &ok(&out, 3)["result"];
            assert!(
                !card["name"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with("(extended)")
            );
            let push = err(&out, 2);
            match (sdk, binding) {
                (Sdk::V1 | Sdk::V103, _) => {
                    assert_eq!(push["type"], "PushNotificationNotSupportedError");
                    assert_eq!(push["code"], -32003);
                }
                // 0.3.26 answers an internal error over JSON-RPC, 501 over REST
                (Sdk::V03, Binding::JsonRpc) => assert_eq!(push["code"], -32603, "{push}"),
                (Sdk::V03, Binding::HttpJson) => assert_eq!(push["httpStatus"], 501, "{push}"),
                (_, Binding::Grpc) => unreachable!("the drivers run JSON-RPC and HTTP+JSON"),
            }

            let out = run(
                sdk,
                &on,
                binding,
                json!([
                    {"op": "send", "text": "echo a"},
                    {"op": "subscribe", "taskId": "$0.task_id"},
                    {"op": "subscribe", "taskId": "no-such-task"},
                    {"op": "push_get", "taskId": "$0.task_id", "id": "no-such-config"},
                ]),
            );
            let (terminal, unknown, no_cfg) = (err(&out, 1), err(&out, 2), err(&out, 3));
            match (sdk, binding) {
                (Sdk::V1 | Sdk::V103, _) => {
                    assert_eq!(terminal["type"], "UnsupportedOperationError", "{terminal}");
                    assert_eq!(terminal["code"], -32004);
                    assert_eq!(unknown["code"], -32001);
                    assert_eq!(no_cfg["code"], -32001, "{no_cfg}");
                }
                (Sdk::V03, Binding::JsonRpc) => {
                    // 0.3.26: invalid params for a terminal task, internal error for a
                    // missing config
                    assert_eq!(terminal["code"], -32602, "{terminal}");
                    assert_eq!(unknown["code"], -32001);
                    assert_eq!(no_cfg["code"], -32603, "{no_cfg}");
                }
                (Sdk::V03, Binding::HttpJson) => {
                    // the 0.3.26 REST server breaks the SSE response off instead of answering
                    // an error; the client reports a network error (503)
                    assert_eq!(terminal["httpStatus"], 503, "{terminal}");
                    assert_eq!(unknown["httpStatus"], 503, "{unknown}");
                    assert_eq!(no_cfg["httpStatus"], 500, "{no_cfg}");
                }
                (_, Binding::Grpc) => unreachable!("the drivers run JSON-RPC and HTTP+JSON"),
            }
        }
    }
}

#[test]
fn setup_venvs_is_idempotent_and_concurrency_safe() {
    setup();
    let script = interop::repo_root().join("interop/setup_venvs.py");
    let spawn = || {
        std::process::Command::new("python3")
            .arg(&script)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn setup_venvs.py")
    };
    // two at once: both succeed, neither rebuilds (the venvs are current)
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("sdk1: up to date"), "{stdout}");
        assert!(stdout.contains("sdk03: up to date"), "{stdout}");
        assert!(!stdout.contains("creating"), "{stdout}");
    }
    for sdk in Sdk::ALL {
        assert!(sdk.python().exists());
    }
}

#[test]
fn sdk1_agent_without_compat_serves_1_0_only() {
    setup();
    let agent = PyAgent::start_with(Sdk::V1, &["--no-compat"]).expect("agent");
    let out = run(
        Sdk::V1,
        &agent,
        Binding::JsonRpc,
        json!([{"op": "card"}, {"op": "send", "text": "echo a"}]),
    );
    let card = &ok(&out, 0)["result"];
    let ifaces = interface_set(card);
    assert_eq!(ifaces.len(), 2, "{card}");
    assert!(ifaces.keys().all(|(_, v)| v == "1.0"));
    assert_eq!(state_of(&ok(&out, 1)["result"]), "completed");
    // the 0.3 SDK client cannot even parse a card without the 0.3 `url` field
    let out = run(
        Sdk::V03,
        &agent,
        Binding::JsonRpc,
        json!([{"op": "send", "text": "echo a"}]),
    );
    let e = err(&out, 0);
    assert_eq!(e["type"], "A2AClientJSONError", "{e}");
    // and the 1.x SDK finds no 0.3 interface
    let mut opts = ClientOptions::new(Binding::HttpJson);
    opts.protocol_version = Some("0.3".into());
    let out = interop::run_client_with(
        Sdk::V1,
        agent.url(),
        &opts,
        json!([{"op": "send", "text": "echo a"}]),
    )
    .unwrap();
    assert!(
        err(&out, 0)["message"]
            .as_str()
            .unwrap()
            .contains("no HTTP+JSON interface at version 0.3")
    );
}
