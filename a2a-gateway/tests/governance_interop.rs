//! The official Python SDK clients (1.x and 0.3) follow an approval outcome with standard A2A
//! operations only: a non-blocking send held for approval gets the gateway task; after the
//! approval GetTask on it returns the peer's completed task; after a denial it is rejected.
//! SubscribeToTask (0.3 `tasks/resubscribe`) on the held task follows it to its outcome and is
//! refused once it is denied; a blocking send waits for the decision.

use crate::common;

use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use conformance::interop::{self, Binding, ClientOptions, ClientRun, Sdk};
use serde_json::{Value, json};

async fn run(env: &Env, sdk: Sdk, protocol: Option<&str>, scen: Value) -> Vec<Value> {
    let mut opts = ClientOptions::new(Binding::JsonRpc);
    opts.protocol_version = protocol.map(str::to_owned);
    interop::run_client_async_with(sdk, &env.url("/a2a/peer"), &opts, scen)
        .await
        .unwrap()
        .lines
}

fn closing(lines: &[Value], i: u64) -> Value {
    lines
        .iter()
        .find(|l| l["i"] == i && l.get("event").is_none())
        .cloned()
        .unwrap_or_else(|| panic!("no line {i}: {lines:#?}"))
}

fn task(result: &Value) -> Value {
    if result.get("task").is_some() {
        result["task"].clone()
    } else {
        result.clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_clients_follow_an_approval() {
    interop::ensure_venvs_async().await.unwrap();
    let env = env(Version::V1).await;
    env.register("ws1", "peer", &env.peers[0].url, None);
    let policy =
        json!({"rules": [{"id": "refunds", "when": "skill == 'refund'", "decision": "approve"}]});
    assert_eq!(
        admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy))
            .await
            .0,
        200
    );
    for (sdk, protocol, header, submitted, completed, rejected) in [
        (
            Sdk::V1,
            Some("1.0"),
            None,
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_REJECTED",
        ),
        (
            Sdk::V03,
            None,
            Some("0.3"),
            "submitted",
            "completed",
            "rejected",
        ),
    ] {
        let mut headers = json!({"Authorization": format!("Bearer {}", env.key)});
        if let Some(h) = header {
            headers["A2A-Version"] = json!(h);
        }
        for approve in [true, false] {
            let lines = run(
                &env,
                sdk,
                protocol,
                json!([
                    {"op": "headers", "headers": headers},
                    {"op": "send", "text": "refund order 7", "blocking": false, "metadata": {"skill": "refund"}}
                ]),
            )
            .await;
            let sent = closing(&lines, 1);
            assert_eq!(sent["ok"], true, "{sent:#}");
            let t = task(&sent["result"]);
            assert_eq!(t["status"]["state"], submitted, "{sent:#}");
            let gw_task = t["id"].as_str().unwrap().to_owned();
            let id = gw_task.trim_start_matches("gw-approval-").to_owned();
            let verb = if approve { "approve" } else { "deny" };
            let (s, r) = admin(
                &env,
                "POST",
                &format!("/admin/workspaces/ws1/approvals/{id}/{verb}"),
                Some(json!({"approver": "ana"})),
            )
            .await;
            assert_eq!(s, 200, "{r}");
            let lines = run(
                &env,
                sdk,
                protocol,
                json!([
                    {"op": "headers", "headers": headers},
                    {"op": "get", "taskId": gw_task}
                ]),
            )
            .await;
            let got = closing(&lines, 1);
            assert_eq!(got["ok"], true, "{got:#}");
            let t = task(&got["result"]);
            if approve {
                assert_eq!(t["status"]["state"], completed, "{got:#}");
                assert_eq!(t["id"], r["peerTaskId"], "{got:#}");
                assert!(t.to_string().contains("refund order 7"), "{got:#}");
            } else {
                assert_eq!(t["status"]["state"], rejected, "{got:#}");
            }
        }
    }
    env.stop().await;
}

/// The SDKs under test: (sdk, `--protocol-version`, `A2A-Version` header).
const SDKS: [(Sdk, Option<&str>, Option<&str>); 2] =
    [(Sdk::V1, Some("1.0"), None), (Sdk::V03, None, Some("0.3"))];

fn headers(env: &Env, header: Option<&str>) -> Value {
    let mut h = json!({"Authorization": format!("Bearer {}", env.key)});
    if let Some(v) = header {
        h["A2A-Version"] = json!(v);
    }
    h
}

fn opts(protocol: Option<&str>) -> ClientOptions {
    let mut o = ClientOptions::new(Binding::JsonRpc);
    o.protocol_version = protocol.map(str::to_owned);
    o
}

async fn decide(env: &Env, id: &str, verb: &str) -> Value {
    let (s, r) = admin(
        env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/{verb}"),
        Some(json!({"approver": "ana"})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    r
}

async fn with_policy() -> Env {
    let env = env(Version::V1).await;
    env.register("ws1", "peer", &env.peers[0].url, None);
    let policy =
        json!({"rules": [{"id": "refunds", "when": "skill == 'refund'", "decision": "approve"}]});
    assert_eq!(
        admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy))
            .await
            .0,
        200
    );
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_clients_subscribe_to_a_held_task() {
    interop::ensure_venvs_async().await.unwrap();
    let env = with_policy().await;
    for (sdk, protocol, header) in SDKS {
        for approve in [true, false] {
            let mut run = ClientRun::start(sdk, &env.url("/a2a/peer"), &opts(protocol))
                .await
                .unwrap();
            run.send(json!({"op": "headers", "headers": headers(&env, header)}))
                .await
                .unwrap();
            run.send(
                json!({"op": "send", "text": "refund order 8", "blocking": false,
                "metadata": {"skill": "refund"}}),
            )
            .await
            .unwrap();
            let (sent, _) = run.next_matching(|l| l["i"] == 1).await.unwrap();
            assert_eq!(sent["ok"], true, "{sent:#}");
            let gw_task = task(&sent["result"])["id"].as_str().unwrap().to_owned();
            let id = gw_task.trim_start_matches("gw-approval-").to_owned();
            // Subscribe: the held task first, then its outcome once a person decides.
            run.send(json!({"op": "subscribe", "taskId": gw_task, "background": true}))
                .await
                .unwrap();
            let (first, _) = run
                .next_matching(|l| l["i"] == 2 && l.get("event").is_some())
                .await
                .unwrap();
            assert_eq!(
                interop::task_state(&first["event"]),
                "submitted",
                "{first:#}"
            );
            let r = decide(&env, &id, if approve { "approve" } else { "deny" }).await;
            let (outcome, _) = run
                .next_matching(|l| l["i"] == 2 && l.get("event").is_some())
                .await
                .unwrap();
            let ev = &outcome["event"];
            assert_eq!(interop::event_kind(ev), "status", "{outcome:#}");
            if approve {
                assert_eq!(interop::task_state(ev), "working", "{outcome:#}");
                assert!(
                    ev.to_string().contains(r["peerTaskId"].as_str().unwrap()),
                    "{outcome:#}"
                );
            } else {
                assert_eq!(interop::task_state(ev), "rejected", "{outcome:#}");
                assert!(
                    ev.to_string().contains("a2a_approval_denied"),
                    "{outcome:#}"
                );
            }
            let (closed, _) = run.next_matching(|l| l["i"] == 2).await.unwrap();
            assert_eq!(closed["ok"], true, "{closed:#}");
            assert_eq!(closed["events"], 2, "{closed:#}");
            if !approve {
                // Once denied, the task is final: a new subscription is refused. A 1.0 caller gets
                // a JSON-RPC error body; a 0.3 caller's failed streaming call is one SSE error
                // event (what the 0.3 SDK reads), so both SDKs report the gateway's message.
                run.send(json!({"op": "subscribe", "taskId": gw_task}))
                    .await
                    .unwrap();
                let (again, _) = run.next_matching(|l| l["i"] == 3).await.unwrap();
                assert_eq!(again["ok"], false, "{again:#}");
                assert_eq!(again["events"], 0, "{again:#}");
                let e = again["error"].to_string();
                assert!(
                    e.contains("-32000") && e.contains(&format!("Approval {id} was denied")),
                    "{sdk:?}: {again:#}"
                );
            }
            run.finish().await.unwrap();
        }
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_clients_wait_in_a_blocking_send() {
    interop::ensure_venvs_async().await.unwrap();
    let env = with_policy().await;
    for (sdk, protocol, header) in SDKS {
        let scen = json!([
            {"op": "headers", "headers": headers(&env, header)},
            {"op": "send", "text": "refund order 9", "blocking": true, "metadata": {"skill": "refund"}}
        ]);
        let client = tokio::spawn({
            let url = env.url("/a2a/peer");
            let opts = opts(protocol);
            async move {
                interop::run_client_async_with(sdk, &url, &opts, scen)
                    .await
                    .unwrap()
                    .lines
            }
        });
        // Approve while the client waits in its send (bounded wait for the hold to appear).
        let mut id = None;
        for _ in 0..100 {
            let (_, q) = admin(
                &env,
                "GET",
                "/admin/workspaces/ws1/approvals?state=pending",
                None,
            )
            .await;
            if let Some(a) = q.as_array().and_then(|a| a.first()) {
                id = a["id"].as_str().map(str::to_owned);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let id = id.expect("the send was not held");
        let r = decide(&env, &id, "approve").await;
        let lines = client.await.unwrap();
        let sent = closing(&lines, 1);
        assert_eq!(sent["ok"], true, "{sent:#}");
        let t = task(&sent["result"]);
        // The send's answer: the gateway task, approved, pointing at the peer's task.
        assert_eq!(interop::task_state(&t), "working", "{sent:#}");
        assert_eq!(t["metadata"]["peerTaskId"], r["peerTaskId"], "{sent:#}");
        // GetTask on it goes on as the peer's (completed) task.
        let lines = run(
            &env,
            sdk,
            protocol,
            json!([
                {"op": "headers", "headers": headers(&env, header)},
                {"op": "get", "taskId": t["id"]}
            ]),
        )
        .await;
        let got = closing(&lines, 1);
        assert_eq!(
            interop::task_state(&task(&got["result"])),
            "completed",
            "{got:#}"
        );
        assert_eq!(task(&got["result"])["id"], r["peerTaskId"], "{got:#}");
    }
    env.stop().await;
}
