//! gRPC callers (`serve_grpc`): the official a2a-sdk 1.x gRPC client and our a2a-client's gRPC
//! transport call the reference agent (an a2a-agent JSON-RPC peer) through the gateway, the
//! agent named by the request's `tenant`, which the SDK and our client copy from the governed
//! card's GRPC interface.

use crate::common;
use crate::interop_table::{reference, sdk};

use a2a_agent::{AgentConfig, AgentServer};
use a2a_client::{A2aClient, Binding, ErrorKind};
use a2a_gateway::errors::Version;
use a2a_types::v1::{Message, SendMessageRequest, StreamResponse, TaskState};
use common::*;
use futures::StreamExt;
use serde_json::{Value, json};

async fn reference_agent() -> a2a_agent::server::ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cfg = AgentConfig {
        validate_auth: false,
        ..AgentConfig::default()
    };
    AgentServer::new(reference::card("reference"), reference::handler())
        .config(cfg)
        .serve(l)
        .await
        .unwrap()
}

/// The gateway with `serve_grpc`, the reference agent registered in both workspaces.
async fn setup() -> (Env, a2a_agent::server::ServerHandle, String) {
    let peer = reference_agent().await;
    let env = env_with(Version::V1, |c| c.serve_grpc = true).await;
    env.register("ws1", "reference", peer.url(), None);
    env.register("ws2", "reference", peer.url(), None);
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    (env, peer, key2)
}

/// The closing line of the scenario's op named `name` (`as`).
fn line<'a>(lines: &'a [Value], scenario: &Value, name: &str) -> &'a Value {
    let i = scenario
        .as_array()
        .and_then(|ops| ops.iter().position(|o| o["as"] == name))
        .unwrap_or_else(|| panic!("no op {name}"));
    lines
        .iter()
        .find(|l| l["i"] == i && l.get("event").is_none())
        .unwrap_or_else(|| panic!("no line {name}: {lines:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_grpc_client_through_the_gateway() {
    let (env, peer, key2) = setup().await;
    let auth =
        |k: &str| json!({"op": "headers", "headers": {"Authorization": format!("Bearer {k}")}});
    let scenario = json!([
        auth(&env.key),
        {"op": "card", "as": "card"},
        {"op": "send", "text": "quick question", "as": "quick"},
        {"op": "stream", "text": "stream a report", "as": "stream"},
        {"op": "send", "text": "slow job", "blocking": false, "as": "slow"},
        {"op": "get", "taskId": "$slow.task_id", "as": "get"},
        {"op": "cancel", "taskId": "$slow.task_id", "as": "cancel"},
        auth(&key2),
        {"op": "get", "taskId": "$slow.task_id", "as": "other_ws"},
        auth("not-a-key"),
        {"op": "get", "taskId": "$slow.task_id", "as": "bad_key"},
    ]);
    let lines = sdk::run(
        "sdk1",
        &env.url("/a2a/reference"),
        "grpc",
        None,
        scenario.clone(),
    )
    .await;
    let line = |name: &str| line(&lines, &scenario, name);
    let card = &line("card")["result"];
    let grpc: Vec<&Value> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(grpc.len(), 1, "{card}");
    assert_eq!(grpc[0]["tenant"], "reference");
    assert_eq!(grpc[0]["url"], env.gw.local_addr().to_string());

    let quick = line("quick");
    assert_eq!(quick["ok"], true, "{quick}");
    assert!(
        quick["result"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .starts_with("quick answer to"),
        "{quick}"
    );
    let stream = line("stream");
    assert_eq!(stream["ok"], true, "{stream}");
    assert!(stream["events"].as_u64().unwrap_or(0) >= 2, "{stream}");
    let get = line("get");
    assert_eq!(get["ok"], true, "{get}");
    assert_eq!(get["result"]["id"], line("slow")["task_id"]);
    let cancel = line("cancel");
    assert_eq!(cancel["ok"], true, "{cancel}");
    assert_eq!(cancel["result"]["status"]["state"], "TASK_STATE_CANCELED");
    // Another workspace's task is one that does not exist.
    let other = line("other_ws");
    assert_eq!(other["ok"], false, "{other}");
    assert_eq!(other["error"]["type"], "TaskNotFoundError", "{other}");
    let bad = line("bad_key");
    assert_eq!(bad["ok"], false, "{bad}");
    let msg = bad["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("UNAUTHENTICATED"), "{bad}");

    // Audited as gRPC callers, with the tenant as the target.
    let hops = env
        .store
        .audit(Some("ws1"), Some("reference"), 0, 100)
        .unwrap();
    let grpc_hops: Vec<_> = hops
        .iter()
        .filter(|h| h.client_binding.as_deref() == Some("GRPC"))
        .collect();
    assert!(grpc_hops.len() >= 5, "{hops:#?}");
    assert!(
        grpc_hops
            .iter()
            .any(|h| h.client_method.as_deref() == Some("CancelTask") && h.decision == "allowed"),
        "{grpc_hops:#?}"
    );
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_grpc_client_through_the_gateway() {
    let (env, peer, _) = setup().await;
    let c = A2aClient::builder()
        .binding(Binding::Grpc)
        .header("authorization", &format!("Bearer {}", env.key))
        .unwrap()
        .connect(&env.url("/a2a/reference"))
        .await
        .unwrap();
    assert_eq!(c.interface().binding, Binding::Grpc);
    assert_eq!(c.interface().tenant.as_deref(), Some("reference"));
    let slow = c
        .send(
            SendMessageRequest::new(Message::user_text("slow job")).with_configuration(
                a2a_types::v1::SendMessageConfiguration {
                    return_immediately: Some(true),
                    ..Default::default()
                },
            ),
        )
        .await
        .unwrap();
    let a2a_types::v1::SendMessageResponse::Task(slow) = slow else {
        panic!("not a task: {slow:?}");
    };
    let got = c.get_task(&slow.id, None).await.unwrap();
    assert_eq!(got.id, slow.id);
    let canceled = c.cancel_task(&slow.id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let events: Vec<StreamResponse> = c
        .stream(SendMessageRequest::new(Message::user_text(
            "stream a report",
        )))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    assert!(matches!(events[0], StreamResponse::Task(_)), "{events:?}");
    // A refused call arrives as the A2A error it is.
    let e = c.get_task("no-such-task", None).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TaskNotFound), "{e:?}");
    // No tenant, an unknown tenant, a 0.3 label: refused in A2A form, nothing reaches a peer.
    let direct = |tenant: &str| {
        a2a_client::SelectedInterface::direct(
            format!("http://{}", env.gw.local_addr()).parse().unwrap(),
            Binding::Grpc,
            a2a_client::Version::V1,
        )
        .with_tenant(tenant)
    };
    let client = |tenant: &str, version: &str| {
        A2aClient::builder()
            .header("authorization", &format!("Bearer {}", env.key))
            .unwrap()
            .header("A2A-Version", version)
            .unwrap()
            .from_interface(direct(tenant))
            .unwrap()
    };
    let e = client("", "1.0").get_task("t", None).await.unwrap_err();
    assert!(e.to_string().contains("tenant"), "{e}");
    let e = client("ghost", "1.0")
        .get_task("t", None)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("Agent ghost not found"), "{e}");
    let e = client("reference", "0.3")
        .send_message(Message::user_text("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::VersionNotSupported), "{e}");
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test]
async fn the_card_lists_grpc_only_with_the_setting() {
    for on in [false, true] {
        let env = env_with(Version::V1, |c| c.serve_grpc = on).await;
        let card: Value = env
            .http
            .get(env.url("/a2a/echo/.well-known/agent-card.json"))
            .header("authorization", format!("Bearer {}", env.key))
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let grpc: Vec<&Value> = card["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["protocolBinding"] == "GRPC")
            .collect();
        assert_eq!(grpc.len(), usize::from(on), "{card}");
        if on {
            assert_eq!(grpc[0]["tenant"], "echo", "{card}");
        }
        env.stop().await;
    }
}
