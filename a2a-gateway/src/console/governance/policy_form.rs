//! The policy page's form: the rule rows and the explain sample as posted, the policy document
//! they describe, and the rule a validation message names.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{field, pairs};
use crate::governance::policy::MAX_RULES;

/// One rule row of the form.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RuleRow {
    pub id: String,
    pub when: String,
    pub decision: String,
    pub dry_run: bool,
    pub remove: bool,
}

/// The sample request of an explain.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sample {
    pub agent: String,
    pub skill: String,
    pub operation: String,
    /// More attributes, as a JSON object.
    pub extra: String,
}

/// The policy form as posted.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PolicyForm {
    /// `""` (the operator's default) or a decision.
    pub default: String,
    /// The rules kept (blank and removed rows dropped), in the form's order.
    pub rules: Vec<RuleRow>,
    /// `save` or `explain`.
    pub action: String,
    pub sample: Sample,
}

/// Parses the posted form: rows are `id.N`, `when.N`, `decision.N`, `dry.N`, `remove.N`
/// (N up to [`MAX_RULES`]); a row without id and condition, or marked remove, is dropped.
pub(crate) fn parse(body: &[u8]) -> PolicyForm {
    let p = pairs(body);
    let mut rows: BTreeMap<usize, RuleRow> = BTreeMap::new();
    for (k, v) in &p {
        let Some((name, n)) = k.split_once('.') else {
            continue;
        };
        let Ok(n) = n.parse::<usize>() else { continue };
        if n > MAX_RULES {
            continue;
        }
        let row = rows.entry(n).or_default();
        match name {
            "id" => row.id = v.trim().to_owned(),
            "when" => row.when = v.trim().to_owned(),
            "decision" => row.decision = v.trim().to_owned(),
            "dry" => row.dry_run = !v.is_empty(),
            "remove" => row.remove = !v.is_empty(),
            _ => {}
        }
    }
    PolicyForm {
        default: field(&p, "default"),
        rules: rows
            .into_values()
            .filter(|r| !(r.remove || (r.id.is_empty() && r.when.is_empty())))
            .collect(),
        action: field(&p, "do"),
        sample: Sample {
            agent: field(&p, "x_agent"),
            skill: field(&p, "x_skill"),
            operation: field(&p, "x_operation"),
            extra: field(&p, "x_extra"),
        },
    }
}

impl PolicyForm {
    /// The policy document the form describes.
    pub(crate) fn doc(&self) -> Value {
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|r| {
                let mut v = json!({"id": r.id, "when": r.when, "decision": r.decision});
                if r.dry_run {
                    v["dry_run"] = json!(true);
                }
                v
            })
            .collect();
        let mut doc = json!({"rules": rules});
        if !self.default.is_empty() {
            doc["default"] = json!(self.default);
        }
        doc
    }

    /// The form of a stored document.
    pub(crate) fn of_doc(doc: &Value) -> PolicyForm {
        let rules = doc["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| RuleRow {
                id: r["id"].as_str().unwrap_or_default().to_owned(),
                when: r["when"].as_str().unwrap_or_default().to_owned(),
                decision: r["decision"].as_str().unwrap_or_default().to_owned(),
                dry_run: r["dry_run"].as_bool().unwrap_or(false),
                remove: false,
            })
            .collect();
        PolicyForm {
            default: doc["default"].as_str().unwrap_or_default().to_owned(),
            rules,
            ..Default::default()
        }
    }
}

impl Sample {
    /// The `hop` attributes of an explain request.
    pub(crate) fn hop(&self) -> Result<Map<String, Value>, String> {
        let mut hop =
            if self.extra.is_empty() {
                Map::new()
            } else {
                match serde_json::from_str::<Value>(&self.extra) {
                    Ok(Value::Object(o)) => o,
                    _ => return Err(
                        "More attributes: a JSON object, such as {\"message\": {\"bytes\": 200}}."
                            .into(),
                    ),
                }
            };
        if !self.agent.is_empty() {
            hop.insert("agent".into(), json!({"id": self.agent}));
        }
        if !self.skill.is_empty() {
            hop.insert("declared_skill".into(), json!(self.skill));
            hop.insert("skill".into(), json!(self.skill));
        }
        if !self.operation.is_empty() {
            hop.insert("operation".into(), json!(self.operation));
        }
        Ok(hop)
    }
}

/// The rule a validation message names (`rules[2].when: ...` is rule 2).
pub(crate) fn rule_of(message: &str) -> Option<usize> {
    let at = message.find("rules[")? + "rules[".len();
    let end = message[at..].find(']')? + at;
    message[at..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_the_document_in_order() {
        let body = "csrf=t&id.1=b&when.1=true&decision.1=allow&id.0=a&when.0=skill+%3D%3D+%27x%27\
            &decision.0=deny&dry.0=1&id.2=gone&when.2=true&decision.2=deny&remove.2=1\
            &id.3=&when.3=&decision.3=deny&default=allow&do=save&id.9999=far&when.9999=true";
        let f = parse(body.as_bytes());
        assert_eq!(f.action, "save");
        assert_eq!(
            f.doc(),
            json!({"default": "allow", "rules": [
                {"id": "a", "when": "skill == 'x'", "decision": "deny", "dry_run": true},
                {"id": "b", "when": "true", "decision": "allow"}]})
        );
        assert_eq!(parse(b"do=save").doc(), json!({"rules": []}));
    }

    #[test]
    fn the_sample_becomes_hop_attributes() {
        let s = Sample {
            agent: "billing".into(),
            skill: "refund".into(),
            operation: "CancelTask".into(),
            extra: r#"{"message": {"bytes": 5}}"#.into(),
        };
        let hop = s.hop().unwrap();
        assert_eq!(hop["agent"], json!({"id": "billing"}));
        assert_eq!(hop["declared_skill"], "refund");
        assert_eq!(hop["operation"], "CancelTask");
        assert_eq!(hop["message"]["bytes"], 5);
        let bad = Sample {
            extra: "[1]".into(),
            ..Default::default()
        };
        assert!(bad.hop().is_err());
    }

    #[test]
    fn a_message_names_its_rule() {
        assert_eq!(rule_of("rules[2].when: Syntax error"), Some(2));
        assert_eq!(rule_of("policy: expected value"), None);
        assert_eq!(rule_of("rules[x]"), None);
    }
}
