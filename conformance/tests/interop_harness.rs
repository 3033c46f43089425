//! Proves the Python SDK interop harness (`conformance::interop`, `interop/`) works, and pins how
//! each official SDK behaves on the wire (see `interop/README.md`).
//!
//! Each test starts a reference agent written with the SDK and drives it with the same SDK's
//! client driver over each binding the agent serves. The venvs are created on first use
//! (`python3 interop/setup_venvs.py`, PyPI needed once).

use std::collections::HashMap;
use std::net::TcpStream;
use std::time::Duration;

use conformance::interop::{
    self, Binding, ClientOptions, ClientOutput, ClientRun, PyAgent, Sdk, event_kind as kind_of,
    status_text, task_state as state_of,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

fn setup() {
    interop::ensure_venvs().expect("python venvs");
}

fn run(sdk: Sdk, agent: &PyAgent, binding: Binding, scenario: Value) -> ClientOutput {
    let opts = ClientOptions::new(binding);
    let out = interop::run_client_with(sdk, agent.url(), &opts, scenario).expect("client run");
    for line in &out.lines {
        eprintln!("{sdk:?}/{binding:?}: {}", truncate(line));
    }
    out
}

fn truncate(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}...", &s[..300])
    } else {
        s
    }
}

fn artifact_event(ev: &Value) -> &Value {
    ev.get("artifactUpdate").unwrap_or(ev)
}

fn ok(out: &ClientOutput, i: usize) -> &Value {
    let rec = out.op(i).unwrap_or_else(|| panic!("no record for op {i}"));
    assert_eq!(rec["ok"], true, "op {i} failed: {rec}");
    rec
}

fn err(out: &ClientOutput, i: usize) -> &Value {
    let rec = out.op(i).unwrap_or_else(|| panic!("no record for op {i}"));
    assert_eq!(rec["ok"], false, "op {i} should fail: {rec}");
    &rec["error"]
}

/// The common scenario: card, echo, get, stream 3, cancel of slow, push CRUD, unknown task,
/// extended card, message reply, input-required turn, fail.
fn core_scenario() -> Value {
    json!([
        {"op": "card"},                                                   // 0
        {"op": "send", "text": "echo hello"},                             // 1
        {"op": "get", "taskId": "$1.task_id", "historyLength": 1},        // 2
        {"op": "stream", "text": "stream 3"},                             // 3
        {"op": "send", "text": "slow", "blocking": false},                // 4
        {"op": "cancel", "taskId": "$4.task_id"},                         // 5
        {"op": "get", "taskId": "$4.task_id"},                            // 6
        {"op": "push_set", "taskId": "$1.task_id", "url": "http://127.0.0.1:9/hook",
         "token": "tok-1", "id": "cfg-1"},                                // 7
        {"op": "push_get", "taskId": "$1.task_id", "id": "cfg-1"},        // 8
        {"op": "push_list", "taskId": "$1.task_id"},                      // 9
        {"op": "push_delete", "taskId": "$1.task_id", "id": "cfg-1"},     // 10
        {"op": "get", "taskId": "no-such-task"},                          // 11
        {"op": "extended_card"},                                          // 12
        {"op": "send", "text": "message yo"},                             // 13
        {"op": "send", "text": "input"},                                  // 14
        {"op": "send", "text": "more", "taskId": "$14.task_id"},          // 15
        {"op": "send", "text": "fail"},                                   // 16
        {"op": "cancel", "taskId": "$1.task_id"},                         // 17
    ])
}

/// Assertions shared by every SDK and binding.
fn check_common(sdk: Sdk, binding: Binding, out: &ClientOutput) {
    // send echo -> completed, artifact "echo" with the text
    let sent = &ok(out, 1)["result"];
    assert_eq!(state_of(sent), "completed");
    let task = sent.get("task").unwrap_or(sent);
    assert_eq!(task["artifacts"][0]["name"], "echo");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "hello");
    let task_id = ok(out, 1)["task_id"].as_str().expect("task id").to_string();

    // get with historyLength 1
    let got = &ok(out, 2)["result"];
    assert_eq!(got["id"], task_id.as_str());
    assert_eq!(state_of(got), "completed");
    assert!(
        got["history"].as_array().map_or(0, Vec::len) <= 1,
        "historyLength ignored: {got}"
    );

    // stream 3: task, 3 working, 2 artifact chunks, completed
    let events = out.events(3);
    let kinds: Vec<&str> = events.iter().map(|e| kind_of(e)).collect();
    assert_eq!(
        kinds,
        [
            "task", "status", "status", "status", "artifact", "artifact", "status"
        ],
        "{sdk:?}/{binding:?} stream shape"
    );
    for ev in &events[1..4] {
        assert_eq!(state_of(ev), "working");
    }
    assert_eq!(state_of(events[6]), "completed");
    let (a1, a2) = (artifact_event(events[4]), artifact_event(events[5]));
    assert_ne!(a1["append"], true);
    assert_ne!(a1["lastChunk"], true);
    assert_eq!(a2["append"], true);
    assert_eq!(a2["lastChunk"], true);
    assert_eq!(a1["artifact"]["artifactId"], a2["artifact"]["artifactId"]);
    let done = ok(out, 3);
    assert_eq!(done["done"], true);
    assert_eq!(done["events"], 7);

    // cancel of a running task -> canceled, and get agrees
    assert!(
        matches!(
            state_of(&ok(out, 4)["result"]).as_str(),
            "submitted" | "working"
        ),
        "non-blocking send of slow: {}",
        ok(out, 4)
    );
    assert_eq!(state_of(&ok(out, 5)["result"]), "canceled");
    assert_eq!(state_of(&ok(out, 6)["result"]), "canceled");

    // push set/get
    for i in [7, 8] {
        let cfg = &ok(out, i)["result"];
        let inner = cfg.get("pushNotificationConfig").unwrap_or(cfg);
        assert_eq!(inner["url"], "http://127.0.0.1:9/hook");
        assert_eq!(inner["id"], "cfg-1");
        assert_eq!(inner["token"], "tok-1");
        assert_eq!(cfg["taskId"], task_id.as_str());
    }

    // extended card
    let ext = &ok(out, 12)["result"];
    assert!(
        ext["name"]
            .as_str()
            .unwrap_or_default()
            .ends_with("(extended)"),
        "{ext}"
    );

    // message reply: no task
    let msg = &ok(out, 13)["result"];
    let msg = msg.get("message").unwrap_or(msg);
    assert_eq!(msg["parts"][0]["text"], "yo");
    assert!(ok(out, 13).get("task_id").is_none());

    // input-required, then the follow-up completes the same task
    assert_eq!(state_of(&ok(out, 14)["result"]), "input-required");
    let follow = ok(out, 15);
    assert_eq!(state_of(&follow["result"]), "completed");
    assert_eq!(follow["task_id"], ok(out, 14)["task_id"]);

    // fail
    assert_eq!(state_of(&ok(out, 16)["result"]), "failed");
}

fn interface_set(card: &Value) -> HashMap<(String, String), String> {
    card["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            (
                (
                    i["protocolBinding"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    i["protocolVersion"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ),
                i["url"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn sdk1_core(binding: Binding) {
    setup();
    let agent = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    let out = run(Sdk::V1, &agent, binding, core_scenario());
    check_common(Sdk::V1, binding, &out);

    let card = &ok(&out, 0)["result"];
    let ifaces = interface_set(card);
    for key in [
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
        ("HTTP+JSON", "0.3"),
    ] {
        assert!(
            ifaces.contains_key(&(key.0.to_string(), key.1.to_string())),
            "card lacks {key:?}: {card}"
        );
    }
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);

    // push list/delete: full support in 1.0
    let list = &ok(&out, 9)["result"]["configs"];
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list[0]["id"], "cfg-1");
    ok(&out, 10);

    // unknown task: TaskNotFoundError, -32001 (REST: mapped back from ErrorInfo reason)
    let e = err(&out, 11);
    assert_eq!(e["type"], "TaskNotFoundError");
    assert_eq!(e["code"], -32001);
    assert_eq!(e["httpStatus"], 404);

    // cancel of a completed task: TaskNotCancelableError, -32002
    let e = err(&out, 17);
    assert_eq!(e["type"], "TaskNotCancelableError");
    assert_eq!(e["code"], -32002);
}

#[test]
fn sdk1_client_against_sdk1_agent_jsonrpc() {
    sdk1_core(Binding::JsonRpc);
}

#[test]
fn sdk1_client_against_sdk1_agent_rest() {
    sdk1_core(Binding::Rest);
}

fn sdk03_core(binding: Binding) {
    setup();
    let agent = PyAgent::start(Sdk::V03).expect("sdk03 agent");
    let out = run(Sdk::V03, &agent, binding, core_scenario());
    check_common(Sdk::V03, binding, &out);

    let card = &ok(&out, 0)["result"];
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(card["url"], format!("{}/", agent.url()));
    assert_eq!(card["additionalInterfaces"][1]["transport"], "HTTP+JSON");
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true);

    // stream events of 0.3 carry `final`, true only on the last one
    let events = out.events(3);
    assert_eq!(events[6]["final"], true);
    assert_eq!(events[1]["final"], false);

    match binding {
        Binding::JsonRpc => {
            // not in the 0.3 SDK client: sent raw with the SDK's models
            let list = &ok(&out, 9)["result"];
            assert_eq!(list["via"], "raw");
            assert_eq!(list["configs"][0]["pushNotificationConfig"]["id"], "cfg-1");
            // 0.3.26 quirk: the delete success response has no `result` member
            assert_eq!(
                ok(&out, 10)["result"]["quirk"],
                "response had no result member"
            );
            let e = err(&out, 11);
            assert_eq!(e["code"], -32001);
            assert_eq!(e["type"], "A2AClientJSONRPCError");
            assert_eq!(err(&out, 17)["code"], -32002);
        }
        Binding::Rest => {
            // 0.3.26 REST server gaps: list not implemented (500), delete has no route (405)
            assert_eq!(err(&out, 9)["httpStatus"], 500);
            assert_eq!(err(&out, 10)["httpStatus"], 405);
            // the 0.3 REST client keeps only the HTTP status
            let e = err(&out, 11);
            assert_eq!(e["type"], "A2AClientHTTPError");
            assert_eq!(e["httpStatus"], 404);
            assert_eq!(err(&out, 17)["httpStatus"], 409);
        }
    }
}

#[test]
fn sdk03_client_against_sdk03_agent_jsonrpc() {
    sdk03_core(Binding::JsonRpc);
}

#[test]
fn sdk03_client_against_sdk03_agent_rest() {
    sdk03_core(Binding::Rest);
}

#[test]
fn sdk03_client_has_no_list_and_sdk1_lists_with_paging() {
    setup();
    let agent = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    let out = run(
        Sdk::V1,
        &agent,
        Binding::JsonRpc,
        json!([
            {"op": "send", "text": "echo a"},
            {"op": "send", "text": "echo b", "contextId": "$0.context_id"},
            {"op": "send", "text": "echo c"},
            {"op": "list", "pageSize": 1, "contextId": "$0.context_id"},
            {"op": "list", "pageSize": 1, "contextId": "$0.context_id",
             "pageToken": "$3.result.nextPageToken"},
        ]),
    );
    let p1 = &ok(&out, 3)["result"];
    let p2 = &ok(&out, 4)["result"];
    assert_eq!(p1["totalSize"], 2, "{p1}");
    assert_eq!(p1["tasks"].as_array().map(Vec::len), Some(1));
    assert_eq!(p2["tasks"].as_array().map(Vec::len), Some(1));
    assert_ne!(p1["tasks"][0]["id"], p2["tasks"][0]["id"]);
    assert!(p1["nextPageToken"].as_str().is_some_and(|t| !t.is_empty()));

    let agent03 = PyAgent::start(Sdk::V03).expect("sdk03 agent");
    let out = run(
        Sdk::V03,
        &agent03,
        Binding::JsonRpc,
        json!([{"op": "list"}]),
    );
    assert_eq!(err(&out, 0)["type"], "Unsupported");
}

#[test]
fn sdk1_client_speaks_03_to_both_agents() {
    setup();
    let agent1 = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    let agent03 = PyAgent::start(Sdk::V03).expect("sdk03 agent");
    let scenario = json!([
        {"op": "send", "text": "echo compat"},
        {"op": "get", "taskId": "$0.task_id"},
        {"op": "stream", "text": "stream 1"},
        {"op": "get", "taskId": "no-such-task"},
    ]);
    for (agent, version) in [(&agent1, Some("0.3")), (&agent03, None)] {
        for binding in Binding::ALL {
            let mut opts = ClientOptions::new(binding);
            opts.protocol_version = version.map(str::to_string);
            opts.trace = true;
            let out = interop::run_client_with(Sdk::V1, agent.url(), &opts, scenario.clone())
                .expect("client run");
            assert_eq!(
                state_of(&ok(&out, 0)["result"]),
                "completed",
                "{:?}",
                out.lines
            );
            assert_eq!(state_of(&ok(&out, 1)["result"]), "completed");
            assert_eq!(out.events(2).len(), 5);
            // every request went out as 0.3
            assert!(
                out.stderr.contains("\"a2a-version\": \"0.3\""),
                "{}",
                out.stderr
            );
            assert!(!out.stderr.contains("\"a2a-version\": \"1.0\""));
            let e = err(&out, 3);
            match binding {
                Binding::JsonRpc => assert_eq!(e["code"], -32001, "{e}"),
                // the compat REST client reports a 404 as MethodNotFoundError
                Binding::Rest => assert_eq!(e["httpStatus"], 404, "{e}"),
            }
        }
    }
}

#[test]
fn sdk03_client_against_sdk1_agent_compat() {
    setup();
    let agent = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    for binding in Binding::ALL {
        let out = run(
            Sdk::V03,
            &agent,
            binding,
            json!([
                {"op": "card"},
                {"op": "send", "text": "echo x"},
                {"op": "stream", "text": "stream 2"},
                {"op": "cancel", "taskId": "$1.task_id"},
            ]),
        );
        // the 1.x card carries the injected 0.3 fields the 0.3 client needs
        let card = &ok(&out, 0)["result"];
        assert_eq!(card["protocolVersion"], "0.3");
        assert_eq!(card["url"], format!("{}/", agent.url()));
        assert_eq!(state_of(&ok(&out, 1)["result"]), "completed");
        assert_eq!(out.events(2).len(), 6);
        let e = err(&out, 3);
        match binding {
            Binding::JsonRpc => assert_eq!(e["code"], -32002),
            Binding::Rest => assert_eq!(e["httpStatus"], 400),
        }
    }
}

#[test]
fn version_header_refused_by_sdk1_agent() {
    setup();
    let agent = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    for binding in Binding::ALL {
        let out = run(
            Sdk::V1,
            &agent,
            binding,
            json!([
                {"op": "headers", "headers": {"A2A-Version": "9.9"}},
                {"op": "get", "taskId": "x"},
                {"op": "headers", "headers": {"A2A-Version": null}},
                {"op": "get", "taskId": "x"},
            ]),
        );
        let e = err(&out, 1);
        assert_eq!(e["type"], "VersionNotSupportedError", "{e}");
        assert_eq!(e["code"], -32009);
        // header removed again: the SDK's own 1.0 header is back
        assert_eq!(err(&out, 3)["type"], "TaskNotFoundError");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_subscribe_then_cancel() {
    interop::ensure_venvs_async().await.expect("venvs");
    for sdk in Sdk::ALL {
        let agent = PyAgent::start_async(sdk).await.expect("agent");
        for binding in Binding::ALL {
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
        for binding in Binding::ALL {
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
        for binding in Binding::ALL {
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
                (Sdk::V1, _) => {
                    assert_eq!(push["type"], "PushNotificationNotSupportedError");
                    assert_eq!(push["code"], -32003);
                }
                // 0.3.26 answers an internal error over JSON-RPC, 501 over REST
                (Sdk::V03, Binding::JsonRpc) => assert_eq!(push["code"], -32603, "{push}"),
                (Sdk::V03, Binding::Rest) => assert_eq!(push["httpStatus"], 501, "{push}"),
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
                (Sdk::V1, _) => {
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
                (Sdk::V03, Binding::Rest) => {
                    // the 0.3.26 REST server breaks the SSE response off instead of answering
                    // an error; the client reports a network error (503)
                    assert_eq!(terminal["httpStatus"], 503, "{terminal}");
                    assert_eq!(unknown["httpStatus"], 503, "{unknown}");
                    assert_eq!(no_cfg["httpStatus"], 500, "{no_cfg}");
                }
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
    let mut opts = ClientOptions::new(Binding::Rest);
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
