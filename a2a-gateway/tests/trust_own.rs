//! The gateway's own card signatures: signing keys through the admin API (created, rotated,
//! retired, never returned), every governed card signed in its version with `alg`, `kid`,
//! `typ: JOSE` and `jku`, the public key set, stable ETags, and the official a2a-sdk
//! verifiers (1.x for the 1.0 card, 0.3 for the 0.3 card) accepting the cards after a rotation.

use crate::common;

use a2a_client::signing;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use common::*;
use conformance::interop::{self, Sdk};
use serde_json::{Value, json};

const SECRET: &str = "test card key secret of 32+ bytes......";

async fn admin(env: &Env, method: reqwest::Method, path: &str) -> (u16, Value) {
    let r = env
        .http
        .request(method, env.url(path))
        .bearer_auth(ADMIN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// The governed card in `version` (None: no header): body, ETag.
async fn card(env: &Env, version: Option<&str>) -> (Value, String) {
    let mut req = env
        .http
        .get(env.url("/a2a/echo/.well-known/agent-card.json"))
        .bearer_auth(&env.key);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let r = req.send().await.unwrap();
    if r.status() != 200 {
        panic!("card: {} {}", r.status(), r.text().await.unwrap());
    }
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    (r.json().await.unwrap(), etag)
}

async fn jwks(env: &Env) -> Value {
    // No API key.
    let r = env
        .http
        .get(env.url("/a2a/.well-known/jwks.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

fn header(sig: &Value) -> Value {
    serde_json::from_slice(&B64.decode(sig["protected"].as_str().unwrap()).unwrap()).unwrap()
}

#[tokio::test]
async fn signing_keys_sign_every_governed_card() {
    // Without a secret no key can be made.
    let plain = env(a2a_gateway::errors::Version::V1).await;
    let (s, b) = admin(&plain, reqwest::Method::POST, "/admin/signing-keys").await;
    assert_eq!(s, 409, "{b}");
    assert!(b.to_string().contains("A2A_GATEWAY_CARD_KEY_SECRET"), "{b}");
    let (c, _) = card(&plain, None).await;
    assert!(c.get("signatures").is_none());
    plain.stop().await;

    let env = env_with(a2a_gateway::errors::Version::V1, |c| {
        c.card_key_secret = Some(SECRET.into());
    })
    .await;
    // The key routes are behind the admin token.
    for (m, path) in [
        (reqwest::Method::GET, "/admin/signing-keys"),
        (reqwest::Method::POST, "/admin/signing-keys/rotate"),
    ] {
        let r = env
            .http
            .request(m, env.url(path))
            .bearer_auth(&env.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }
    let (s, k1) = admin(&env, reqwest::Method::POST, "/admin/signing-keys").await;
    assert_eq!(s, 201, "{k1}");
    assert!(
        k1.to_string().find("\"d\"").is_none(),
        "no private part: {k1}"
    );
    let kid1 = k1["kid"].as_str().unwrap().to_owned();
    let jku = env.url("/a2a/.well-known/jwks.json");
    for version in [None, Some("1.0"), Some("0.3")] {
        let (c, etag) = card(&env, version).await;
        let sigs = c["signatures"].as_array().unwrap();
        assert!(!sigs.is_empty());
        for s in sigs {
            assert_eq!(
                header(s),
                json!({"alg": "ES256", "typ": "JOSE", "kid": kid1, "jku": jku})
            );
        }
        let keys = signing::key_set(&jwks(&env).await).unwrap();
        assert_eq!(
            signing::verify_card(&c, &keys),
            signing::Trust::Verified(kid1.clone())
        );
        assert_eq!(signing::is_v1_card(&c), version != Some("0.3"));
        // The same card keeps the same signatures, so the same ETag.
        assert_eq!(card(&env, version).await.1, etag);
    }
    let (before, etag1) = card(&env, Some("1.0")).await;

    // Rotation: a new key signs, the old one stays in the key set.
    let (s, k2) = admin(&env, reqwest::Method::POST, "/admin/signing-keys/rotate").await;
    assert_eq!(s, 201);
    let kid2 = k2["kid"].as_str().unwrap().to_owned();
    let (after, etag2) = card(&env, Some("1.0")).await;
    assert_ne!(etag1, etag2, "the ETag changes with the signature");
    assert_eq!(header(&after["signatures"][0])["kid"], kid2);
    let set = jwks(&env).await;
    let kids: Vec<&str> = set["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert!(
        kids.contains(&kid1.as_str()) && kids.contains(&kid2.as_str()),
        "{set}"
    );
    assert!(!set.to_string().contains("\"d\""));
    // A card signed before the rotation still verifies against the published set.
    let keys = signing::key_set(&set).unwrap();
    assert_eq!(
        signing::verify_card(&before, &keys),
        signing::Trust::Verified(kid1.clone())
    );

    let (_, list) = admin(&env, reqwest::Method::GET, "/admin/signing-keys").await;
    let states: Vec<(String, String)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kid"].as_str().unwrap().into(),
                k["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![
            (kid2.clone(), "active".into()),
            (kid1.clone(), "retired".into())
        ]
    );
    let (s, _) = admin(
        &env,
        reqwest::Method::POST,
        "/admin/signing-keys/nope/retire",
    )
    .await;
    assert_eq!(s, 404);
    // Retiring the last active key leaves cards unsigned, the key still listed.
    let (s, _) = admin(
        &env,
        reqwest::Method::POST,
        &format!("/admin/signing-keys/{kid2}/retire"),
    )
    .await;
    assert_eq!(s, 200);
    assert!(card(&env, Some("1.0")).await.0.get("signatures").is_none());
    assert_eq!(jwks(&env).await["keys"].as_array().unwrap().len(), 2);
    env.stop().await;
}

/// The official SDKs' verifiers accept the governed cards signed after a rotation: a2a-sdk 1.x
/// the 1.0 card, a2a-sdk 0.3 the 0.3 card (each reads the card in its own model).
#[tokio::test]
async fn sdk_verifiers_accept_the_governed_cards_after_rotation() {
    interop::ensure_venvs_async().await.unwrap();
    let env = env_with(a2a_gateway::errors::Version::V1, |c| {
        c.card_key_secret = Some(SECRET.into());
    })
    .await;
    assert_eq!(
        admin(&env, reqwest::Method::POST, "/admin/signing-keys")
            .await
            .0,
        201
    );
    let (_, k2) = admin(&env, reqwest::Method::POST, "/admin/signing-keys/rotate").await;
    let kid2 = k2["kid"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let jwks_path = dir.path().join("jwks.json");
    std::fs::write(&jwks_path, jwks(&env).await.to_string()).unwrap();
    let script = interop::repo_root().join("interop/signing/verify_card.py");
    for (sdk, version, model) in [(Sdk::V1, "1.0", "1.x"), (Sdk::V03, "0.3", "0.3")] {
        let (c, _) = card(&env, Some(version)).await;
        let card_path = dir.path().join(format!("card-{version}.json"));
        std::fs::write(&card_path, c.to_string()).unwrap();
        let out = tokio::process::Command::new(sdk.python())
            .arg(&script)
            .arg(&card_path)
            .arg(&jwks_path)
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{version}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(v["sdk"], model, "{version}: read with the SDK's own model");
        assert_eq!(v["ok"], true, "{version}: {v}");
        assert_eq!(v["tampered_rejected"], true, "{version}: {v}");
        assert_eq!(v["kids"][0]["kid"], kid2, "{version}: {v}");
        assert_eq!(v["kids"][0]["jku"], env.url("/a2a/.well-known/jwks.json"));
    }
    env.stop().await;
}
