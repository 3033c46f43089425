//! Extension governance (issue 15): the DVARA API's table for required extensions, what is
//! forwarded, the answer's header, the `extensions` lists both ways, the governed card, and
//! methods an extension adds, with a real a2a-agent peer declaring one optional and one required
//! extension, for callers of both versions on both bindings.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::handler::{Reply, handler_fn};
use a2a_gateway::errors::Version;
use a2a_types::v1::{Artifact, Part};
use serde_json::{Value, json};

use crate::common::gov::admin;
use crate::common::*;

const OPT: &str = "urn:a2a-test:ext:optional";
const REQ: &str = "urn:a2a-test:ext:required";
const ROGUE: &str = "urn:a2a-test:ext:rogue";

/// The peer: declares OPT and REQ (required); answers with an artifact naming what it was
/// given (negotiated extensions and the message's list) and carrying OPT, REQ and ROGUE.
async fn ext_agent(calls: Arc<AtomicUsize>, peer: &str) -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = a2a_agent::demo::echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": peer}]);
    card["capabilities"]["extensions"] = json!([
        {"uri": OPT, "description": "optional"},
        {"uri": REQ, "description": "required", "required": true}
    ]);
    let handler = handler_fn(move |ctx| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            let seen = format!(
                "negotiated={} message={}",
                ctx.extensions().join(","),
                ctx.message().extensions.join(",")
            );
            let mut art = Artifact::new(vec![Part::text(seen)]);
            art.extensions = vec![OPT.into(), REQ.into(), ROGUE.into()];
            Ok(Reply::Artifacts(vec![art]))
        }
    });
    AgentServer::new(AgentCard::from_json(card).unwrap(), handler)
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// How a caller calls.
#[derive(Debug, Clone, Copy)]
enum Caller {
    Rpc03,
    Rpc10,
    Rest10,
    Rest03,
}

const CALLERS: [Caller; 4] = [Caller::Rpc03, Caller::Rpc10, Caller::Rest10, Caller::Rest03];

struct Answer {
    status: u16,
    body: Value,
    header: Option<String>,
    legacy_header: Option<String>,
}

/// A send by `caller` asking for `asked` (in `header`), the message listing `listed`.
async fn send(env: &Env, caller: Caller, header: &str, asked: &[&str], listed: &[&str]) -> Answer {
    let mid = uuid::Uuid::new_v4().to_string();
    let (path, version, body) = match caller {
        Caller::Rpc03 => (
            "/a2a/ext",
            None,
            json!({"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":
                {"kind":"message","messageId":mid,"role":"user","parts":[{"kind":"text","text":"hi"}],
                 "extensions": listed}}}),
        ),
        Caller::Rpc10 => (
            "/a2a/ext",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"1","method":"SendMessage","params":{"message":
                {"messageId":mid,"role":"ROLE_USER","parts":[{"text":"hi"}],"extensions": listed}}}),
        ),
        Caller::Rest10 => (
            "/a2a/ext/v1/message:send",
            Some("1.0"),
            json!({"message": {"messageId":mid,"role":"ROLE_USER","parts":[{"text":"hi"}],
                "extensions": listed}}),
        ),
        Caller::Rest03 => (
            "/a2a/ext/v1/message:send",
            Some("0.3"),
            // 0.3 HTTP+JSON is the 0.3 proto's ProtoJSON.
            json!({"message": {"messageId":mid,"role":"ROLE_USER",
                "content":[{"text":"hi"}],"extensions": listed}}),
        ),
    };
    let mut req = env
        .http
        .post(env.url(path))
        .header("content-type", "application/json")
        .bearer_auth(&env.key)
        .body(body.to_string());
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    if !asked.is_empty() {
        req = req.header(header, asked.join(", "));
    }
    let resp = req.send().await.unwrap();
    let h = |n: &str| {
        resp.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (header, legacy_header) = (h("a2a-extensions"), h("x-a2a-extensions"));
    let status = resp.status().as_u16();
    let body = resp.json().await.unwrap();
    Answer {
        status,
        body,
        header,
        legacy_header,
    }
}

/// The gateway's code and JSON-RPC code of a refusal in any caller form.
fn refusal(caller: Caller, a: &Answer) -> (String, i64) {
    match caller {
        Caller::Rpc03 | Caller::Rpc10 => {
            assert_eq!(a.status, 200, "{}", a.body);
            (gw_code(&a.body), a.body["error"]["code"].as_i64().unwrap())
        }
        // 1.0 HTTP+JSON: a google.rpc.Status (its code is the HTTP status).
        Caller::Rest10 => {
            let e = &a.body["error"];
            let info = &e["details"][0];
            assert_eq!(e["code"], a.status, "{}", a.body);
            (
                info["metadata"]["code"].as_str().unwrap_or("").to_owned(),
                i64::from(a.status),
            )
        }
        // 0.3 HTTP+JSON: the 0.3 JSON-RPC error object with the refusal's status.
        Caller::Rest03 => (
            a.body["data"]["code"].as_str().unwrap_or("").to_owned(),
            a.body["code"].as_i64().unwrap_or(0),
        ),
    }
}

/// Every artifact of an answer (any form).
fn artifacts(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            if o.contains_key("artifactId") {
                out.push(v.clone());
            }
            o.values().for_each(|c| artifacts(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| artifacts(c, out)),
        _ => {}
    }
}

fn artifact_text(a: &Value) -> String {
    let p = &a["parts"][0];
    p["text"].as_str().unwrap_or("").to_owned()
}

async fn allow(env: &Env, uris: &[&str]) {
    let (s, b) = admin(
        env,
        "PATCH",
        "/admin/workspaces/ws1/settings",
        Some(json!({"a2a.extensions.allowed": uris})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["a2a.extensions.allowed"], json!(uris));
}

#[tokio::test]
async fn the_dvara_table_through_both_versions_and_bindings() {
    // The peer at 1.0 (A2A-Extensions) and at 0.3 (X-A2A-Extensions and A2A-Extensions).
    for peer in ["1.0", "0.3"] {
        table(peer).await;
    }
}

async fn table(peer: &str) {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = ext_agent(calls.clone(), peer).await;
    let env = env(Version::V1).await;
    env.register("ws1", "ext", agent.url(), None);

    // Nothing allowed (the default): the required extension is refused, asked for or not, and
    // the agent is not called.
    for caller in CALLERS {
        for asked in [&[][..], &[REQ][..]] {
            let a = send(&env, caller, "A2A-Extensions", asked, &[]).await;
            let (code, rpc) = refusal(caller, &a);
            assert_eq!(code, "a2a_extension_not_allowed", "{caller:?} {}", a.body);
            match caller {
                Caller::Rpc03 | Caller::Rpc10 => assert_eq!(rpc, -32000),
                Caller::Rest10 => assert_eq!(a.status, 403),
                Caller::Rest03 => assert_eq!((a.status, rpc), (403, -32000)),
            }
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // Allowed, not asked for: -32008 ExtensionSupportRequiredError in the caller's form.
    allow(&env, &[REQ]).await;
    for caller in CALLERS {
        let a = send(&env, caller, "A2A-Extensions", &[OPT], &[]).await;
        let (code, rpc) = refusal(caller, &a);
        assert_eq!(
            code, "a2a_extension_support_required",
            "{caller:?} {}",
            a.body
        );
        match caller {
            Caller::Rpc03 => {
                assert_eq!(rpc, -32008);
                assert_eq!(a.body["error"]["data"]["extension"], REQ);
            }
            Caller::Rpc10 => {
                assert_eq!(rpc, -32008);
                let info = &a.body["error"]["data"][0];
                assert_eq!(info["reason"], "EXTENSION_SUPPORT_REQUIRED");
                assert_eq!(info["domain"], "a2a-protocol.org");
            }
            Caller::Rest10 => {
                assert_eq!(a.status, 400);
                assert_eq!(a.body["error"]["status"], "FAILED_PRECONDITION");
            }
            Caller::Rest03 => {
                assert_eq!((a.status, rpc), (400, -32008));
                assert_eq!(a.body["data"]["type"], "ExtensionSupportRequiredError");
            }
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // Allowed and asked for: the call goes ahead. OPT is asked for but not allowed, ROGUE is
    // neither declared nor allowed: only REQ reaches the agent, in its header and in the
    // message's list, and the answer's lists and header name REQ alone.
    for caller in CALLERS {
        for header in ["A2A-Extensions", "X-A2A-Extensions"] {
            let a = send(&env, caller, header, &[REQ, OPT, ROGUE], &[REQ, OPT, ROGUE]).await;
            assert_eq!(a.status, 200, "{peer} {caller:?} {}", a.body);
            let mut arts = Vec::new();
            artifacts(&a.body, &mut arts);
            assert_eq!(arts.len(), 1, "{caller:?} {}", a.body);
            assert_eq!(
                artifact_text(&arts[0]),
                format!("negotiated={REQ} message={REQ}"),
                "{caller:?}"
            );
            assert_eq!(arts[0]["extensions"], json!([REQ]), "{caller:?}");
            assert_eq!(a.header.as_deref(), Some(REQ), "{caller:?}");
            let v03 = matches!(caller, Caller::Rpc03 | Caller::Rest03);
            assert_eq!(a.legacy_header.is_some(), v03, "{caller:?}");
        }
    }

    // Both allowed and asked for: both forwarded, each message's list kept to them.
    allow(&env, &[REQ, OPT]).await;
    let a = send(&env, Caller::Rpc10, "A2A-Extensions", &[OPT, REQ], &[ROGUE]).await;
    let mut arts = Vec::new();
    artifacts(&a.body, &mut arts);
    assert_eq!(
        artifact_text(&arts[0]),
        format!("negotiated={OPT},{REQ} message=")
    );
    assert_eq!(arts[0]["extensions"], json!([OPT, REQ]));

    // A stream: its events' lists are kept too.
    let mut req = send10("stream");
    req["method"] = json!("SendStreamingMessage");
    let resp = env
        .http
        .post(env.url("/a2a/ext"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", REQ)
        .bearer_auth(&env.key)
        .body(req.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["a2a-extensions"], REQ);
    let text = resp.text().await.unwrap();
    let mut arts = Vec::new();
    for l in text.lines().filter_map(|l| l.strip_prefix("data:")) {
        artifacts(&serde_json::from_str(l.trim()).unwrap(), &mut arts);
    }
    assert!(!arts.is_empty(), "{text}");
    for a in &arts {
        assert_eq!(a["extensions"], json!([REQ]), "{text}");
    }

    env.stop().await;
    agent.shutdown().await;
}

#[tokio::test]
async fn governed_card_lists_allowed_extensions_and_extension_methods_stay_unknown() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = ext_agent(calls.clone(), "1.0").await;
    let env = env(Version::V1).await;
    env.register("ws1", "ext", agent.url(), None);
    let card = |v: &'static str| {
        let env = &env;
        async move {
            let c: Value = env
                .http
                .get(env.url("/a2a/ext/.well-known/agent-card.json"))
                .header("A2A-Version", v)
                .bearer_auth(&env.key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            c["capabilities"]["extensions"].clone()
        }
    };
    for v in ["0.3", "1.0"] {
        assert!(card(v).await.is_null(), "nothing allowed: nothing listed");
    }
    allow(&env, &[OPT, ROGUE]).await;
    for v in ["0.3", "1.0"] {
        let listed = card(v).await;
        assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
        assert_eq!(listed[0]["uri"], OPT);
    }
    // A method an extension adds is not forwarded: -32601, the agent is not called.
    for v in [None, Some("1.0")] {
        let (s, b) = env
            .rpc(
                "/a2a/ext",
                v,
                json!({"jsonrpc":"2.0","id":"x","method":"optional/doSomething","params":{}}),
            )
            .await;
        assert_eq!(s, 200);
        assert_eq!(b["error"]["code"], -32601, "{b}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    // Another workspace's settings do not leak: ws2 allows nothing and sees nothing.
    let (_, b) = admin(&env, "GET", "/admin/workspaces/ws2/settings", None).await;
    assert_eq!(b["a2a.extensions.allowed"], json!([]));
    env.stop().await;
    agent.shutdown().await;
}

#[tokio::test]
async fn a_held_send_is_released_with_its_extensions() {
    // The peer records the extensions each call negotiated.
    let negotiated: Arc<std::sync::Mutex<Vec<Vec<String>>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = a2a_agent::demo::echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    card["capabilities"]["extensions"] =
        json!([{"uri": REQ, "description": "required", "required": true}]);
    let seen = negotiated.clone();
    let handler = handler_fn(move |ctx| {
        seen.lock().unwrap().push(ctx.extensions().to_vec());
        async move {
            Ok(Reply::Artifacts(vec![Artifact::new(vec![Part::text(
                "ok",
            )])]))
        }
    });
    let agent = AgentServer::new(AgentCard::from_json(card).unwrap(), handler)
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap();
    let env = env_with(Version::V1, |c| c.approval_wait_secs = 0).await;
    env.register("ws1", "ext", agent.url(), None);
    allow(&env, &[REQ]).await;
    let policy = json!({"rules": [{"id": "person", "when": "skill == 'refund'",
        "decision": "approve"}]});
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy)).await;
    assert_eq!(s, 200, "{b}");
    let mut req = send10("refund please");
    req["params"]["metadata"] = json!({"skill": "refund"});
    req["params"]["configuration"] = json!({"returnImmediately": true});
    let b: Value = env
        .http
        .post(env.url("/a2a/ext"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", REQ)
        .bearer_auth(&env.key)
        .body(req.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = b["result"]["task"]["id"].as_str().unwrap_or("").to_owned();
    assert!(task.starts_with("gw-approval-"), "held: {b}");
    assert!(negotiated.lock().unwrap().is_empty(), "nothing sent yet");
    let (_, q) = admin(&env, "GET", "/admin/workspaces/ws1/approvals", None).await;
    let id = q[0]["id"].as_str().unwrap().to_owned();
    let (s, r) = admin(
        &env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
        Some(json!({"approver": "ana"})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    // Released: the peer got the call with the extension the caller asked for (without it the
    // peer's required extension would refuse the call).
    for _ in 0..200 {
        if !negotiated.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(*negotiated.lock().unwrap(), vec![vec![REQ.to_owned()]]);
    env.stop().await;
    agent.shutdown().await;
}
