//! The policy decisions table: every attribute a policy sees (workspace, key id and scopes,
//! target agent, operation, skill from the request and from the card, A2A version and binding,
//! message size and part kinds, PII findings, delegation depth, time) decides a hop with each
//! decision (allow, deny, approve, redact), through a real gateway and peer.
//!
//! One row per attribute: rule conditions on it, a hop on which they hold and a hop on which
//! they do not. For each decision the same rows are saved as one policy whose rules all give
//! that decision and whose default is the opposite (deny for allow, allow for the others); the
//! hit must get the decision, the miss the default. Every message carries an e-mail address, so
//! a redaction is seen at the peer.

use crate::common;

use a2a_gateway::errors::Version;
use a2a_gateway::governance::loops::ChainKey;
use a2a_gateway::keys::Scope;
use common::gov::admin;
use common::*;
use futures::StreamExt;
use serde_json::{Value, json};

const KEY: &str = "policy-table-delegation-key";

/// How a hop is made.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// JSON-RPC SendMessage, 1.0.
    Rpc10,
    /// JSON-RPC message/send, 0.3.
    Rpc03,
    /// HTTP+JSON `message:send`, 1.0.
    Rest10,
    /// JSON-RPC SendStreamingMessage, 1.0 (only the first event is read).
    Stream10,
}

/// Which key makes the hop.
#[derive(Clone, Copy, PartialEq)]
enum Who {
    /// ws1's unscoped key.
    Plain,
    /// ws1's key with scopes `a2a:read`, `a2a:send`.
    Scoped,
    /// ws2's key.
    Ws2,
}

/// One hop of the table.
#[derive(Clone)]
struct Hop {
    agent: &'static str,
    way: Way,
    who: Who,
    text: String,
    skill: Option<&'static str>,
    data_part: bool,
    chain_depth: usize,
}

fn hop(agent: &'static str) -> Hop {
    Hop {
        agent,
        way: Way::Rpc10,
        who: Who::Plain,
        text: "reach pat@example.com".into(),
        skill: None,
        data_part: false,
        chain_depth: 0,
    }
}

/// What became of a hop.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The peer got it; `redacted`: with the e-mail replaced.
    Sent { redacted: bool },
    /// `a2a_policy_denied` naming the rule.
    Denied(String),
    /// Held for approval (a gateway task).
    Held,
}

struct Row {
    attribute: &'static str,
    /// Rule conditions (each its own rule, all with the decision under test).
    when: Vec<String>,
    hit: Hop,
    miss: Hop,
}

fn rows(scoped_key_id: &str, t0: i64) -> Vec<Row> {
    let big = format!("reach pat@example.com {}", "x".repeat(3000));
    vec![
        Row {
            attribute: "workspace",
            when: vec!["agent.id == 't-ws' && workspace == 'ws1'".into()],
            hit: hop("t-ws"),
            miss: Hop {
                who: Who::Ws2,
                ..hop("t-ws")
            },
        },
        Row {
            attribute: "key id",
            when: vec![format!(
                "agent.id == 't-kid' && key.id == '{scoped_key_id}'"
            )],
            hit: Hop {
                who: Who::Scoped,
                ..hop("t-kid")
            },
            miss: hop("t-kid"),
        },
        Row {
            attribute: "key scopes",
            when: vec!["agent.id == 't-scope' && key.scopes.exists(s, s == 'a2a:read')".into()],
            hit: Hop {
                who: Who::Scoped,
                ..hop("t-scope")
            },
            miss: hop("t-scope"),
        },
        Row {
            attribute: "target agent",
            when: vec!["agent.id == 't-agent'".into()],
            hit: hop("t-agent"),
            miss: hop("t-agent-other"),
        },
        Row {
            attribute: "operation",
            when: vec!["agent.id == 't-op' && operation == 'SendStreamingMessage'".into()],
            hit: Hop {
                way: Way::Stream10,
                ..hop("t-op")
            },
            miss: hop("t-op"),
        },
        Row {
            attribute: "skill (request)",
            when: vec!["agent.id == 't-skill' && skill == 'refund'".into()],
            hit: Hop {
                skill: Some("refund"),
                ..hop("t-skill")
            },
            miss: hop("t-skill"),
        },
        Row {
            // t-card may use every skill of the card; t-card-narrow only `other` (none of it).
            attribute: "skill (card)",
            when: vec!["agent.id.startsWith('t-card') && 'echo' in agent.skills".into()],
            hit: hop("t-card"),
            miss: hop("t-card-narrow"),
        },
        Row {
            attribute: "version",
            when: vec!["agent.id == 't-ver' && version == '0.3'".into()],
            hit: Hop {
                way: Way::Rpc03,
                ..hop("t-ver")
            },
            miss: hop("t-ver"),
        },
        Row {
            attribute: "binding",
            when: vec!["agent.id == 't-bind' && binding == 'HTTP+JSON'".into()],
            hit: Hop {
                way: Way::Rest10,
                ..hop("t-bind")
            },
            miss: hop("t-bind"),
        },
        Row {
            attribute: "message size",
            when: vec![
                "agent.id == 't-size' && message.bytes > 2000 && message.text_chars > 2000".into(),
            ],
            hit: Hop {
                text: big,
                ..hop("t-size")
            },
            miss: hop("t-size"),
        },
        Row {
            attribute: "part kinds",
            when: vec!["agent.id == 't-kind' && 'data' in message.part_kinds".into()],
            hit: Hop {
                data_part: true,
                ..hop("t-kind")
            },
            miss: hop("t-kind"),
        },
        Row {
            attribute: "PII findings",
            when: vec!["agent.id == 't-pii' && pii.EMAIL >= 2 && pii_total >= 2".into()],
            hit: Hop {
                text: "reach pat@example.com or sam@example.org".into(),
                ..hop("t-pii")
            },
            miss: hop("t-pii"),
        },
        Row {
            attribute: "delegation depth",
            when: vec!["agent.id == 't-chain' && chain.depth == 2".into()],
            hit: Hop {
                chain_depth: 1,
                ..hop("t-chain")
            },
            miss: hop("t-chain"),
        },
        Row {
            // The clock cannot be moved: two agents whose rules say opposite things of it.
            attribute: "time",
            when: vec![
                format!(
                    "agent.id == 't-time' && time.unix >= {t0} && time.hour < 24 && time.weekday < 7"
                ),
                format!("agent.id == 't-time-before' && time.unix < {t0}"),
            ],
            hit: hop("t-time"),
            miss: hop("t-time-before"),
        },
    ]
}

/// The agents of the table (all at the echo peer); `t-card-narrow` may use skill `other` only.
const AGENTS: &[&str] = &[
    "t-ws",
    "t-kid",
    "t-scope",
    "t-agent",
    "t-agent-other",
    "t-op",
    "t-skill",
    "t-card",
    "t-ver",
    "t-bind",
    "t-size",
    "t-kind",
    "t-pii",
    "t-chain",
    "t-time",
    "t-time-before",
];

struct Keys {
    plain: String,
    scoped: String,
    ws2: String,
}

async fn make(env: &Env, keys: &Keys, h: &Hop, token: &str) -> Outcome {
    let key = match h.who {
        Who::Plain => &keys.plain,
        Who::Scoped => &keys.scoped,
        Who::Ws2 => &keys.ws2,
    };
    let text = format!("{token} {}", h.text);
    let v03 = h.way == Way::Rpc03;
    let mut req = if v03 { send03(&text) } else { send10(&text) };
    if let Some(s) = h.skill {
        req["params"]["metadata"] = json!({"skill": s});
    }
    if h.data_part {
        req["params"]["message"]["parts"] = if v03 {
            json!([{"kind": "text", "text": token}, {"kind": "data", "data": {"to": "pat@example.com"}}])
        } else {
            json!([{"text": token}, {"data": {"to": "pat@example.com"}}])
        };
    }
    let (path, body) = match h.way {
        Way::Rest10 => (
            format!("/a2a/{}/v1/message:send", h.agent),
            req["params"].clone(),
        ),
        Way::Stream10 => {
            req["method"] = json!("SendStreamingMessage");
            (format!("/a2a/{}", h.agent), req)
        }
        _ => (format!("/a2a/{}", h.agent), req),
    };
    let mut r = env
        .http
        .post(env.url(&path))
        .header(
            "content-type",
            if h.way == Way::Rest10 {
                "application/a2a+json"
            } else {
                "application/json"
            },
        )
        .bearer_auth(key)
        .body(body.to_string());
    if !v03 {
        r = r.header("A2A-Version", "1.0");
    }
    if h.chain_depth > 0 {
        let members: Vec<String> = (0..h.chain_depth).map(|i| format!("ws1/x{i}")).collect();
        r = r.header(
            "a2a-delegation-chain",
            ChainKey::new(KEY.as_bytes()).sign(&members),
        );
    }
    let resp = r.send().await.unwrap();
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|c| c.to_str().unwrap_or("").starts_with("text/event-stream"));
    // The answer: a JSON-RPC response, an HTTP+JSON body, or the first event of a stream.
    let b: Value = if sse {
        let mut bytes = resp.bytes_stream();
        let mut buf = String::new();
        loop {
            let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), bytes.next())
                .await
                .expect("no stream event")
                .expect("the stream ended without an event")
                .unwrap();
            buf.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(d) = buf
                .split("\n\n")
                .next()
                .filter(|_| buf.contains("\n\n"))
                .and_then(|block| block.lines().find_map(|l| l.strip_prefix("data:")))
            {
                break serde_json::from_str(d.trim()).unwrap();
            }
        }
    } else {
        resp.json().await.unwrap()
    };
    let err = b
        .get("error")
        .map(|e| e.get("data").or(e.get("details")).unwrap_or(e));
    if let Some(d) = err {
        let info = if d.is_array() {
            d[0]["metadata"].clone()
        } else {
            d.clone()
        };
        assert_eq!(info["code"], "a2a_policy_denied", "{b}");
        return Outcome::Denied(info["rule"].as_str().unwrap_or_default().to_owned());
    }
    let r = b.get("result").unwrap_or(&b);
    let task = r.get("task").unwrap_or(r);
    if task["id"]
        .as_str()
        .is_some_and(|i| i.starts_with("gw-approval-"))
    {
        return Outcome::Held;
    }
    assert!(task.is_object(), "{b}");
    let seen = env.peers[0].last_body().to_string();
    assert!(seen.contains(token), "the peer did not get {token}: {seen}");
    Outcome::Sent {
        redacted: seen.contains("[REDACTED:EMAIL]") && !seen.contains("pat@example.com"),
    }
}

/// `key-scopes-0`: the row's `i`th rule.
fn rule_id(r: &Row, i: usize) -> String {
    let slug: String = r
        .attribute
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{slug}-{i}")
}

#[tokio::test]
async fn policy_decisions_table() {
    let env = env_with(Version::V1, |c| {
        c.delegation_key = Some(KEY.into());
        // A held blocking send answers at once (the wait is `governance_approval.rs`'s).
        c.approval_wait_secs = 0;
    })
    .await;
    let peer = env.peers[0].url.clone();
    for a in AGENTS {
        env.register("ws1", a, &peer, None);
        env.register("ws2", a, &peer, None);
    }
    env.register("ws1", "t-card-narrow", &peer, Some(vec!["other"]));
    let (scoped_id, scoped) = key_with(&env, &[Scope::Read, Scope::Send], None);
    let (_, ws2) = env.store.create_key("ws2", &[], None, None).unwrap();
    let keys = Keys {
        plain: env.key.clone(),
        scoped,
        ws2,
    };
    let t0 = time::OffsetDateTime::now_utc().unix_timestamp();
    let rows = rows(&scoped_id, t0);
    for ws in ["ws1", "ws2"] {
        // PII recorded, not changed: policies see the findings, only `redact` changes content.
        let (s, _) = admin(
            &env,
            "PUT",
            &format!("/admin/workspaces/{ws}/pii"),
            Some(json!({"default_action": "record"})),
        )
        .await;
        assert_eq!(s, 200);
    }
    let mut n = 0;
    for decision in ["allow", "deny", "approve", "redact"] {
        let default = if decision == "allow" { "deny" } else { "allow" };
        let mut rules = Vec::new();
        for r in &rows {
            for (i, w) in r.when.iter().enumerate() {
                rules.push(json!({"id": rule_id(r, i), "when": w,
                    "decision": decision}));
            }
        }
        let doc = json!({"default": default, "rules": rules});
        for ws in ["ws1", "ws2"] {
            let (s, b) = admin(
                &env,
                "PUT",
                &format!("/admin/workspaces/{ws}/policy"),
                Some(doc.clone()),
            )
            .await;
            assert_eq!(s, 200, "{b}");
        }
        for r in &rows {
            let hit = match decision {
                "allow" => Outcome::Sent { redacted: false },
                "deny" => Outcome::Denied(rule_id(r, 0)),
                "approve" => Outcome::Held,
                _ => Outcome::Sent { redacted: true },
            };
            let miss = match default {
                "deny" => Outcome::Denied("default".into()),
                _ => Outcome::Sent { redacted: false },
            };
            for (h, want, which) in [(&r.hit, hit, "hit"), (&r.miss, miss, "miss")] {
                n += 1;
                let token = format!("tok{n}");
                let got = make(&env, &keys, h, &token).await;
                assert_eq!(
                    got, want,
                    "{decision} on {} ({which}; policy default {default})",
                    r.attribute
                );
            }
        }
    }
    assert_eq!(n, rows.len() * 8);
    env.stop().await;
}
