//! A workspace's PII rules: the action for each kind of finding (record, redact, block), the
//! action for the kinds not listed, and what is done with binary parts (`binary_parts`), saved
//! through `PUT /admin/workspaces/{ws}/pii`; deleting the rules turns scanning off.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::{Map, Value, json};

use super::super::backend::{Refused, admin, seg};
use super::super::html::{csrf_field, esc};
use super::super::workspaces::Flash;
use super::super::{Operator, admin_refusal, ws_href};
use super::{field, options, pairs, refused_status, require_ws, ws_page};
use crate::pii::PiiKind;
use crate::state::GatewayState;

const ACTIONS: [(&str, &str); 3] = [
    ("record", "record (count it, let it through)"),
    ("redact", "redact (replace it with [REDACTED:KIND])"),
    ("block", "block (refuse the request)"),
];

const BINARY: [(&str, &str); 4] = [
    (
        "",
        "automatic (refuse when a kind is blocked, else scan as text)",
    ),
    ("scan_as_text", "scan as text"),
    ("refuse", "refuse"),
    ("pass", "pass unread"),
];

/// The rules document a posted form describes: `default_action`, `kind.<KIND>` (empty: the
/// default action) and `binary_parts` (empty: automatic).
pub(crate) fn doc_of(body: &[u8]) -> Value {
    let p = pairs(body);
    let mut actions = Map::new();
    for k in PiiKind::ALL {
        let v = field(&p, &format!("kind.{}", k.name()));
        if !v.is_empty() {
            actions.insert(k.name().into(), json!(v));
        }
    }
    let default = field(&p, "default_action");
    let mut doc = json!({
        "default_action": if default.is_empty() { "record".to_owned() } else { default },
        "actions": actions,
    });
    let binary = field(&p, "binary_parts");
    if !binary.is_empty() {
        doc["binary_parts"] = json!(binary);
    }
    doc
}

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let top = q.notice(&[
        ("saved", "PII rules saved: they apply from the next hop."),
        ("deleted", "PII rules deleted: scanning is off."),
    ]);
    let path = format!("/admin/workspaces/{}/pii", seg(&ws));
    match admin(&st, Method::GET, &path, None).await {
        Ok(doc) => render(&st, &op, &ws, Some(&doc), StatusCode::OK, &top).await,
        Err(r) if r.status == 404 && r.message.contains("no PII rules") => {
            render(&st, &op, &ws, None, StatusCode::OK, &top).await
        }
        Err(r) => render(&st, &op, &ws, None, refused_status(&r), &admin_refusal(&r)).await,
    }
}

pub(crate) async fn save(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let doc = doc_of(&body);
    let path = format!("/admin/workspaces/{}/pii", seg(&ws));
    match admin(&st, Method::PUT, &path, Some(&doc)).await {
        Ok(_) => Redirect::to(&format!("{}/pii?ok=saved", ws_href(&ws))).into_response(),
        Err(r) => refused(&st, &op, &ws, Some(&doc), &r).await,
    }
}

pub(crate) async fn delete(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
) -> Response {
    let path = format!("/admin/workspaces/{}/pii", seg(&ws));
    match admin(&st, Method::DELETE, &path, None).await {
        Ok(_) => Redirect::to(&format!("{}/pii?ok=deleted", ws_href(&ws))).into_response(),
        Err(r) => refused(&st, &op, &ws, None, &r).await,
    }
}

async fn refused(
    st: &GatewayState,
    op: &Operator,
    ws: &str,
    doc: Option<&Value>,
    r: &Refused,
) -> Response {
    render(st, op, ws, doc, refused_status(r), &admin_refusal(r)).await
}

async fn render(
    st: &GatewayState,
    op: &Operator,
    ws: &str,
    doc: Option<&Value>,
    status: StatusCode,
    top: &str,
) -> Response {
    let title = format!("PII rules of {ws}");
    if let Err(p) = require_ws(st, op, ws, &title).await {
        return p;
    }
    let empty = json!({});
    let d = doc.unwrap_or(&empty);
    let state = if doc.is_some() {
        r#"<p id="pii-state">Scanning is <strong>on</strong>: requests, answers, stream events and push notifications are scanned.</p>"#
    } else {
        r#"<p id="pii-state">Scanning is <strong>off</strong> (no PII rules). Saving the form turns it on.</p>"#
    };
    let default = d["default_action"].as_str().unwrap_or("record");
    let mut kinds = String::new();
    let inherit = format!("the default ({default})");
    for k in PiiKind::ALL {
        let current = d["actions"][k.name()].as_str().unwrap_or("");
        let choices: Vec<(&str, &str)> = std::iter::once(("", inherit.as_str()))
            .chain(ACTIONS.iter().map(|(v, l)| (*v, *l)))
            .collect();
        kinds.push_str(&format!(
            r#"<tr><th scope="row"><label for="kind-{n}">{n}</label></th><td><code>{p}</code></td><td><select id="kind-{n}" name="kind.{n}">{o}</select></td></tr>"#,
            n = k.name(),
            p = esc(&k.placeholder()),
            o = options(&choices, current),
        ));
    }
    let body = format!(
        r#"{top}{state}
<form method="post" action="{h}/pii" id="pii-form">{csrf}
<label for="default-action">Action for kinds not set below</label>
<select id="default-action" name="default_action">{defaults}</select>
<div class="scroll"><table id="pii-kinds"><caption>Action per kind of finding</caption>
<thead><tr><th scope="col">Kind</th><th scope="col">Placeholder</th><th scope="col">Action</th></tr></thead>
<tbody>{kinds}</tbody></table></div>
<label for="binary-parts">Binary parts (inline files whose media type is not text)</label>
<select id="binary-parts" name="binary_parts">{binary}</select>
<p><button type="submit">Save PII rules</button></p></form>
<section aria-labelledby="pii-off"><h2 id="pii-off">Turn scanning off</h2>
<form method="post" action="{h}/pii/delete">{csrf}<button type="submit" class="danger">Delete the PII rules</button></form></section>"#,
        h = esc(&ws_href(ws)),
        csrf = csrf_field(&op.csrf),
        defaults = options(&ACTIONS, default),
        binary = options(&BINARY, d["binary_parts"].as_str().unwrap_or("")),
    );
    ws_page(op, ws, "PII", &title, status, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_becomes_rules() {
        let d =
            doc_of(b"csrf=x&default_action=redact&kind.EMAIL=block&kind.PHONE=&binary_parts=pass");
        assert_eq!(
            d,
            json!({"default_action": "redact", "actions": {"EMAIL": "block"}, "binary_parts": "pass"})
        );
        let rules: crate::pii::PiiRules = serde_json::from_value(d).unwrap();
        assert_eq!(rules.action(PiiKind::Email), crate::pii::PiiAction::Block);
        assert_eq!(
            doc_of(b""),
            json!({"default_action": "record", "actions": {}})
        );
    }
}
