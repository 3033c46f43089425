//! Loops and delegation: every outbound hop carries a signed delegation chain
//! ([`CHAIN_HEADER`]): the agents already visited (`workspace/agent`, oldest first), so an agent
//! that delegates through the gateway again carries it on. The chain is signed with an HMAC
//! (SHA-256) under the gateway's delegation key: a peer cannot shorten or edit it without the
//! signature failing (`a2a_delegation_chain_invalid`). A hop whose target is already in the
//! chain is `a2a_loop_detected`; one that would make the chain longer than the maximum depth is
//! `a2a_delegation_depth_exceeded`.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::errors::Refusal;
use crate::{governance::step::Evidence, governance::step::Hop, governance::step::Step};

/// The header carrying the delegation chain, on the gateway's calls to peers and on an agent's
/// delegated calls back to the gateway.
pub const CHAIN_HEADER: &str = a2a_client::delegation::CHAIN_HEADER;

/// Header carrying the number of gateway hops a request has made (loop-detection seam input).
pub const HOPS_HEADER: &str = "x-a2a-gateway-hops";

/// Longest header value accepted (bytes).
const MAX_HEADER: usize = 8 * 1024;

#[derive(Serialize, Deserialize)]
struct Body {
    /// `workspace/agent`, oldest first.
    agents: Vec<String>,
}

/// Signed first-hop chains kept at most (one per workspace/agent called; cleared when full).
const FIRST_HOPS_KEPT: usize = 4096;

/// Signs and verifies chains with the gateway's key.
pub struct ChainKey {
    key: hmac::Key,
    /// The header values of one-member chains (a caller's first hop, nearly every hop): the
    /// value depends only on the member, so it is signed once, not on every hop.
    first_hops: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

impl ChainKey {
    /// A key from secret bytes.
    pub fn new(secret: &[u8]) -> ChainKey {
        ChainKey {
            key: hmac::Key::new(hmac::HMAC_SHA256, secret),
            first_hops: Default::default(),
        }
    }

    /// The header value for `agents`.
    pub fn sign(&self, agents: &[String]) -> String {
        let [member] = agents else {
            return self.sign_now(agents);
        };
        if let Ok(kept) = self.first_hops.lock()
            && let Some(v) = kept.get(member)
        {
            return v.clone();
        }
        let v = self.sign_now(agents);
        if let Ok(mut kept) = self.first_hops.lock() {
            if kept.len() >= FIRST_HOPS_KEPT {
                kept.clear();
            }
            kept.insert(member.clone(), v.clone());
        }
        v
    }

    fn sign_now(&self, agents: &[String]) -> String {
        let body = serde_json::to_vec(&Body {
            agents: agents.to_vec(),
        })
        .unwrap_or_default();
        let b = B64.encode(body);
        let tag = hmac::sign(&self.key, b.as_bytes());
        format!("{b}.{}", B64.encode(tag.as_ref()))
    }

    /// The agents of a header value; `Err` when it is malformed or its signature fails.
    pub fn verify(&self, value: &str) -> Result<Vec<String>, Refusal> {
        let bad = Refusal::delegation_chain_invalid;
        if value.len() > MAX_HEADER {
            return Err(bad("header too long"));
        }
        let (b, tag) = value
            .trim()
            .split_once('.')
            .ok_or_else(|| bad("not <body>.<signature>"))?;
        let tag = B64
            .decode(tag)
            .map_err(|_| bad("signature is not base64url"))?;
        hmac::verify(&self.key, b.as_bytes(), &tag)
            .map_err(|_| bad("signature does not verify"))?;
        let body = B64.decode(b).map_err(|_| bad("body is not base64url"))?;
        let body: Body = serde_json::from_slice(&body).map_err(|_| bad("body is not a chain"))?;
        Ok(body.agents)
    }
}

/// The chain member naming `agent` in `workspace`.
pub fn member(workspace: &str, agent: &str) -> String {
    [workspace, "/", agent].concat()
}

/// The loop and depth step.
pub struct LoopStep {
    /// Longest chain allowed (agents, the target included), among the live settings.
    pub knobs: std::sync::Arc<super::knobs::Knobs>,
}

impl Step for LoopStep {
    fn name(&self) -> &'static str {
        "loops"
    }

    fn active(&self, hop: &Hop) -> bool {
        // A hop without a chain is depth 1 and cannot loop.
        !hop.chain.is_empty() || self.knobs.max_depth() < 1
    }

    fn request(&self, hop: &Hop, _params: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let me = member(&hop.workspace_id, &hop.target);
        let mut chain = hop.chain.clone();
        chain.push(me.clone());
        ev.chain = chain.clone();
        if hop.chain.contains(&me) {
            ev.decide("loops", "loop", None);
            return Err(Refusal::loop_detected(&hop.target, chain.len()));
        }
        let max_depth = self.knobs.max_depth();
        if chain.len() > max_depth {
            ev.decide("loops", "too_deep", None);
            return Err(Refusal::delegation_depth_exceeded(chain.len(), max_depth));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_round_trips_and_tampering_fails() {
        let k = ChainKey::new(b"k");
        let v = k.sign(&["ws/a".into(), "ws/b".into()]);
        assert_eq!(k.verify(&v).unwrap(), vec!["ws/a", "ws/b"]);
        // Shortened by a peer: re-encode a shorter body with the old signature.
        let (_, tag) = v.split_once('.').unwrap();
        let short = format!("{}.{tag}", B64.encode(br#"{"agents":["ws/b"]}"#));
        assert_eq!(
            k.verify(&short).unwrap_err().code,
            "a2a_delegation_chain_invalid"
        );
        assert!(ChainKey::new(b"other").verify(&v).is_err());
        assert!(k.verify("garbage").is_err());
    }

    #[test]
    fn kept_first_hops_sign_like_fresh_ones() {
        let k = ChainKey::new(b"k");
        let one = vec!["ws/a".to_owned()];
        let first = k.sign(&one);
        assert_eq!(k.sign(&one), first, "the kept value is the signed value");
        assert_eq!(first, k.sign_now(&one));
        assert_eq!(k.verify(&first).unwrap(), one);
        // Another member, and another key, never get the kept value.
        assert_ne!(k.sign(&["ws/b".to_owned()]), first);
        assert_ne!(ChainKey::new(b"other").sign(&one), first);
        // Bounded: past the cap the kept values are dropped, and signing still works.
        for i in 0..FIRST_HOPS_KEPT + 1 {
            k.sign(&[format!("ws/{i}")]);
        }
        assert!(k.first_hops.lock().unwrap().len() <= FIRST_HOPS_KEPT);
        assert_eq!(k.verify(&k.sign(&one)).unwrap(), one);
    }
}
