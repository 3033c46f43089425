//! The signature table: valid, tampered member, wrong key, unknown kid, `alg: none`, HMAC,
//! missing `typ`, a translated card, 0.3 cards.

use super::*;
use serde_json::json;

fn card_v1() -> Value {
    json!({"name": "Planner", "description": "Plans routes", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://peer.example/a2a", "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "route", "name": "Route", "description": "", "tags": []}]})
}

fn card_v03() -> Value {
    json!({"name": "Planner", "description": "Plans routes", "version": "1.0.0",
        "url": "https://peer.example/a2a", "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0", "capabilities": {"streaming": true},
        "securitySchemes": {"k": {"type": "http", "scheme": "bearer"}},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []})
}

fn key(kid: &str) -> (CardKey, JwkSet) {
    let (der, jwk) = generate_es256(kid).unwrap();
    (
        CardKey::es256(kid, &der),
        key_set(&json!({"keys": [jwk]})).unwrap(),
    )
}

/// A signature with a hand-made protected header (any `alg`), signed with `sign` when given.
fn forged(card: &Value, header: Value, sign: Option<(&EncodingKey, Algorithm)>) -> Value {
    let protected = B64.encode(header.to_string());
    let payload = canonical::payload(card, canonical::Form::V1Spec).unwrap();
    let input = format!("{protected}.{}", B64.encode(payload));
    let signature = match sign {
        Some((k, a)) => jsonwebtoken::crypto::sign(input.as_bytes(), k, a).unwrap(),
        None => String::new(),
    };
    let mut c = card.clone();
    c["signatures"] = json!([{"protected": protected, "signature": signature}]);
    c
}

#[test]
fn signature_table() {
    let (k1, set1) = key("k1");
    let (_, set2) = key("k1");
    let (k3, _) = key("k3");
    let signed = sign_card(card_v1(), &k1, Some("https://gw.example/jwks.json")).unwrap();
    assert_eq!(verify_card(&signed, &set1), Trust::Verified("k1".into()));
    assert_eq!(verify_card(&card_v1(), &set1), Trust::Unsigned);

    let mut tampered = signed.clone();
    tampered["supportedInterfaces"][0]["url"] = json!("https://evil.example/a2a");
    assert_eq!(verify_card(&tampered, &set1).as_str(), "invalid");
    let mut added = signed.clone();
    added["iconUrl"] = json!("https://peer.example/i.png");
    assert_eq!(verify_card(&added, &set1).as_str(), "invalid");

    // Same kid, another key: invalid. Another kid: untrusted.
    assert_eq!(verify_card(&signed, &set2).as_str(), "invalid");
    let other = sign_card(card_v1(), &k3, None).unwrap();
    let t = verify_card(&other, &set1);
    assert_eq!(t.as_str(), "untrusted-key", "{t:?}");
    assert!(t.reason().contains("\"k3\""), "{}", t.reason());
    assert_eq!(
        verify_card(&other, &JwkSet { keys: vec![] }).as_str(),
        "untrusted-key"
    );

    // alg none, and HMAC even with a symmetric key in the trusted set.
    let none = forged(
        &card_v1(),
        json!({"alg": "none", "typ": "JOSE", "kid": "k1"}),
        None,
    );
    let t = verify_card(&none, &set1);
    assert_eq!(t.as_str(), "invalid");
    assert!(
        t.reason().contains("\"none\" is not allowed"),
        "{}",
        t.reason()
    );
    let secret = EncodingKey::from_secret(b"shared secret of 32 bytes.......").unwrap();
    let hs = forged(
        &card_v1(),
        json!({"alg": "HS256", "typ": "JOSE", "kid": "h"}),
        Some((&secret, Algorithm::HS256)),
    );
    let oct = key_set(
        &json!({"kty": "oct", "kid": "h", "k": B64.encode(b"shared secret of 32 bytes.......")}),
    )
    .unwrap();
    assert_eq!(verify_card(&hs, &oct).as_str(), "invalid");
    // An oct key cannot stand in for an allowed algorithm either.
    let es_oct = forged(
        &card_v1(),
        json!({"alg": "ES256", "typ": "JOSE", "kid": "h"}),
        Some((&k1.key, Algorithm::ES256)),
    );
    assert!(verify_card(&es_oct, &oct).reason().contains("oct"));

    // typ and kid are required.
    let no_typ = forged(
        &card_v1(),
        json!({"alg": "ES256", "kid": "k1"}),
        Some((&k1.key, Algorithm::ES256)),
    );
    assert!(verify_card(&no_typ, &set1).reason().contains("typ"));
    let ok = forged(
        &card_v1(),
        json!({"alg": "ES256", "typ": "JOSE", "kid": "k1"}),
        Some((&k1.key, Algorithm::ES256)),
    );
    assert_eq!(verify_card(&ok, &set1).as_str(), "verified");
}

#[test]
fn rotation_and_translated_cards() {
    let (k1, set1) = key("k1");
    let (k2, set2) = key("k2");
    let both = sign_card(sign_card(card_v1(), &k1, None).unwrap(), &k2, None).unwrap();
    assert_eq!(verify_card(&both, &set2), Trust::Verified("k2".into()));
    assert_eq!(verify_card(&both, &set1), Trust::Verified("k1".into()));

    // A 0.3 card verifies in 0.3 forms; translating it (here: to 1.0) breaks its signature.
    let signed03 = sign_card(card_v03(), &k1, None).unwrap();
    assert_eq!(verify_card(&signed03, &set1).as_str(), "verified");
    let mut translated = signed03.clone();
    translated["supportedInterfaces"] = json!([{"url": "https://peer.example/a2a",
        "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]);
    assert_eq!(verify_card(&translated, &set1).as_str(), "invalid");
    let mut tampered = signed03;
    tampered["url"] = json!("https://evil.example/");
    assert_eq!(verify_card(&tampered, &set1).as_str(), "invalid");
}

#[test]
fn both_forms_are_signed_and_each_verifies_alone() {
    let (k1, set1) = key("k1");
    let signed = sign_card(card_v1(), &k1, None).unwrap();
    let sigs = signed["signatures"].as_array().unwrap().clone();
    assert_eq!(sigs.len(), 2, "the spec and SDK forms differ for this card");
    for s in sigs {
        let mut one = signed.clone();
        one["signatures"] = json!([s]);
        assert_eq!(verify_card(&one, &set1).as_str(), "verified");
    }
}

/// `CardResolver::with_trusted_keys`: a verified card is served, an unsigned or tampered one is
/// refused with the trust state.
#[tokio::test]
async fn resolver_with_trusted_keys() {
    use std::sync::{Arc, Mutex};
    let (k1, set1) = key("k1");
    let served = Arc::new(Mutex::new(sign_card(card_v1(), &k1, None).unwrap()));
    let s = served.clone();
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || {
            let s = s.clone();
            async move { axum::Json(s.lock().unwrap().clone()) }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(l, app).await });
    let resolver =
        crate::discovery::CardResolver::new(reqwest::Client::new()).with_trusted_keys(set1);
    assert!(resolver.fetch(&base).await.is_ok());
    served.lock().unwrap()["name"] = json!("Changed");
    let e = resolver.revalidate(&base).await.unwrap_err().to_string();
    assert!(e.contains("card signature invalid"), "{e}");
    *served.lock().unwrap() = card_v1();
    let e = resolver.revalidate(&base).await.unwrap_err().to_string();
    assert!(e.contains("card signature unsigned"), "{e}");
    server.abort();
}
