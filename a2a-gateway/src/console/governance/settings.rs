//! A workspace's settings: the extensions its callers may use (`a2a.extensions.allowed`), how
//! its push configs are delivered (`a2a.push.delivery`), through
//! `PATCH /admin/workspaces/{ws}/settings`; and its byte limits (answer, stream, card), through
//! `PUT /admin/workspaces/{ws}/limits`.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::{Value, json};

use super::super::backend::{admin, seg};
use super::super::html::{csrf_field, esc, notice};
use super::super::workspaces::Flash;
use super::super::{Operator, admin_refusal, ws_href};
use super::{field, options, pairs, refused_status, require_ws, ws_page};
use crate::state::GatewayState;
use crate::store::backend::RegistryStore;

/// The settings PATCH a posted form describes: one extension URI per line (blank lines
/// dropped; none: the member reset), and the push delivery (`""`: reset to the default).
pub(crate) fn patch_of(body: &[u8]) -> Value {
    let p = pairs(body);
    let uris: Vec<String> = field(&p, "extensions")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let delivery = field(&p, "push_delivery");
    json!({
        "a2a.extensions.allowed": if uris.is_empty() { Value::Null } else { json!(uris) },
        "a2a.push.delivery": if delivery.is_empty() { Value::Null } else { json!(delivery) },
    })
}

/// The limits PUT a posted form describes (empty: the gateway's limit), or which field is not
/// a whole number.
pub(crate) fn limits_of(body: &[u8]) -> Result<Value, String> {
    let p = pairs(body);
    let mut out = serde_json::Map::new();
    for (name, member, label) in [
        ("max_response", "maxResponseBytes", "Largest answer"),
        ("max_stream", "maxStreamBytes", "Largest stream"),
        ("max_card", "maxCardBytes", "Largest card"),
    ] {
        let v = field(&p, name);
        let n = if v.is_empty() {
            Value::Null
        } else {
            match v.parse::<u64>() {
                Ok(n) if n > 0 => json!(n),
                _ => {
                    return Err(format!(
                        "{label}: a whole number of bytes above 0, or empty."
                    ));
                }
            }
        };
        out.insert(member.into(), n);
    }
    Ok(Value::Object(out))
}

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let top = q.notice(&[
        ("saved", "Settings saved: they apply from the next request."),
        ("limits", "Limits saved."),
    ]);
    render(&st, &op, &ws, StatusCode::OK, &top).await
}

pub(crate) async fn save(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let path = format!("/admin/workspaces/{}/settings", seg(&ws));
    match admin(&st, Method::PATCH, &path, Some(&patch_of(&body))).await {
        Ok(_) => Redirect::to(&format!("{}/settings?ok=saved", ws_href(&ws))).into_response(),
        Err(r) => render(&st, &op, &ws, refused_status(&r), &admin_refusal(&r)).await,
    }
}

pub(crate) async fn limits(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let req = match limits_of(&body) {
        Ok(r) => r,
        Err(m) => {
            return render(&st, &op, &ws, StatusCode::BAD_REQUEST, &notice(&m, true)).await;
        }
    };
    let path = format!("/admin/workspaces/{}/limits", seg(&ws));
    match admin(&st, Method::PUT, &path, Some(&req)).await {
        Ok(_) => Redirect::to(&format!("{}/settings?ok=limits", ws_href(&ws))).into_response(),
        Err(r) => render(&st, &op, &ws, refused_status(&r), &admin_refusal(&r)).await,
    }
}

async fn render(
    st: &Arc<GatewayState>,
    op: &Operator,
    ws: &str,
    status: StatusCode,
    top: &str,
) -> Response {
    let title = format!("Settings of {ws}");
    if let Err(p) = require_ws(st, op, ws, &title).await {
        return p;
    }
    let path = format!("/admin/workspaces/{}/settings", seg(ws));
    let s = match admin(st, Method::GET, &path, None).await {
        Ok(s) => s,
        Err(r) => {
            return ws_page(
                op,
                ws,
                "Settings",
                &title,
                refused_status(&r),
                &admin_refusal(&r),
            );
        }
    };
    let w = st.registry.workspace(ws).await.ok().flatten();
    let limits = st.config().limits.clone();
    let uris: Vec<&str> = s["a2a.extensions.allowed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let delivery = s["a2a.push.delivery"].as_str().unwrap_or("");
    let source = s["a2a.push.delivery.source"].as_str().unwrap_or("default");
    let stored = if source == "workspace" { delivery } else { "" };
    let num = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_default();
    let body = format!(
        r#"{top}
<dl class="facts" id="settings-now">
<dt>Extensions allowed</dt><dd>{ext_now}</dd>
<dt>Push delivery</dt><dd>{delivery_now} <span class="muted">(from: {source})</span></dd>
</dl>
<form method="post" action="{h}/settings" class="card" id="settings-form">{csrf}
<label for="extensions">Extensions callers may use (one URI a line; empty: none)</label>
<textarea id="extensions" name="extensions" rows="4" class="mono">{ext}</textarea>
<p class="hint">A request that names another extension as required is refused with <code>a2a_extension_not_allowed</code>; cards list only the allowed ones.</p>
<label for="push-delivery">Push delivery</label>
<select id="push-delivery" name="push_delivery">{deliveries}</select>
<button type="submit">Save settings</button></form>
<section aria-labelledby="limits"><h2 id="limits">Byte limits</h2>
<form method="post" action="{h}/settings/limits" class="card" id="limits-form">{csrf}
<p class="hint">Empty: the gateway's limit (shown as the placeholder).</p>
<label for="max-response">Largest answer from a peer (bytes)</label>
<input id="max-response" name="max_response" inputmode="numeric" value="{mr}" placeholder="{dr}">
<label for="max-stream">Largest stream (bytes)</label>
<input id="max-stream" name="max_stream" inputmode="numeric" value="{ms}" placeholder="{ds}">
<label for="max-card">Largest peer card (bytes)</label>
<input id="max-card" name="max_card" inputmode="numeric" value="{mc}" placeholder="{dc}">
<button type="submit">Save limits</button></form></section>"#,
        ext_now = if uris.is_empty() {
            "none".to_owned()
        } else {
            uris.iter()
                .map(|u| format!("<code>{}</code>", esc(u)))
                .collect::<Vec<_>>()
                .join(", ")
        },
        delivery_now = esc(if delivery.is_empty() {
            "gateway default"
        } else {
            delivery
        }),
        source = esc(source),
        h = esc(&ws_href(ws)),
        csrf = csrf_field(&op.csrf),
        ext = esc(&uris.join("\n")),
        deliveries = options(
            &[
                ("", "the default"),
                ("direct", "direct (the peer posts to the caller's webhook)"),
                (
                    "gateway",
                    "gateway (sealed webhook, the gateway's callback)"
                ),
            ],
            stored
        ),
        mr = num(w.as_ref().and_then(|w| w.max_response_bytes)),
        ms = num(w.as_ref().and_then(|w| w.max_stream_bytes)),
        mc = num(w.as_ref().and_then(|w| w.max_card_bytes)),
        dr = limits.max_response_bytes,
        ds = limits.max_stream_bytes,
        dc = limits.max_card_bytes,
    );
    ws_page(op, ws, "Settings", &title, status, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_become_requests() {
        let p = patch_of(b"extensions=urn%3Aa%0D%0A%0D%0A+urn%3Ab+&push_delivery=");
        assert_eq!(
            p,
            json!({"a2a.extensions.allowed": ["urn:a", "urn:b"], "a2a.push.delivery": null})
        );
        assert_eq!(
            patch_of(b"push_delivery=direct")["a2a.extensions.allowed"],
            Value::Null
        );
        assert_eq!(
            limits_of(b"max_response=100&max_stream=&max_card=5").unwrap(),
            json!({"maxResponseBytes": 100, "maxStreamBytes": null, "maxCardBytes": 5})
        );
        assert!(limits_of(b"max_response=-1").is_err());
        assert!(limits_of(b"max_card=0").is_err());
    }
}
