//! A workspace's policy rules: the rules as a form (one row per rule: id, CEL condition,
//! decision, dry run, remove; a blank row adds one), saved with the admin API's save-time
//! validation (its message shown beside the rule it names), an explain of a sample request over
//! the rules in the form (saved or not: `policy:explain`), and the dry-run rules' results over
//! the workspace's recent hops (their `policy_dry_run` evidence).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::{Map, Value, json};

use super::super::backend::{Refused, admin, seg};
use super::super::html::{csrf_field, esc, notice};
use super::super::{Operator, admin_refusal, ws_href};
use super::{field, options, pairs, refused_status, require_ws, ws_page};
use crate::governance::policy::MAX_RULES;
use crate::state::GatewayState;
use crate::store::HopFilter;
use crate::store::backend::AuditStore;

/// Recent hops the dry-run results are read from.
const DRY_RUN_HOPS: i64 = 500;

const DECISIONS: [(&str, &str); 4] = [
    ("allow", "allow"),
    ("deny", "deny"),
    ("approve", "approve (hold for a person)"),
    ("redact", "redact PII"),
];

/// Operations offered in the explain form (the 1.0 names policies compare with).
const OPERATIONS: [&str; 10] = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
];

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
    fn of_doc(doc: &Value) -> PolicyForm {
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

/// `?ok=` notices of this page.
#[derive(serde::Deserialize, Default)]
pub(crate) struct Flash {
    ok: Option<String>,
}

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let top = match q.ok.as_deref() {
        Some("saved") => notice("Policy saved: it governs the next hop.", false),
        Some("deleted") => notice("Policy deleted: the operator's default decides.", false),
        _ => String::new(),
    };
    let form = match saved(&st, &ws).await {
        Ok(Some(doc)) => PolicyForm::of_doc(&doc),
        Ok(None) => PolicyForm::default(),
        Err(r) => return render(&st, &op, &ws, &PolicyForm::default(), Shown::Refused(&r)).await,
    };
    render(&st, &op, &ws, &form, Shown::Top(&top)).await
}

/// The saved document, `None` when the workspace has none.
async fn saved(st: &Arc<GatewayState>, ws: &str) -> Result<Option<Value>, Refused> {
    let path = format!("/admin/workspaces/{}/policy", seg(ws));
    match admin(st, Method::GET, &path, None).await {
        Ok(v) => Ok(Some(v)),
        Err(r) if r.status == 404 && r.message.contains("has no policy") => Ok(None),
        Err(r) => Err(r),
    }
}

/// What the page shows above or beside the form.
enum Shown<'a> {
    Top(&'a str),
    Refused(&'a Refused),
    /// A save refused: the message, beside the rule it names.
    Invalid(&'a Refused),
    Explained(&'a Value),
}

pub(crate) async fn submit(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let form = parse(&body);
    if form.action == "explain" {
        let hop = match form.sample.hop() {
            Ok(h) => h,
            Err(m) => {
                let r = Refused {
                    status: 400,
                    message: m,
                };
                return render(&st, &op, &ws, &form, Shown::Refused(&r)).await;
            }
        };
        let path = format!("/admin/workspaces/{}/policy:explain", seg(&ws));
        let req = json!({"policy": form.doc(), "hop": hop});
        return match admin(&st, Method::POST, &path, Some(&req)).await {
            Ok(v) => render(&st, &op, &ws, &form, Shown::Explained(&v)).await,
            Err(r) => render(&st, &op, &ws, &form, Shown::Invalid(&r)).await,
        };
    }
    let path = format!("/admin/workspaces/{}/policy", seg(&ws));
    match admin(&st, Method::PUT, &path, Some(&form.doc())).await {
        Ok(_) => Redirect::to(&format!("{}/policy?ok=saved", ws_href(&ws))).into_response(),
        Err(r) => render(&st, &op, &ws, &form, Shown::Invalid(&r)).await,
    }
}

pub(crate) async fn delete(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
) -> Response {
    let path = format!("/admin/workspaces/{}/policy", seg(&ws));
    match admin(&st, Method::DELETE, &path, None).await {
        Ok(_) => Redirect::to(&format!("{}/policy?ok=deleted", ws_href(&ws))).into_response(),
        Err(r) => render(&st, &op, &ws, &PolicyForm::default(), Shown::Refused(&r)).await,
    }
}

async fn render(
    st: &Arc<GatewayState>,
    op: &Operator,
    ws: &str,
    form: &PolicyForm,
    shown: Shown<'_>,
) -> Response {
    let title = format!("Policy of {ws}");
    if let Err(p) = require_ws(st, op, ws, &title).await {
        return p;
    }
    let (status, top, bad_rule) = match &shown {
        Shown::Top(t) => (StatusCode::OK, (*t).to_owned(), None),
        Shown::Refused(r) => (refused_status(r), admin_refusal(r), None),
        Shown::Invalid(r) => match rule_of(&r.message) {
            Some(i) if i < form.rules.len() => (
                refused_status(r),
                notice(
                    &format!("Not saved: rule {} is refused (see beside it).", i + 1),
                    true,
                ),
                Some((i, r.message.clone())),
            ),
            _ => (refused_status(r), admin_refusal(r), None),
        },
        Shown::Explained(_) => (StatusCode::OK, String::new(), None),
    };
    let mut rows = String::new();
    let blank = RuleRow {
        decision: "deny".into(),
        ..Default::default()
    };
    for (i, r) in form.rules.iter().chain(std::iter::once(&blank)).enumerate() {
        let new = i == form.rules.len();
        let err = bad_rule.as_ref().filter(|(at, _)| *at == i);
        let described = if err.is_some() {
            format!(r#" aria-invalid="true" aria-describedby="rule-error-{i}""#)
        } else {
            String::new()
        };
        let label = if new {
            "New rule".to_owned()
        } else {
            format!("Rule {}", i + 1)
        };
        rows.push_str(&format!(
            r#"<tr data-rule="{i}"{cls}><th scope="row">{label}</th>
<td><label class="sr" for="id-{i}">{label}: id</label><input id="id-{i}" name="id.{i}" value="{id}" maxlength="128"{described}></td>
<td><label class="sr" for="when-{i}">{label}: condition (CEL)</label><textarea id="when-{i}" name="when.{i}" rows="2" class="mono"{described}>{when}</textarea></td>
<td><label class="sr" for="decision-{i}">{label}: decision</label><select id="decision-{i}" name="decision.{i}">{decisions}</select></td>
<td><label class="inline"><input type="checkbox" name="dry.{i}" value="1"{dry}> dry run</label></td>
<td>{remove}</td></tr>"#,
            cls = if err.is_some() { r#" class="invalid""# } else { "" },
            id = esc(&r.id),
            when = esc(&r.when),
            decisions = options(&DECISIONS, &r.decision),
            dry = if r.dry_run { " checked" } else { "" },
            remove = if new {
                String::new()
            } else {
                format!(
                    r#"<label class="inline"><input type="checkbox" name="remove.{i}" value="1"> remove</label>"#
                )
            },
        ));
        if let Some((_, m)) = err {
            rows.push_str(&format!(
                r#"<tr class="rule-error"><td></td><td colspan="5"><div class="error" role="alert" id="rule-error-{i}">{}</div></td></tr>"#,
                esc(m)
            ));
        }
    }
    let default_label = format!(
        "the operator's default ({})",
        st.config().governance().policy_default.as_str()
    );
    let defaults = [
        ("", default_label.as_str()),
        ("allow", "allow"),
        ("deny", "deny"),
        ("approve", "approve"),
        ("redact", "redact"),
    ];
    let ops: Vec<(&str, &str)> = std::iter::once(("", "SendMessage (default)"))
        .chain(OPERATIONS.iter().map(|o| (*o, *o)))
        .collect();
    let explained = match &shown {
        Shown::Explained(v) => explain_view(v),
        _ => String::new(),
    };
    let body = format!(
        r#"{top}{explained}
<p class="hint">Rules are tried in order; the first whose condition is true decides. Conditions are
CEL over the hop's attributes (<code>agent.id</code>, <code>declared_skill</code>, <code>operation</code>,
<code>message.bytes</code>, <code>pii.EMAIL</code>, <code>key.scopes</code>, <code>chain.depth</code>,
<code>time.hour</code> ...). A dry-run rule only records what it would decide.</p>
<form method="post" action="{h}/policy" id="policy-form">{csrf}
<div class="scroll"><table id="rules"><caption>Rules, in order</caption>
<thead><tr><th scope="col">#</th><th scope="col">Id</th><th scope="col">Condition (CEL)</th><th scope="col">Decision</th><th scope="col">Dry run</th><th scope="col">Remove</th></tr></thead>
<tbody>{rows}</tbody></table></div>
<label for="default">When no rule matches</label>
<select id="default" name="default">{defaults}</select>
<p><button type="submit" name="do" value="save">Save policy</button></p>
<fieldset class="sample"><legend>Explain a sample request (with the rules above, saved or not)</legend>
<p class="hint">A plain SendMessage of this workspace, with what you fill in on top.</p>
<div class="filters">
<div><label for="x-agent">Agent id</label><input id="x-agent" name="x_agent" value="{xa}"></div>
<div><label for="x-skill">Declared skill</label><input id="x-skill" name="x_skill" value="{xs}"></div>
<div><label for="x-operation">Operation</label><select id="x-operation" name="x_operation">{ops}</select></div>
</div>
<label for="x-extra">More attributes (JSON object, optional)</label>
<textarea id="x-extra" name="x_extra" rows="2" class="mono" placeholder='{{"message": {{"bytes": 200000}}, "pii": {{"EMAIL": 1}}}}'>{xe}</textarea>
<p><button type="submit" name="do" value="explain" class="secondary">Explain</button></p>
</fieldset>
</form>
{dry}
<section aria-labelledby="delete-policy"><h2 id="delete-policy">Delete the policy</h2>
<form method="post" action="{h}/policy/delete">{csrf}<p class="hint">Without a policy the operator's default decides every hop.</p>
<button type="submit" class="danger">Delete policy</button></form></section>"#,
        h = esc(&ws_href(ws)),
        csrf = csrf_field(&op.csrf),
        defaults = options(&defaults, &form.default),
        xa = esc(&form.sample.agent),
        xs = esc(&form.sample.skill),
        ops = options(&ops, &form.sample.operation),
        xe = esc(&form.sample.extra),
        dry = dry_run_results(st, ws, form).await,
    );
    ws_page(op, ws, "Policy", &title, status, &body)
}

/// An explain answer: the decision, the deciding rule and each rule's result.
fn explain_view(v: &Value) -> String {
    let mut rows = String::new();
    for t in v["trace"].as_array().into_iter().flatten() {
        let result = match (t.get("result"), t.get("error")) {
            (_, Some(e)) if !e.is_null() => format!(
                r#"<span class="bad">error: {}</span>"#,
                esc(e.as_str().unwrap_or_default())
            ),
            (Some(r), _) => esc(&r.to_string()),
            _ => "—".into(),
        };
        rows.push_str(&format!(
            r#"<tr><th scope="row"><code>{}</code></th><td>{result}</td><td>{}</td></tr>"#,
            esc(t["id"].as_str().unwrap_or_default()),
            if t["dry_run"].as_bool() == Some(true) {
                "yes"
            } else {
                ""
            }
        ));
    }
    if rows.is_empty() {
        rows.push_str(r#"<tr><td colspan="3">No rule was evaluated.</td></tr>"#);
    }
    let note = v["note"]
        .as_str()
        .map(|n| format!(r#"<p class="hint">{}</p>"#, esc(n)))
        .unwrap_or_default();
    format!(
        r#"<section aria-labelledby="explained" id="explain-result"><h2 id="explained">Explained (nothing saved)</h2>
<div class="notice" role="status">Decision <strong class="decision-{d}">{d}</strong> by rule <code>{r}</code>.</div>{note}
<div class="scroll"><table><caption>Each rule's result, in order (evaluation stops at the deciding rule)</caption>
<thead><tr><th scope="col">Rule</th><th scope="col">Condition result</th><th scope="col">Dry run</th></tr></thead>
<tbody>{rows}</tbody></table></div></section>"#,
        d = esc(v["decision"].as_str().unwrap_or_default()),
        r = esc(v["rule"].as_str().unwrap_or_default()),
    )
}

/// What the dry-run rules recorded over the workspace's recent hops.
async fn dry_run_results(st: &GatewayState, ws: &str, form: &PolicyForm) -> String {
    let f = HopFilter {
        workspace: Some(ws.to_owned()),
        ..Default::default()
    };
    let hops = match st.audit.hop_page(&f, None, DRY_RUN_HOPS).await {
        Ok(h) => h,
        Err(e) => return notice(&format!("The hops could not be read: {e}"), true),
    };
    // rule -> (would-be decision -> count, newest hop)
    let mut seen: BTreeMap<String, (BTreeMap<String, u64>, i64)> = BTreeMap::new();
    for h in &hops {
        let decisions = h
            .governance
            .as_ref()
            .and_then(|g| g.get("decisions"))
            .and_then(Value::as_array);
        for d in decisions.into_iter().flatten() {
            if d["step"] != "policy_dry_run" {
                continue;
            }
            let rule = d["rule"].as_str().unwrap_or_default().to_owned();
            let e = seen.entry(rule).or_default();
            *e.0.entry(d["decision"].as_str().unwrap_or_default().to_owned())
                .or_default() += 1;
            e.1 = e.1.max(h.seq);
        }
    }
    let dry_rules: Vec<&str> = form
        .rules
        .iter()
        .filter(|r| r.dry_run)
        .map(|r| r.id.as_str())
        .collect();
    let mut rows = String::new();
    for (rule, (counts, newest)) in &seen {
        let would: Vec<String> = counts.iter().map(|(d, n)| format!("{d}: {n}")).collect();
        rows.push_str(&format!(
            r#"<tr><th scope="row"><code>{}</code></th><td>{}</td><td><a href="/console/hops/{newest}">hop {newest}</a></td></tr>"#,
            esc(rule),
            esc(&would.join(", ")),
        ));
    }
    for r in dry_rules.iter().filter(|r| !seen.contains_key(**r)) {
        rows.push_str(&format!(
            r#"<tr><th scope="row"><code>{}</code></th><td>no match yet</td><td>—</td></tr>"#,
            esc(r)
        ));
    }
    if rows.is_empty() {
        rows.push_str(r#"<tr><td colspan="3">No dry-run rule, and no dry-run evidence in these hops.</td></tr>"#);
    }
    format!(
        r#"<section aria-labelledby="dry-runs"><h2 id="dry-runs">Dry-run results</h2>
<div class="scroll"><table id="dry-run-results"><caption>What dry-run rules would have decided, over the last {n} hops of {wse} ({DRY_RUN_HOPS} at most)</caption>
<thead><tr><th scope="col">Rule</th><th scope="col">Would have decided (hops)</th><th scope="col">Newest</th></tr></thead>
<tbody>{rows}</tbody></table></div></section>"#,
        n = hops.len(),
        wse = esc(ws),
    )
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
