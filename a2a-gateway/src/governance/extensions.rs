//! Extension governance (issue 15), the "extensions" step of [`crate::hop::STEPS`].
//!
//! An extension URI goes to the peer only when all three hold: the caller asked for it
//! (`A2A-Extensions`, or the legacy `X-A2A-Extensions`), the workspace allows it
//! (`a2a.extensions.allowed`, [`crate::store::WorkspaceSettings`]; nothing until an operator
//! allows it) and the peer's card declares it (`capabilities.extensions`). A card that marks an
//! extension `required` is answered as in the DVARA API's table:
//!
//! | workspace          | caller asked | result                                          |
//! |--------------------|--------------|-------------------------------------------------|
//! | does not allow it  | either       | 403 `a2a_extension_not_allowed` (-32000)        |
//! | allows it          | no           | 400 -32008 `a2a_extension_support_required`     |
//! | allows it          | yes          | the call goes ahead                             |
//!
//! The URIs forwarded are sent in the peer's version's header (`A2A-Extensions` for 1.0; both
//! names for 0.3); every other URI is removed from the `extensions` lists of messages and
//! artifacts, in the request and in answers and stream events. The answer's `A2A-Extensions`
//! (and `X-A2A-Extensions` for a 0.3 caller) lists what the peer says it activated, among the
//! forwarded. Methods an extension adds are not forwarded: they stay -32601 at the edge.
//!
//! The peer call reads the forwarded list and records the activated one through a task-local
//! ([`scope`]), so the call path itself carries no extension state.

use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderValue};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;

use a2a_types::version::{
    A2A_EXTENSIONS_HEADER, X_A2A_EXTENSIONS_HEADER, format_extensions, parse_extensions,
};

use crate::protocol::answer::Answer;
use crate::store::WorkspaceSettings;
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// The extension URIs a request asks for (`A2A-Extensions` and `X-A2A-Extensions`, merged).
pub fn requested(headers: &HeaderMap) -> Vec<String> {
    parse_extensions(
        headers
            .get_all(A2A_EXTENSIONS_HEADER)
            .iter()
            .chain(headers.get_all(X_A2A_EXTENSIONS_HEADER).iter())
            .filter_map(|v| v.to_str().ok()),
    )
}

/// The extension state of one hop, shared with its peer calls.
#[derive(Debug, Default)]
pub(crate) struct HopExtensions {
    /// URIs forwarded to the peer.
    forward: Mutex<Vec<String>>,
    /// URIs the peer's answer says it activated (among the forwarded), once it answered.
    activated: Mutex<Option<Vec<String>>>,
}

tokio::task_local! {
    static HOP: Arc<HopExtensions>;
}

/// Runs a hop with its extension state reachable from its peer calls. A plain function (not
/// `async`): an async wrapper would hold `f` twice in its own state and double the hop's future.
pub(crate) fn scope<F: Future>(hop: Arc<HopExtensions>, f: F) -> impl Future<Output = F::Output> {
    HOP.scope(hop, f)
}

/// An extension a peer's card declares.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Declared {
    /// The extension's URI.
    pub uri: String,
    /// Whether the peer requires it.
    #[serde(default)]
    pub required: bool,
}

/// The extensions a card (either version) declares in `capabilities.extensions`.
pub fn declared(card_body: &[u8]) -> Vec<Declared> {
    #[derive(Deserialize)]
    struct Card {
        #[serde(default)]
        capabilities: Option<Caps>,
    }
    #[derive(Deserialize)]
    struct Caps {
        #[serde(default)]
        extensions: Option<Vec<Value>>,
    }
    // Most cards declare none: skip the parse when the word is absent.
    if memchr::memmem::find(card_body, b"extensions").is_none() {
        return Vec::new();
    }
    serde_json::from_slice::<Card>(card_body)
        .ok()
        .and_then(|c| c.capabilities)
        .and_then(|c| c.extensions)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| serde_json::from_value(e).ok())
        .collect()
}

/// The "extensions" step: the required extensions of the peer's card (the table above), the
/// URIs to forward, and the request's `extensions` lists kept to them.
pub(crate) fn step(
    requested: &[String],
    settings: &WorkspaceSettings,
    card_body: &[u8],
    params: &mut Value,
) -> Result<Vec<String>, Refusal> {
    let declared = declared(card_body);
    for d in declared.iter().filter(|d| d.required) {
        if !settings.allows_extension(&d.uri) {
            return Err(Refusal::extension_not_allowed(&d.uri));
        }
        if !requested.contains(&d.uri) {
            return Err(Refusal::extension_support_required(&d.uri));
        }
    }
    let forward: Vec<String> = requested
        .iter()
        .filter(|u| settings.allows_extension(u) && declared.iter().any(|d| &d.uri == *u))
        .cloned()
        .collect();
    keep_in_lists(params, &forward);
    let _ = HOP.try_with(|h| {
        if let Ok(mut g) = h.forward.lock() {
            g.clone_from(&forward);
        }
    });
    Ok(forward)
}

/// The forwarded URIs as request headers of a peer call in `version`.
pub(crate) fn outbound(req: reqwest::RequestBuilder, version: Version) -> reqwest::RequestBuilder {
    let forward = HOP
        .try_with(|h| h.forward.lock().map(|g| g.clone()).unwrap_or_default())
        .unwrap_or_default();
    if forward.is_empty() {
        return req;
    }
    let value = format_extensions(&forward);
    match version {
        Version::V1 => req.header(A2A_EXTENSIONS_HEADER, value),
        // 0.3 named the header X-A2A-Extensions; some 0.3 agents read the 1.0 name.
        Version::V03 => req
            .header(X_A2A_EXTENSIONS_HEADER, value.clone())
            .header(A2A_EXTENSIONS_HEADER, value),
    }
}

/// Records what a peer's answer says it activated (kept to the forwarded URIs).
pub(crate) fn inbound(headers: &reqwest::header::HeaderMap) {
    let _ = HOP.try_with(|h| {
        let forward = h.forward.lock().map(|g| g.clone()).unwrap_or_default();
        if forward.is_empty() {
            return;
        }
        let said = parse_extensions(
            headers
                .get_all(A2A_EXTENSIONS_HEADER)
                .iter()
                .chain(headers.get_all(X_A2A_EXTENSIONS_HEADER).iter())
                .filter_map(|v| v.to_str().ok()),
        );
        let active: Vec<String> = said.into_iter().filter(|u| forward.contains(u)).collect();
        if let Ok(mut a) = h.activated.lock() {
            *a = Some(active);
        }
    });
}

impl HopExtensions {
    /// The state of a hop that forwards `forward` (a held send released later).
    pub(crate) fn forwarding(forward: Vec<String>) -> HopExtensions {
        HopExtensions {
            forward: Mutex::new(forward),
            activated: Mutex::new(None),
        }
    }

    /// The URIs the running hop forwards (empty outside a hop).
    pub(crate) fn current() -> Vec<String> {
        HOP.try_with(|h| h.forwarded()).unwrap_or_default()
    }

    /// The forwarded URIs.
    pub(crate) fn forwarded(&self) -> Vec<String> {
        self.forward.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// The activated URIs the answer's header lists (`None`: no answer header).
    pub(crate) fn activated(&self) -> Option<Vec<String>> {
        self.activated.lock().ok().and_then(|g| g.clone())
    }
}

/// Keeps the `extensions` lists of every message and artifact in `v` (either version's form)
/// to `keep`; a list left empty is removed.
pub fn keep_in_lists(v: &mut Value, keep: &[String]) {
    match v {
        Value::Object(o) => {
            // Most objects have no `extensions` list: one lookup decides for them.
            let carrier = matches!(o.get("extensions"), Some(Value::Array(_)))
                && o.contains_key("parts")
                && (o.contains_key("messageId") || o.contains_key("artifactId"));
            if carrier && let Some(Value::Array(list)) = o.get_mut("extensions") {
                list.retain(|u| u.as_str().is_some_and(|u| keep.iter().any(|k| k == u)));
                if list.is_empty() {
                    o.remove("extensions");
                }
            }
            for (_, child) in o.iter_mut() {
                if child.is_object() || child.is_array() {
                    keep_in_lists(child, keep);
                }
            }
        }
        Value::Array(a) => {
            for child in a {
                keep_in_lists(child, keep);
            }
        }
        _ => {}
    }
}

/// The answer of a hop with its `extensions` lists kept to the forwarded URIs.
pub(crate) fn answer(hop: &HopExtensions, answer: Answer) -> Answer {
    let keep = hop.forwarded();
    match answer {
        Answer::Unary(mut v) => {
            keep_in_lists(&mut v, &keep);
            Answer::Unary(v)
        }
        // A passed answer has no `extensions` list (`Passed::send_result` leaves those to the
        // `Value` path).
        Answer::Passed(p) => Answer::Passed(p),
        Answer::Stream(s) => Answer::Stream(
            s.map(move |item| {
                item.map(|mut v| {
                    keep_in_lists(&mut v, &keep);
                    v
                })
            })
            .boxed(),
        ),
    }
}

/// Writes the activated extensions on the caller's answer (`A2A-Extensions`; also
/// `X-A2A-Extensions` for a 0.3 caller), when the peer's answer listed any.
pub(crate) fn answer_headers(activated: Option<&[String]>, caller: Version, h: &mut HeaderMap) {
    let Some(list) = activated.filter(|l| !l.is_empty()) else {
        return;
    };
    let Ok(value) = HeaderValue::from_str(&format_extensions(list)) else {
        return;
    };
    if caller == Version::V03 {
        h.insert(X_A2A_EXTENSIONS_HEADER, value.clone());
    }
    h.insert(A2A_EXTENSIONS_HEADER, value);
}

/// The governed card's `capabilities.extensions`: the peer's declarations the workspace
/// allows (none: the member is absent).
pub fn govern_card(card: &mut Value, peer_card: &Value, settings: &WorkspaceSettings) {
    let allowed: Vec<Value> = peer_card
        .pointer("/capabilities/extensions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|e| {
                    e.get("uri")
                        .and_then(Value::as_str)
                        .is_some_and(|u| settings.allows_extension(u))
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let Some(caps) = card.get_mut("capabilities").and_then(Value::as_object_mut) else {
        return;
    };
    if allowed.is_empty() {
        caps.remove("extensions");
    } else {
        caps.insert("extensions".into(), Value::Array(allowed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(allowed: &[&str]) -> WorkspaceSettings {
        WorkspaceSettings {
            extensions_allowed: allowed.iter().map(|s| s.to_string()).collect(),
            push_delivery: None,
        }
    }

    const CARD: &str = r#"{"name":"x","capabilities":{"extensions":[
        {"uri":"urn:opt"},{"uri":"urn:req","required":true}]}}"#;

    #[test]
    fn the_dvara_table() {
        let mut p = json!({});
        let req = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Not allowed: 403 whether asked or not.
        for asked in [req(&[]), req(&["urn:req"])] {
            let r = step(&asked, &settings(&["urn:opt"]), CARD.as_bytes(), &mut p).unwrap_err();
            assert_eq!(
                (r.status, r.code.as_str()),
                (403, "a2a_extension_not_allowed")
            );
            assert_eq!(r.rpc_code, -32000);
        }
        // Allowed, not asked: -32008.
        let r = step(
            &req(&["urn:opt"]),
            &settings(&["urn:req"]),
            CARD.as_bytes(),
            &mut p,
        )
        .unwrap_err();
        assert_eq!((r.status, r.rpc_code), (400, -32008));
        assert_eq!(r.code, "a2a_extension_support_required");
        // Allowed and asked: forwarded with the optional one only when allowed too.
        let f = step(
            &req(&["urn:req", "urn:opt", "urn:other"]),
            &settings(&["urn:req"]),
            CARD.as_bytes(),
            &mut p,
        )
        .unwrap();
        assert_eq!(f, req(&["urn:req"]));
        let f = step(
            &req(&["urn:req", "urn:opt"]),
            &settings(&["urn:req", "urn:opt", "urn:other"]),
            CARD.as_bytes(),
            &mut p,
        )
        .unwrap();
        assert_eq!(f, req(&["urn:req", "urn:opt"]));
        // No declarations: nothing forwarded, nothing refused.
        let f = step(
            &req(&["urn:opt"]),
            &settings(&["urn:opt"]),
            br#"{"name":"x"}"#,
            &mut p,
        )
        .unwrap();
        assert!(f.is_empty());
    }

    #[test]
    fn lists_of_messages_and_artifacts_are_kept_to_the_forwarded() {
        let mut v = json!({"message": {"messageId": "m", "parts": [], "extensions": ["urn:a", "urn:b"]},
            "task": {"artifacts": [{"artifactId": "a", "parts": [], "extensions": ["urn:b"]}],
                "status": {"message": {"kind": "message", "messageId": "s", "parts": [], "extensions": ["urn:a"]}}},
            "metadata": {"extensions": ["urn:b"]}});
        keep_in_lists(&mut v, &["urn:a".to_owned()]);
        assert_eq!(v["message"]["extensions"], json!(["urn:a"]));
        assert!(v["task"]["artifacts"][0].get("extensions").is_none());
        assert_eq!(
            v["task"]["status"]["message"]["extensions"],
            json!(["urn:a"])
        );
        // Not a message or artifact: left alone.
        assert_eq!(v["metadata"]["extensions"], json!(["urn:b"]));
    }

    #[test]
    fn governed_card_lists_only_allowed_extensions() {
        let peer: Value = serde_json::from_str(CARD).unwrap();
        let mut card = json!({"capabilities": {"streaming": true}});
        govern_card(&mut card, &peer, &settings(&["urn:req"]));
        assert_eq!(
            card["capabilities"]["extensions"],
            json!([{"uri":"urn:req","required":true}])
        );
        govern_card(&mut card, &peer, &settings(&[]));
        assert!(card["capabilities"].get("extensions").is_none());
    }

    #[test]
    fn both_header_names_are_read() {
        let mut h = HeaderMap::new();
        h.insert("a2a-extensions", HeaderValue::from_static("urn:a, urn:b"));
        h.insert("x-a2a-extensions", HeaderValue::from_static("urn:b,urn:c"));
        assert_eq!(requested(&h), vec!["urn:a", "urn:b", "urn:c"]);
    }
}
