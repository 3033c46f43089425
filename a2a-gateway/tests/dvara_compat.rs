//! The last differences from the DVARA API (issue 37 item 3), each against a real gateway in
//! its default mode and in DVARA-compatible mode (the settings set as a DVARA user expects):
//! the interface at the registered endpoint preferred, cards that fail their version's
//! structure check never used, `peer_grpc`, `card_bindings`, `stream_refusal_status` and
//! `error_domain`.

use crate::common;

use std::sync::{Arc, Mutex};

use a2a_gateway::config::{CardBindings, Config, ErrorStatusMode, PeerGrpc};
use a2a_gateway::errors::Version;
use axum::routing::get;
use common::echo::{echo_card, start_echo};
use common::*;
use serde_json::{Value, json};

/// The settings a DVARA user sets (every one at the DVARA API's value).
pub fn dvara(c: &mut Config) {
    c.peer_grpc = PeerGrpc::Refuse;
    c.card_bindings = CardBindings::Jsonrpc;
    c.stream_refusal_status = ErrorStatusMode::Ok;
    c.error_domain = "dvarahq.com".into();
    c.dvara_headers = true;
}

/// The two modes: (name, DVARA-compatible).
const MODES: [bool; 2] = [false, true];

async fn gateway(dvara_mode: bool, tweak: impl FnOnce(&mut Config)) -> Env {
    env_with(Version::V1, |c| {
        if dvara_mode {
            dvara(c);
        }
        tweak(c);
    })
    .await
}

fn v1_card(name: &str, ifaces: Value) -> Value {
    json!({"name": name, "description": "d", "version": "1", "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
        "supportedInterfaces": ifaces})
}

#[tokio::test]
async fn the_entry_at_the_registered_endpoint_is_preferred() {
    for dvara_mode in MODES {
        let env = gateway(dvara_mode, |_| {}).await;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        // First a usable entry elsewhere on the origin (nothing answers there), then the
        // registered endpoint's: the registered one is called.
        let card = v1_card(
            "two entries",
            json!([
                {"url": format!("{base}/elsewhere"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]),
        );
        let peer = start_echo(l, Version::V1, Some(card)).await.unwrap();
        env.register("ws1", "two", &format!("{}/", peer.url), None);
        let (s, b) = env.rpc("/a2a/two", Some("1.0"), send10("hi")).await;
        assert_eq!(s, 200, "{b}");
        assert!(b.get("result").is_some(), "dvara={dvara_mode}: {b}");
        assert_eq!(peer.last_body()["method"], "SendMessage");
        // Without an entry at the registered endpoint, the card's order decides: the first.
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let card = v1_card(
            "elsewhere first",
            json!([
                {"url": format!("{base}/elsewhere"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": format!("{base}/also"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]),
        );
        let other = start_echo(l, Version::V1, Some(card)).await.unwrap();
        env.register("ws1", "other", &other.url, None);
        let (_, b) = env.rpc("/a2a/other", Some("1.0"), send10("hi")).await;
        assert!(
            b.get("error").is_some(),
            "the /elsewhere entry is called: {b}"
        );
        assert!(other.last_body().is_null(), "nothing reached / of the peer");
        peer.shutdown().await;
        other.shutdown().await;
        env.stop().await;
    }
}

/// A peer whose card is whatever `card` holds now (its JSON-RPC endpoint answers nothing).
async fn switching_peer(card: Arc<Mutex<Value>>) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        get(move || {
            let c = card.lock().unwrap().clone();
            async move { axum::Json(c) }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    url
}

#[tokio::test]
async fn a_card_that_fails_its_structure_check_is_never_used() {
    for dvara_mode in MODES {
        let env = gateway(dvara_mode, |c| {
            c.json_rpc_error_status = ErrorStatusMode::Refusal;
        })
        .await;
        let card = Arc::new(Mutex::new(Value::Null));
        let url = switching_peer(card.clone()).await;
        let good = v1_card(
            "Valid",
            json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]),
        );
        let mut wrong_type = good.clone();
        wrong_type["name"] = json!("Broken");
        wrong_type["skills"] = json!("not a list");
        let mut missing = good.clone();
        missing.as_object_mut().unwrap().remove("description");
        let mut broken03 = echo_card(&url, Version::V03);
        broken03.as_object_mut().unwrap().remove("url");
        env.register("ws1", "flaky", &url, None);
        let get_card = |refresh: bool| {
            let q = if refresh { "?refresh=true" } else { "" };
            env.v1(
                reqwest::Method::GET,
                &format!("/a2a/flaky/.well-known/agent-card.json{q}"),
            )
            .send()
        };
        // No valid card yet: 502 a2a_card_unavailable, for the card and for a hop.
        for bad in [&wrong_type, &missing, &broken03] {
            *card.lock().unwrap() = bad.clone();
            let r = get_card(true).await.unwrap();
            assert_eq!(r.status(), 502);
            let b: Value = r.json().await.unwrap();
            assert_eq!(
                b["error"]["details"][0]["metadata"]["code"],
                "a2a_card_unavailable"
            );
            assert!(
                b["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("not an A2A"),
                "{b}"
            );
        }
        let (s, b) = env.rpc("/a2a/flaky", Some("1.0"), send10("x")).await;
        assert_eq!((s, gw_code(&b).as_str()), (502, "a2a_card_unavailable"));
        // A valid card is used and kept; a later invalid one leaves the kept card served.
        *card.lock().unwrap() = good.clone();
        let b: Value = get_card(true).await.unwrap().json().await.unwrap();
        assert_eq!(b["name"], "Valid");
        for bad in [&wrong_type, &missing] {
            *card.lock().unwrap() = bad.clone();
            let r = get_card(true).await.unwrap();
            assert_eq!(r.status(), 200);
            let b: Value = r.json().await.unwrap();
            assert_eq!(b["name"], "Valid", "dvara={dvara_mode}: {b}");
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn peer_grpc_calls_or_refuses_grpc_only_peers() {
    for dvara_mode in MODES {
        let env = gateway(dvara_mode, |_| {}).await;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let card = v1_card(
            "grpc only",
            json!([{"url": format!("127.0.0.1:{port}"), "protocolBinding": "GRPC", "protocolVersion": "1.0"}]),
        );
        let peer = start_echo(l, Version::V1, Some(card)).await.unwrap();
        env.register("ws1", "g", &peer.url, None);
        let (_, b) = env.rpc("/a2a/g", Some("1.0"), send10("x")).await;
        let code = gw_code(&b);
        if dvara_mode {
            assert_eq!(code, "a2a_peer_protocol_unsupported", "{b}");
            let msg = b["error"]["message"].as_str().unwrap();
            assert!(msg.contains("gRPC is not supported"), "{msg}");
        } else {
            // Called over gRPC (this peer speaks HTTP/1 only, so the call itself fails).
            assert_ne!(code, "a2a_peer_protocol_unsupported", "{b}");
        }
        peer.shutdown().await;
        env.stop().await;
    }
}

#[tokio::test]
async fn card_bindings_lists_every_binding_or_json_rpc_only() {
    for dvara_mode in MODES {
        let env = gateway(dvara_mode, |_| {}).await;
        let c: Value = env
            .v1(
                reqwest::Method::GET,
                "/a2a/echo/.well-known/agent-card.json",
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let bindings: Vec<(String, String)> = c["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["protocolBinding"].as_str().unwrap().to_owned(),
                    i["protocolVersion"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let c03: Value = env
            .http
            .get(env.url("/a2a/echo/.well-known/agent-card.json"))
            .header("A2A-Version", "0.3")
            .bearer_auth(&env.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let extra: Vec<&str> = c03["additionalInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["transport"].as_str().unwrap())
            .collect();
        if dvara_mode {
            let want =
                [("JSONRPC", "1.0"), ("JSONRPC", "0.3")].map(|(b, v)| (b.to_owned(), v.to_owned()));
            assert_eq!(bindings, want);
            assert_eq!(extra, ["JSONRPC"]);
        } else {
            assert!(
                bindings.iter().any(|(b, _)| b == "HTTP+JSON"),
                "{bindings:?}"
            );
            assert_eq!(extra, ["JSONRPC", "HTTP+JSON"]);
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn stream_refusals_keep_200_in_refusal_mode_when_set() {
    for dvara_mode in MODES {
        let env = gateway(dvara_mode, |c| {
            c.json_rpc_error_status = ErrorStatusMode::Refusal;
        })
        .await;
        let mut stream = send10("x");
        stream["method"] = json!("SendStreamingMessage");
        let (s, body) = env.rpc("/a2a/nobody", Some("1.0"), stream).await;
        assert_eq!(gw_code(&body), "a2a_agent_not_found", "{body}");
        assert_eq!(s, if dvara_mode { 200 } else { 404 }, "{body}");
        // A unary refusal keeps its own status in both.
        let (s, _) = env.rpc("/a2a/nobody", Some("1.0"), send10("x")).await;
        assert_eq!(s, 404);
        // A 0.3 stream refusal: the SSE error event at 200 as in the `ok` mode.
        let mut s03 = send03("x");
        s03["method"] = json!("message/stream");
        let (s, ct, events) = env.sse("/a2a/nobody", None, s03).await;
        if dvara_mode {
            assert_eq!((s, ct.starts_with("text/event-stream")), (200, true));
            assert_eq!(events[0]["error"]["data"]["code"], "a2a_agent_not_found");
        } else {
            assert_eq!(s, 404);
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn error_domain_names_who_refused() {
    for dvara_mode in MODES {
        let env = gateway(dvara_mode, |_| {}).await;
        let domain = if dvara_mode {
            "dvarahq.com"
        } else {
            "a2a-rs.dev"
        };
        let (_, b) = env.rpc("/a2a/nobody", Some("1.0"), send10("x")).await;
        assert_eq!(b["error"]["data"][0]["domain"], domain, "{b}");
        // HTTP+JSON and the card: the same domain; a spec error keeps the spec's.
        let r: Value = env
            .v1(
                reqwest::Method::GET,
                "/a2a/nobody/.well-known/agent-card.json",
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(r["error"]["details"][0]["domain"], domain, "{r}");
        let r: Value = env
            .v1(reqwest::Method::GET, "/a2a/echo/v1/tasks/unknown-task")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            r["error"]["details"][0]["domain"], "a2a-protocol.org",
            "{r}"
        );
        env.stop().await;
    }
}

/// The new settings as flags and variables of the binary, each listed in `serve --help` with
/// its variable and default; a value it cannot honour stops the start naming the setting.
#[test]
fn the_settings_are_flags_variables_and_listed_in_help() {
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_a2a-gateway");
    let help = Command::new(bin)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    for (flag, env, default) in [
        ("--peer-grpc", "A2A_GATEWAY_PEER_GRPC", "[default: call]"),
        (
            "--card-bindings",
            "A2A_GATEWAY_CARD_BINDINGS",
            "[default: all]",
        ),
        (
            "--stream-refusal-status",
            "A2A_GATEWAY_STREAM_REFUSAL_STATUS",
            "[default: refusal]",
        ),
        (
            "--error-domain",
            "A2A_GATEWAY_ERROR_DOMAIN",
            "[default: a2a-rs.dev]",
        ),
        (
            "--dvara-headers",
            "A2A_GATEWAY_DVARA_HEADERS",
            "[default: false]",
        ),
    ] {
        let at = help
            .find(flag)
            .unwrap_or_else(|| panic!("{flag} in {help}"));
        let block = &help[at..];
        let block = &block[..block.find("\n      --").unwrap_or(block.len())];
        let flat = block.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(env) && flat.contains(default), "{flat}");
    }
    let check = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(bin);
        c.args(["serve", "--check-config"]).args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, err) = check(
        &[
            "--peer-grpc",
            "refuse",
            "--card-bindings",
            "jsonrpc",
            "--stream-refusal-status",
            "ok",
            "--error-domain",
            "dvarahq.com",
            "--dvara-headers",
        ],
        &[],
    );
    assert!(ok, "{err}");
    let (ok, err) = check(&[], &[("A2A_GATEWAY_PEER_GRPC", "sometimes")]);
    assert!(!ok && err.contains("peer-grpc"), "{err}");
    let (ok, err) = check(&[], &[("A2A_GATEWAY_DVARA_HEADERS", "true")]);
    assert!(ok, "{err}");
}
