//! Signed push: once the agent has a pinned key, a notification to its sealed callback needs a
//! bearer JWT signed by that key for this callback and task: valid, missing, replayed, wrong
//! audience, wrong task, expired, too long-lived, wrong key, HMAC.

use crate::common;

use std::sync::{Arc, Mutex};

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::config::AgentConfig;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_gateway::config::Config;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::{Agent, Store};
use common::*;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

async fn push_agent() -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    card["capabilities"]["pushNotifications"] = json!(true);
    AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .config(AgentConfig {
            allow_local_webhook_urls: true,
            ..AgentConfig::default()
        })
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

type Seen = Arc<Mutex<Vec<Value>>>;

async fn receiver() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::Json<Value>| {
            let s = s.clone();
            async move {
                s.lock().unwrap().push(body.0);
                axum::http::StatusCode::OK
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, seen)
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn jwt(key: &EncodingKey, alg: Algorithm, kid: &str, claims: Value) -> String {
    let mut h = Header::new(alg);
    h.kid = Some(kid.into());
    jsonwebtoken::encode(&h, &claims, key).unwrap()
}

#[tokio::test]
async fn notifications_of_a_pinned_agent_carry_a_signed_jwt() {
    let agent = push_agent().await;
    let (hook, seen) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    store.create_workspace("ws1", "One").unwrap();
    let (_, key) = store.create_key("ws1", &[], None, None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = Config {
        dev_mode: true,
        listen: addr,
        push_callback_base_url: Some(format!("http://{addr}")),
        ..Config::default()
    };
    let gw = Gateway::new(config, store.clone())
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    let mut reg = Agent {
        workspace_id: "ws1".into(),
        agent_id: "rust".into(),
        endpoint: agent.url().to_owned(),
        credential: None,
        skills: None,
        pinned_card_key: None,
    };
    store.upsert_agent(&reg).unwrap();
    let http = reqwest::Client::new();
    let rpc = |body: Value| {
        http.post(format!("{}/a2a/rust", gw.base_url()))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let b: Value = rpc(send03("input please"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tid = b["result"]["id"].as_str().unwrap().to_owned();
    let cid = b["result"]["contextId"].as_str().unwrap().to_owned();
    let set = json!({"jsonrpc":"2.0","id":"p","method":"tasks/pushNotificationConfig/set","params":{
        "taskId": tid, "pushNotificationConfig": {"id": "c1", "url": hook, "token": "caller-token"}}});
    let b: Value = rpc(set).await.unwrap().json().await.unwrap();
    assert_eq!(
        b["result"]["pushNotificationConfig"]["url"],
        hook.as_str(),
        "{b}"
    );
    // The sealed callback and token, as the peer holds them.
    let pc: Value = http
        .post(agent.url())
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc":"2.0","id":"g","method":"GetTaskPushNotificationConfig",
            "params":{"taskId": tid, "id": "c1"}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sealed = pc["result"]["url"].as_str().unwrap().to_owned();
    let token = pc["result"]["token"].as_str().unwrap().to_owned();

    // From now on the agent has a pinned key.
    let (der, jwk) = a2a_client::signing::generate_es256("k1").unwrap();
    let (other_der, _) = a2a_client::signing::generate_es256("k1").unwrap();
    let k1 = EncodingKey::from_ec_der(&der);
    reg.pinned_card_key = Some(jwk.to_string());
    store.upsert_agent(&reg).unwrap();

    let mut n = 0;
    let mut post = async |bearer: Option<String>| -> (u16, String) {
        n += 1;
        let body = json!({"task": {"id": tid, "contextId": cid,
            "status": {"state": "TASK_STATE_WORKING", "message": {"messageId": format!("m{n}"),
                "role": "ROLE_AGENT", "parts": [{"text": format!("update {n}")}]}}}});
        let mut req = http
            .post(&sealed)
            .header("content-type", "application/json")
            .header("X-A2A-Notification-Token", &token)
            .body(body.to_string());
        if let Some(b) = bearer {
            req = req.bearer_auth(b);
        }
        let r = req.send().await.unwrap();
        let s = r.status().as_u16();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        (
            s,
            v["error"]["details"][0]["metadata"]["code"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
        )
    };
    let claims = |aud: &str, task: &str, iat: i64, exp: i64, jti: &str| json!({"aud": aud, "taskId": task, "iat": iat, "exp": exp, "jti": jti});
    let t = now();
    let valid = jwt(
        &k1,
        Algorithm::ES256,
        "k1",
        claims(&sealed, &tid, t, t + 60, "j1"),
    );
    let hmac = EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef").unwrap();
    let rows: Vec<(&str, Option<String>, u16, &str)> = vec![
        ("missing", None, 401, "a2a_push_signature_required"),
        ("valid", Some(valid.clone()), 200, ""),
        ("replayed", Some(valid), 401, "a2a_push_replayed"),
        (
            "wrong audience",
            Some(jwt(
                &k1,
                Algorithm::ES256,
                "k1",
                claims(&format!("{sealed}x"), &tid, t, t + 60, "j2"),
            )),
            401,
            "a2a_push_signature_invalid",
        ),
        (
            "wrong task",
            Some(jwt(
                &k1,
                Algorithm::ES256,
                "k1",
                claims(&sealed, "another-task", t, t + 60, "j3"),
            )),
            403,
            "a2a_push_task_mismatch",
        ),
        (
            "expired",
            Some(jwt(
                &k1,
                Algorithm::ES256,
                "k1",
                claims(&sealed, &tid, t - 600, t - 300, "j4"),
            )),
            401,
            "a2a_push_signature_invalid",
        ),
        (
            "too long-lived",
            Some(jwt(
                &k1,
                Algorithm::ES256,
                "k1",
                claims(&sealed, &tid, t, t + 3600, "j5"),
            )),
            401,
            "a2a_push_signature_invalid",
        ),
        (
            "wrong key",
            Some(jwt(
                &EncodingKey::from_ec_der(&other_der),
                Algorithm::ES256,
                "k1",
                claims(&sealed, &tid, t, t + 60, "j6"),
            )),
            401,
            "a2a_push_signature_invalid",
        ),
        (
            "HMAC",
            Some(jwt(
                &hmac,
                Algorithm::HS256,
                "k1",
                claims(&sealed, &tid, t, t + 60, "j7"),
            )),
            401,
            "a2a_push_signature_invalid",
        ),
    ];
    for (name, bearer, status, code) in rows {
        let before = seen.lock().unwrap().len();
        let (s, c) = post(bearer).await;
        assert_eq!((s, c.as_str()), (status, code), "{name}");
        if status == 200 {
            for _ in 0..200 {
                if seen.lock().unwrap().len() > before {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            }
            assert_eq!(seen.lock().unwrap().len(), before + 1, "{name}: delivered");
        }
    }
    let delivered = seen.lock().unwrap().len();
    assert_eq!(delivered, 1, "only the valid notification was delivered");
    // A task-less notification for a sealed config that knows its task is refused too.
    let (s, c) = {
        let r = http
            .post(&sealed)
            .header("content-type", "application/json")
            .header("X-A2A-Notification-Token", &token)
            .body(json!({"message": {"messageId": "x", "role": "ROLE_AGENT", "parts": [{"text": "?"}]}}).to_string())
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(s, 403, "{c}");
    gw.shutdown().await;
    agent.shutdown().await;
}
