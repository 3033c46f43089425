//! A workspace's policy rules: the rules as a form (one row per rule: id, CEL condition,
//! decision, dry run, remove; a blank row adds one), saved with the admin API's save-time
//! validation (its message shown beside the rule it names), an explain of a sample request over
//! the rules in the form (saved or not: `policy:explain`), and the dry-run rules' results over
//! the workspace's recent hops (their `policy_dry_run` evidence). The form's parsing is
//! `policy_form`, the explain and dry-run views `policy_view`.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::{Value, json};

use super::super::backend::{Refused, admin, seg};
use super::super::html::{csrf_field, esc, notice};
use super::super::workspaces::Flash;
use super::super::{Operator, admin_refusal, ws_href};
use super::policy_form::{PolicyForm, RuleRow, parse, rule_of};
use super::policy_view::{dry_run_results, explain_view};
use super::{options, refused_status, require_ws, ws_page};
use crate::state::GatewayState;

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

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let top = q.notice(&[
        ("saved", "Policy saved: it governs the next hop."),
        ("deleted", "Policy deleted: the operator's default decides."),
    ]);
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
<td><label class="inline"><input type="checkbox" name="dry.{i}" value="1"{dry} aria-label="{label}: dry run"> dry run</label></td>
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
                    r#"<label class="inline"><input type="checkbox" name="remove.{i}" value="1" aria-label="{label}: remove"> remove</label>"#
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
