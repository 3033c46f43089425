//! Workspace policies in CEL (the Common Expression Language, `cel` crate).
//!
//! A policy document is an ordered list of rules; the first rule whose `when` expression is true
//! decides the hop. No rule matches: the document's `default`, else the operator's default
//! (`policy_default`: allow unless the gateway runs default-deny).
//!
//! ```json
//! {"default": "allow",
//!  "rules": [
//!    {"id": "no-secrets-out", "when": "pii.SECRET > 0", "decision": "deny"},
//!    {"id": "big-to-billing", "when": "agent.id == 'billing' && message.bytes > 10000",
//!     "decision": "approve"},
//!    {"id": "redact-for-research", "when": "skill == 'research'", "decision": "redact"}]}
//! ```
//!
//! Expressions are compiled once when the document is saved or loaded ([`Policy::compile`]),
//! never per hop. A rule whose expression fails at evaluation (a missing map key, a type error)
//! denies the hop: a policy that cannot be read is not skipped.

use crate::protocol::ops::GatewayOp;
use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyDecision {
    /// The hop goes ahead.
    Allow,
    /// `a2a_policy_denied`; the peer is not called.
    Deny,
    /// The hop waits for a person's approval.
    Approve,
    /// Every PII finding in the request is replaced by its placeholder, then the hop goes ahead.
    Redact,
}

impl PolicyDecision {
    /// The decision's name in audit evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyDecision::Allow => "allow",
            PolicyDecision::Deny => "deny",
            PolicyDecision::Approve => "approve",
            PolicyDecision::Redact => "redact",
        }
    }
}

/// One rule of a policy document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDoc {
    /// Rule id (unique in the document; shown in audit and refusals).
    pub id: String,
    /// CEL expression over the hop's attributes; must be a bool.
    pub when: String,
    /// What the rule decides when `when` is true.
    pub decision: PolicyDecision,
    /// Record what the rule would decide (evidence `policy_dry_run`) without deciding: the
    /// rules after it are evaluated as if it did not match, and an expression that fails
    /// records a would-be deny instead of denying. Default: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// A policy document as stored and sent to the admin API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDoc {
    /// Decision when no rule matches (default: the operator's `policy_default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<PolicyDecision>,
    /// Rules, in order.
    #[serde(default)]
    pub rules: Vec<RuleDoc>,
}

/// What [`Policy::decide`] gives: the decision, the deciding rule's id (or `default`) and
/// what the dry-run rules before it would have decided.
pub type Decided = (PolicyDecision, String, Vec<(PolicyDecision, String)>);

/// Most rules a document may hold.
pub const MAX_RULES: usize = 256;
/// Longest expression, in bytes.
pub const MAX_EXPR_BYTES: usize = 4096;

/// The CEL standard environment, built once.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));

struct Rule {
    id: String,
    program: Program,
    decision: PolicyDecision,
    dry_run: bool,
}

/// A compiled policy, ready to evaluate.
pub struct Policy {
    rules: Vec<Rule>,
    default: Option<PolicyDecision>,
    doc: PolicyDoc,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("doc", &self.doc).finish()
    }
}

/// The outcome of evaluating a policy for one hop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The decision.
    pub decision: PolicyDecision,
    /// The deciding rule's id, or `default`.
    pub rule: String,
    /// Per rule evaluated (in order, up to the deciding one): id, result or error, and
    /// `dry_run: true` for a rule in dry-run mode.
    pub trace: Vec<Value>,
    /// What the dry-run rules evaluated before the deciding one would have decided, in order
    /// (an expression that failed would have denied).
    pub would: Vec<(PolicyDecision, String)>,
}

/// Whether a [`Policy::compile`] error is a name the hop's facts do not have (an attribute, a
/// member or an operation): the admin API answers it with 422.
pub fn is_unknown_name(error: &str) -> bool {
    ["unknown attribute", "unknown member", "unknown operation"]
        .iter()
        .any(|k| error.contains(k))
}

/// The attributes of a sample hop: the members every attribute has (`crate::governance::policy_names`).
static SAMPLE: LazyLock<Value> =
    LazyLock::new(|| sample_facts("", &serde_json::Map::new()).unwrap_or_default());

impl Policy {
    /// Validates and compiles a document: unique non-empty ids, bounded sizes, every
    /// expression parses and names only the hop's attributes.
    pub fn compile(doc: PolicyDoc) -> Result<Policy, String> {
        if doc.rules.len() > MAX_RULES {
            return Err(format!("at most {MAX_RULES} rules"));
        }
        let mut rules = Vec::with_capacity(doc.rules.len());
        let mut seen = std::collections::HashSet::new();
        for (i, r) in doc.rules.iter().enumerate() {
            let at = format!("rules[{i}]");
            if r.id.trim().is_empty() || r.id.len() > 128 {
                return Err(format!("{at}.id: must be 1 to 128 characters"));
            }
            if !seen.insert(r.id.clone()) {
                return Err(format!("{at}.id: duplicate id {:?}", r.id));
            }
            if r.when.len() > MAX_EXPR_BYTES {
                return Err(format!("{at}.when: longer than {MAX_EXPR_BYTES} bytes"));
            }
            let program = ENV
                .compile(&r.when)
                .map_err(|e| format!("{at}.when: {e}"))?;
            let squeezed: String = r.when.chars().filter(|c| !c.is_whitespace()).collect();
            for var in program.references().variables() {
                // A macro's own variable (`key.scopes.exists(s, s == 'a2a:send')`) is not an
                // attribute.
                let bound = ["all", "exists", "exists_one", "map", "filter"]
                    .iter()
                    .any(|m| squeezed.contains(&format!(".{m}({var},")));
                if !bound && !ATTRIBUTES.contains(&var) {
                    return Err(format!(
                        "{at}.when: unknown attribute {var:?} (known: {})",
                        ATTRIBUTES.join(", ")
                    ));
                }
            }
            super::policy_names::check(program.expression(), &SAMPLE, &at)?;
            rules.push(Rule {
                id: r.id.clone(),
                program,
                decision: r.decision,
                dry_run: r.dry_run,
            });
        }
        Ok(Policy {
            rules,
            default: doc.default,
            doc,
        })
    }

    /// Parses and compiles a JSON document.
    pub fn from_json(text: &str) -> Result<Policy, String> {
        let doc: PolicyDoc = serde_json::from_str(text).map_err(|e| format!("policy: {e}"))?;
        Policy::compile(doc)
    }

    /// The document this policy was compiled from.
    pub fn doc(&self) -> &PolicyDoc {
        &self.doc
    }

    /// Evaluates the rules in order over `facts` (see [`facts`]); `operator_default` decides
    /// when no rule matches and the document names no default. The outcome's trace says what
    /// each rule evaluated to (for explain); a hop needs only [`Policy::decide`].
    pub fn evaluate(&self, facts: &Value, operator_default: PolicyDecision) -> Outcome {
        let mut trace = Vec::new();
        let (decision, rule, would) = self.run(facts, operator_default, Some(&mut trace));
        Outcome {
            decision,
            rule,
            trace,
            would,
        }
    }

    /// [`Policy::evaluate`] without the trace: the decision, the deciding rule's id (or
    /// `default`) and what the dry-run rules before it would have decided.
    pub fn decide(&self, facts: &Value, operator_default: PolicyDecision) -> Decided {
        self.run(facts, operator_default, None)
    }

    fn run(
        &self,
        facts: &Value,
        operator_default: PolicyDecision,
        mut trace: Option<&mut Vec<Value>>,
    ) -> Decided {
        let mut ctx = Context::with_env(ENV.clone());
        if let Some(obj) = facts.as_object() {
            for (k, v) in obj {
                match cel::to_value(v) {
                    Ok(v) => ctx.add_variable_from_value(k.as_str(), v),
                    Err(_) => continue,
                }
            }
        }
        let mut note = |entry: Value| {
            if let Some(t) = trace.as_deref_mut() {
                t.push(entry);
            }
        };
        let mut would = Vec::new();
        for rule in &self.rules {
            let (mut entry, decided) = match rule.program.execute(&ctx) {
                Ok(cel::Value::Bool(true)) => {
                    (json!({"id": rule.id, "result": true}), Some(rule.decision))
                }
                Ok(cel::Value::Bool(false)) => (json!({"id": rule.id, "result": false}), None),
                // A rule that does not give a bool, or fails, denies (and says why).
                Ok(other) => (
                    json!({"id": rule.id, "error": format!("not a bool: {other:?}")}),
                    Some(PolicyDecision::Deny),
                ),
                Err(e) => (
                    json!({"id": rule.id, "error": e.to_string()}),
                    Some(PolicyDecision::Deny),
                ),
            };
            if rule.dry_run {
                entry["dry_run"] = json!(true);
            }
            note(entry);
            match decided {
                Some(d) if rule.dry_run => would.push((d, rule.id.clone())),
                Some(d) => return (d, rule.id.clone(), would),
                None => {}
            }
        }
        (
            self.default.unwrap_or(operator_default),
            "default".into(),
            would,
        )
    }
}

/// The attributes a policy sees (the CEL variables).
pub const ATTRIBUTES: &[&str] = &[
    "workspace",
    "key",
    "agent",
    "operation",
    "skill",
    "declared_skill",
    "declared_skill_on_card",
    "version",
    "binding",
    "message",
    "pii",
    "pii_total",
    "chain",
    "time",
];

/// What the hop looks like to a policy, as a JSON object of [`ATTRIBUTES`]:
/// - `workspace` (string), `key` `{id, scopes}`, `agent` `{id, skills}` (the card's skills),
///   `operation` (1.0 name, `SendMessage`), `declared_skill` ([`declared_skill`]: the caller's
///   claim, `""` when none; `skill` is the same value under its former name),
///   `declared_skill_on_card` (the declared skill is a skill id of the peer's card), `version`
///   (`0.3`/`1.0`), `binding` (`JSONRPC`/`HTTP+JSON`/`GRPC`);
/// - `message` `{bytes, text_chars, parts, part_kinds}` (`bytes`: the whole request's JSON,
///   metadata and configuration included; `part_kinds` ⊂ text, data, file, where `file` is a
///   part with bytes or a URL in either version; zero and empty for operations without a
///   message);
/// - `pii` (map type → count, every type present, 0 when none found), `pii_total`;
/// - `chain` `{depth, agents}`: `agents` already visited (`workspace/agent`, oldest first),
///   `depth` this hop's depth (1 for a call that is not a delegation); `time` `{unix, hour, weekday}` (UTC;
///   weekday 0 = Sunday).
pub fn facts(
    hop: &crate::governance::step::Hop,
    params: &Value,
    ev: &crate::governance::step::Evidence,
) -> Value {
    let msg = params.get("message");
    let parts = msg
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // The 1.0 form: a file is a part with `raw` or `url` (a 0.3 `file` part arrives as one).
    let mut kinds: Vec<&str> = Vec::new();
    for p in parts {
        let kind = if p.get("text").is_some() {
            "text"
        } else if p.get("data").is_some() {
            "data"
        } else if ["raw", "url", "file"].iter().any(|k| p.get(k).is_some()) {
            "file"
        } else {
            continue;
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let skill = declared_skill(params);
    let on_card = !skill.is_empty() && hop.card_skills.iter().any(|s| s == skill);
    let mut pii = serde_json::Map::new();
    for k in crate::pii::PiiKind::ALL {
        pii.insert(
            k.name().into(),
            json!(ev.pii.get(k.name()).copied().unwrap_or(0)),
        );
    }
    let now = time::OffsetDateTime::now_utc();
    json!({
        "workspace": hop.workspace_id,
        "key": {"id": hop.key_id, "scopes": hop.scopes},
        "agent": {"id": hop.target, "skills": hop.card_skills},
        "operation": hop.operation.name_10(),
        "skill": skill,
        "declared_skill": skill,
        "declared_skill_on_card": on_card,
        "version": hop.version.as_str(),
        "binding": hop.binding.as_str(),
        "message": {
            // Every member of the request (message, configuration, metadata).
            "bytes": if msg.is_some() { params.to_string().len() } else { 0 },
            "text_chars": crate::protocol::xlate::message_text_chars(params),
            "parts": parts.len(),
            "part_kinds": kinds,
        },
        "pii": pii,
        "pii_total": ev.pii.values().sum::<u32>(),
        "chain": {"depth": hop.chain.len() + 1, "agents": hop.chain},
        "time": {
            "unix": now.unix_timestamp(),
            "hour": now.hour(),
            "weekday": now.weekday().number_days_from_sunday(),
        },
    })
}

/// The skill the caller declares: `metadata.skill` of the message, else of the request; `""`
/// when none. A claim of the caller, not something the gateway can verify.
pub fn declared_skill(params: &Value) -> &str {
    fn of(v: Option<&Value>) -> Option<&str> {
        v.and_then(|v| v.get("metadata"))
            .and_then(|m| m.get("skill"))
            .and_then(Value::as_str)
    }
    of(params.get("message")).or(of(Some(params))).unwrap_or("")
}

/// Whether a send carries an inline push notification config (1.0 form): such a send is also
/// evaluated as `CreateTaskPushNotificationConfig`.
pub fn carries_push_config(params: &Value) -> bool {
    params
        .get("configuration")
        .and_then(|c| c.get("taskPushNotificationConfig"))
        .is_some_and(|c| !c.is_null())
}

/// The attributes of a plain 1.0 JSON-RPC SendMessage in `workspace`, with `overrides` (any of
/// [`ATTRIBUTES`]; objects are merged member by member) on top: the hop an explain evaluates.
pub fn sample_facts(
    workspace: &str,
    overrides: &serde_json::Map<String, Value>,
) -> Result<Value, String> {
    let hop = crate::governance::step::Hop {
        trace_id: String::new(),
        workspace_id: workspace.to_owned(),
        key_id: String::new(),
        scopes: Vec::new(),
        target: String::new(),
        operation: crate::protocol::ops::Operation::SendMessage,
        version: crate::protocol::errors::Version::V1,
        binding: crate::protocol::errors::Binding::JsonRpc,
        card_skills: Vec::new(),
        chain: Vec::new(),
    };
    let mut facts = super::policy::facts(&hop, &json!({}), &Default::default());
    for (k, v) in overrides {
        if k == "workspace" {
            continue; // always the explained workspace
        }
        if !ATTRIBUTES.contains(&k.as_str()) {
            return Err(format!("hop.{k}: unknown attribute"));
        }
        match (facts.get_mut(k), v) {
            (Some(Value::Object(base)), Value::Object(over)) => {
                base.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())))
            }
            (Some(slot), v) => *slot = v.clone(),
            (None, _) => {}
        }
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example document of docs/gateway/governance.md ("Policy") compiles: its names all exist.
    #[test]
    fn the_docs_example_policy_compiles() {
        let doc = include_str!("../../../docs/gateway/governance.md");
        let start = doc
            .find("{\"default\": \"allow\",\n \"rules\": [\n   {\"id\": \"no-secrets-out\"")
            .expect("docs/gateway/governance.md has the example policy");
        let end = doc[start..].find("\n```").expect("the example ends") + start;
        let p = Policy::from_json(&doc[start..end]);
        assert!(p.is_ok(), "{:?}", p.err());
        assert_eq!(p.map(|p| p.doc().rules.len()).unwrap_or(0), 7);
    }

    #[test]
    fn unknown_members_and_operations_are_refused_at_compile() {
        let rule = |when: &str| {
            Policy::compile(PolicyDoc {
                default: None,
                rules: vec![RuleDoc {
                    id: "r".into(),
                    when: when.into(),
                    decision: PolicyDecision::Deny,
                    dry_run: false,
                }],
            })
            .map(|_| ())
        };
        let e = rule("agent.idd == 1").unwrap_err();
        assert!(e.contains("unknown member agent.idd"), "{e}");
        assert!(e.contains("known members of agent: id, skills"), "{e}");
        let e = rule("size(key.scopes) > 0 && message.bites > 10").unwrap_err();
        assert!(e.contains("unknown member message.bites"), "{e}");
        let e = rule("pii.EMIAL > 0").unwrap_err();
        assert!(e.contains("unknown member pii.EMIAL"), "{e}");
        let e = rule("operation == 'SendMesage'").unwrap_err();
        assert!(e.contains("unknown operation \"SendMesage\""), "{e}");
        let e = rule("'GetTaks' == operation").unwrap_err();
        assert!(e.contains("GetTaks"), "{e}");
        let e = rule("operation in ['GetTask', 'message/send']").unwrap_err();
        assert!(e.contains("message/send"), "{e}");
        assert!(is_unknown_name(&e));
        // The names that exist, including the module documentation's example rules.
        for ok in [
            "pii.SECRET > 0",
            "agent.id == 'billing' && message.bytes > 10000",
            "skill == 'research'",
            "operation in ['SendMessage', 'SendStreamingMessage'] && has(message.part_kinds)",
            "key.scopes.exists(s, s == 'a2a:send') && time.hour < 8 && chain.depth > 1",
        ] {
            assert_eq!(rule(ok), Ok(()), "{ok}");
        }
        assert!(!is_unknown_name("rules[0].when: syntax error"));
    }

    #[test]
    fn compile_rejects_bad_documents() {
        let bad = |t: &str| Policy::from_json(t).unwrap_err();
        assert!(
            bad(r#"{"rules":[{"id":"a","when":"1 +","decision":"deny"}]}"#)
                .contains("rules[0].when")
        );
        assert!(
            bad(r#"{"rules":[{"id":"a","when":"nope == 1","decision":"deny"}]}"#)
                .contains("unknown attribute")
        );
        assert!(bad(r#"{"rules":[{"id":"a","when":"true","decision":"deny"},{"id":"a","when":"true","decision":"allow"}]}"#).contains("duplicate"));
        assert!(
            bad(r#"{"rules":[{"id":"a","when":"true","decision":"maybe"}]}"#).contains("policy")
        );
        assert!(bad(r#"{"rulez":[]}"#).contains("unknown field"));
    }

    #[test]
    fn macros_and_membership_compile() {
        let p = Policy::from_json(
            r#"{"rules":[{"id":"a","when":"key.scopes.exists(s, s == 'a2a:send') && 'x' in agent.skills && 'text' in message.part_kinds","decision":"deny"}]}"#,
        )
        .unwrap();
        let f = json!({"key": {"scopes": ["a2a:send"]}, "agent": {"skills": ["x"]}, "message": {"part_kinds": ["text"]}});
        assert_eq!(
            p.evaluate(&f, PolicyDecision::Allow).decision,
            PolicyDecision::Deny
        );
    }

    #[test]
    fn dry_run_rules_record_without_deciding() {
        let p = Policy::from_json(
            r#"{"default": "allow", "rules":[
                {"id":"try-deny","when":"message.bytes > 10","decision":"deny","dry_run":true},
                {"id":"try-broken","when":"message.bytes > 'ten'","decision":"allow","dry_run":true},
                {"id":"quiet","when":"message.bytes > 1000","decision":"deny","dry_run":true},
                {"id":"real","when":"message.bytes > 100","decision":"approve"}]}"#,
        )
        .unwrap();
        let f = json!({"message": {"bytes": 50}});
        let (d, rule, would) = p.decide(&f, PolicyDecision::Deny);
        assert_eq!((d, rule.as_str()), (PolicyDecision::Allow, "default"));
        assert_eq!(
            would,
            vec![
                (PolicyDecision::Deny, "try-deny".to_string()),
                (PolicyDecision::Deny, "try-broken".to_string()),
            ]
        );
        let o = p.evaluate(&json!({"message": {"bytes": 500}}), PolicyDecision::Allow);
        assert_eq!(
            (o.decision, o.rule.as_str()),
            (PolicyDecision::Approve, "real")
        );
        assert_eq!(o.trace.len(), 4);
        assert_eq!(o.trace[0]["dry_run"], json!(true));
        // Saved and read back, the mode stays; an enforcing rule does not show the member.
        let text = serde_json::to_string(p.doc()).unwrap();
        assert!(text.contains(r#""dry_run":true"#), "{text}");
        assert_eq!(text.matches("dry_run").count(), 3, "{text}");
    }

    #[test]
    fn first_match_decides_errors_deny() {
        let p = Policy::from_json(
            r#"{"rules":[
                {"id":"big","when":"message.bytes > 10","decision":"approve"},
                {"id":"typo","when":"message.bytes > 'ten'","decision":"allow"}]}"#,
        )
        .unwrap();
        let f = json!({"message": {"bytes": 11}, "agent": {"id": "a"}});
        let o = p.evaluate(&f, PolicyDecision::Allow);
        assert_eq!(
            (o.decision, o.rule.as_str()),
            (PolicyDecision::Approve, "big")
        );
        let f = json!({"message": {"bytes": 1}, "agent": {"id": "a"}});
        let o = p.evaluate(&f, PolicyDecision::Allow);
        assert_eq!(
            (o.decision, o.rule.as_str()),
            (PolicyDecision::Deny, "typo")
        );
        let empty = Policy::from_json(r#"{"rules":[]}"#).unwrap();
        assert_eq!(
            empty.evaluate(&f, PolicyDecision::Deny).decision,
            PolicyDecision::Deny
        );
    }
}
