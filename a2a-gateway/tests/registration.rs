//! The registration check (issue 15): registering an agent reads its card and refuses a peer
//! with no binding the gateway can call (0.3 gRPC only; 0.3 HTTP+JSON only), naming each
//! interface and why, and accepts a 1.0 gRPC-only peer; `force` saves anyway; the admin API and the CLI show the reasons; each save is in
//! the admin audit log.

use a2a_gateway::errors::Version;
use serde_json::{Value, json};

use crate::common::gov::admin;
use crate::common::*;

/// A server answering only its Agent Card, `card(url)` built from its own address.
async fn card_server(card: impl Fn(&str) -> Value) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let body = card(&url);
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || {
            let b = body.clone();
            async move { axum::Json(b) }
        }),
    );
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

fn grpc_only(url: &str, version: &str) -> Value {
    json!({"name": "g", "description": "", "version": "1", "capabilities": {},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
        "supportedInterfaces": [{"url": url, "protocolBinding": "GRPC", "protocolVersion": version}]})
}

fn grpc03_only(url: &str) -> Value {
    grpc_only(url, "0.3")
}

fn rest03_only(url: &str) -> Value {
    json!({"name": "r", "description": "", "version": "1", "capabilities": {},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
        "url": url, "preferredTransport": "HTTP+JSON", "protocolVersion": "0.3"})
}

#[tokio::test]
async fn admin_api_refuses_uncallable_peers_and_force_saves() {
    let env = env(Version::V1).await;
    let (grpc, g) = card_server(grpc03_only).await;
    let (rest03, r) = card_server(rest03_only).await;
    for (id, url, why) in [
        ("grpc", &grpc, "gRPC is supported at A2A 1.0 only"),
        ("rest03", &rest03, "HTTP+JSON is supported at A2A 1.0 only"),
    ] {
        let body = json!({"agentId": id, "endpoint": url, "credential": "s3cret"});
        let (s, b) = admin(
            &env,
            "POST",
            "/admin/workspaces/ws1/agents",
            Some(body.clone()),
        )
        .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            b["error"]["details"][0]["metadata"]["code"],
            "a2a_registration_refused"
        );
        let reasons = b["error"]["passedOver"].as_array().unwrap();
        assert_eq!(reasons.len(), 1, "{b}");
        let reason = reasons[0].as_str().unwrap();
        assert!(
            reason.contains(why) && reason.contains(url.as_str()),
            "{reason}"
        );
        assert!(b["error"]["message"].as_str().unwrap().contains(why));
        assert!(
            env.store.agent("ws1", id).unwrap().is_none(),
            "refused but saved"
        );
        // force: saved anyway, with the check's result in the answer.
        let (s, b) = admin(
            &env,
            "POST",
            "/admin/workspaces/ws1/agents?force=true",
            Some(body),
        )
        .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["forced"], true);
        assert_eq!(b["registrationCheck"]["result"], "refused");
        assert!(env.store.agent("ws1", id).unwrap().is_some());
        // Calls still fail at the interface step.
        let (_, b) = env.rpc(&format!("/a2a/{id}"), None, send03("hi")).await;
        assert_eq!(gw_code(&b), "a2a_peer_protocol_unsupported", "{b}");
    }
    // A 1.0 gRPC-only peer is callable (issue 17): saved, the gRPC interface named.
    let (grpc1, g1) = card_server(|u| grpc_only(u, "1.0")).await;
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/agents",
        Some(json!({"agentId": "grpc1", "endpoint": grpc1})),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["registrationCheck"]["result"], "callable", "{b}");
    assert_eq!(b["registrationCheck"]["binding"], "GRPC");
    assert_eq!(b["registrationCheck"]["version"], "1.0");
    g1.abort();
    // ... but not when its gRPC address breaks the gateway's address rules (another host).
    let (elsewhere, g2) = card_server(|_| grpc_only("127.0.0.2:50051", "1.0")).await;
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/agents",
        Some(json!({"agentId": "grpc2", "endpoint": elsewhere})),
    )
    .await;
    assert_eq!(s, 422, "{b}");
    let reason = b["error"]["passedOver"][0].as_str().unwrap();
    assert!(reason.contains("registered endpoint's host"), "{reason}");
    g2.abort();
    // A callable peer: saved, the interface named.
    let echo = env.peers[0].url.clone();
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/agents",
        Some(json!({"agentId": "echo2", "endpoint": echo})),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["registrationCheck"]["result"], "callable");
    assert_eq!(b["registrationCheck"]["binding"], "JSONRPC");
    // A card that cannot be read does not stop the save (as in the DVARA API).
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/agents",
        Some(json!({"agentId": "later", "endpoint": dead})),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["registrationCheck"]["result"], "card-unreadable");
    // The admin audit log has each attempt, the refusal's reasons, and the forced saves.
    let (_, rows) = admin(&env, "GET", "/admin/admin-audit?workspace=ws1", None).await;
    let rows = rows.as_array().unwrap();
    let saves: Vec<&Value> = rows
        .iter()
        .filter(|r| r["action"] == "POST /admin/workspaces/{ws}/agents")
        .collect();
    assert_eq!(saves.len(), 8, "{rows:?}");
    assert_eq!(saves[0]["status"], 422);
    assert!(
        saves[0]["detail"]["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("gRPC")
    );
    assert_eq!(saves[1]["status"], 201);
    assert_eq!(saves[1]["detail"]["query"], "force=true");
    assert_eq!(saves[1]["actor"]["kind"], "admin-token");
    assert!(
        saves[1]["actor"]["remote"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
    assert!(!Value::Array(rows.clone()).to_string().contains("s3cret"));
    g.abort();
    r.abort();
    env.stop().await;
}

#[tokio::test]
async fn cli_agent_add_shows_the_reasons_and_force_saves() {
    let (grpc, g) = card_server(grpc03_only).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    a2a_gateway::store::Store::open(&db)
        .unwrap()
        .create_workspace("ws", "W")
        .unwrap();
    let cli = |extra: &[&str]| {
        let grpc = grpc.clone();
        let db = db.clone();
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        async move {
            tokio::task::spawn_blocking(move || {
                std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
                    .arg("admin")
                    .arg("--database")
                    .arg(&db)
                    .args([
                        "agent-add",
                        "ws",
                        "g",
                        &grpc,
                        "--dev",
                        "--credential",
                        "s3cret",
                    ])
                    .args(&extra)
                    .env_remove("A2A_GATEWAY_DEV")
                    .output()
                    .unwrap()
            })
            .await
            .unwrap()
        }
    };
    let out = cli(&[]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gRPC is supported at A2A 1.0 only") && err.contains("--force"),
        "{err}"
    );
    let out = cli(&["--force"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["registrationCheck"]["result"], "refused");
    let store = a2a_gateway::store::Store::open(&db).unwrap();
    assert!(store.agent("ws", "g").unwrap().is_some());
    let rows = store.admin_audit(Some("ws"), 0, 10).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].actor.kind, "cli");
    assert_eq!(rows[0].action, "cli agent-add");
    assert_eq!(rows[0].status, 400);
    assert_eq!(rows[1].status, 200);
    assert!(rows[1].detail["args"].to_string().contains("--force"));
    assert!(!serde_json::to_string(&rows).unwrap().contains("s3cret"));
    g.abort();
}
