//! The official Python SDK clients (1.x and 0.3) follow an approval outcome with standard A2A
//! operations only: a non-blocking send held for approval gets the gateway task; after the
//! approval GetTask on it returns the peer's completed task; after a denial it is rejected.

use crate::common;

use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use conformance::interop::{self, Binding, ClientOptions, Sdk};
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
    let env = env(Version::V10).await;
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
