//! Proves the Python SDK interop harness (`conformance::interop`, `interop/`) works, and pins how
//! each official SDK behaves on the wire (see `interop/README.md`).
//!
//! Each test starts a reference agent written with the SDK and drives it with the same SDK's
//! client driver over each binding the agent serves. The venvs are created on first use
//! (`python3 interop/setup_venvs.py`, PyPI needed once).

use std::collections::HashMap;

use conformance::interop::{
    self, Binding, ClientOptions, ClientOutput, PyAgent, Sdk, event_kind as kind_of,
    task_state as state_of,
};
use serde_json::{Value, json};

pub(crate) fn setup() {
    interop::ensure_venvs().expect("python venvs");
}

pub(crate) fn run(sdk: Sdk, agent: &PyAgent, binding: Binding, scenario: Value) -> ClientOutput {
    let opts = ClientOptions::new(binding);
    let out = interop::run_client_with(sdk, agent.url(), &opts, scenario).expect("client run");
    for line in &out.lines {
        eprintln!("{sdk:?}/{binding:?}: {}", truncate(line));
    }
    out
}

pub(crate) fn truncate(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}...", &s[..300])
    } else {
        s
    }
}

pub(crate) fn artifact_event(ev: &Value) -> &Value {
    ev.get("artifactUpdate").unwrap_or(ev)
}

pub(crate) fn ok(out: &ClientOutput, i: usize) -> &Value {
    let rec = out.op(i).unwrap_or_else(|| panic!("no record for op {i}"));
    assert_eq!(rec["ok"], true, "op {i} failed: {rec}");
    rec
}

pub(crate) fn err(out: &ClientOutput, i: usize) -> &Value {
    let rec = out.op(i).unwrap_or_else(|| panic!("no record for op {i}"));
    assert_eq!(rec["ok"], false, "op {i} should fail: {rec}");
    &rec["error"]
}

/// The common scenario: card, echo, get, stream 3, cancel of slow, push CRUD, unknown task,
/// extended card, message reply, input-required turn, fail.
pub(crate) fn core_scenario() -> Value {
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
pub(crate) fn check_common(sdk: Sdk, binding: Binding, out: &ClientOutput) {
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

pub(crate) fn interface_set(card: &Value) -> HashMap<(String, String), String> {
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
    sdk1_core(Binding::HttpJson);
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
        Binding::HttpJson => {
            // 0.3.26 REST server gaps: list not implemented (500), delete has no route (405)
            assert_eq!(err(&out, 9)["httpStatus"], 500);
            assert_eq!(err(&out, 10)["httpStatus"], 405);
            // the 0.3 REST client keeps only the HTTP status
            let e = err(&out, 11);
            assert_eq!(e["type"], "A2AClientHTTPError");
            assert_eq!(e["httpStatus"], 404);
            assert_eq!(err(&out, 17)["httpStatus"], 409);
        }
        Binding::Grpc => unreachable!("the drivers run JSON-RPC and HTTP+JSON"),
    }
}

#[test]
fn sdk03_client_against_sdk03_agent_jsonrpc() {
    sdk03_core(Binding::JsonRpc);
}

#[test]
fn sdk03_client_against_sdk03_agent_rest() {
    sdk03_core(Binding::HttpJson);
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
        for binding in interop::DRIVER_BINDINGS {
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
                Binding::HttpJson => assert_eq!(e["httpStatus"], 404, "{e}"),
                Binding::Grpc => unreachable!("the drivers run JSON-RPC and HTTP+JSON"),
            }
        }
    }
}

#[test]
fn sdk03_client_against_sdk1_agent_compat() {
    setup();
    let agent = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    for binding in interop::DRIVER_BINDINGS {
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
            Binding::HttpJson => assert_eq!(e["httpStatus"], 400),
            Binding::Grpc => unreachable!("the drivers run JSON-RPC and HTTP+JSON"),
        }
    }
}

#[test]
fn version_header_refused_by_sdk1_agent() {
    setup();
    let agent = PyAgent::start(Sdk::V1).expect("sdk1 agent");
    for binding in interop::DRIVER_BINDINGS {
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
