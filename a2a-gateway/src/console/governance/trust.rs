//! Card trust of a workspace: the "require signed cards" switch
//! (`PUT /admin/workspaces/{ws}/card-trust`), each agent's card trust state as a hop sees it,
//! the key ids its card is signed with and its pinned card key (trusting a key pins it:
//! `POST /admin/workspaces/{ws}/agents`, the registration kept as it is), and the gateway's own
//! card signing keys (`/admin/signing-keys`: new, rotate, retire; these are fleet-wide).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use serde_json::{Value, json};

use super::super::backend::{Refused, admin, seg};
use super::super::html::{csrf_field, esc, notice, unix};
use super::super::workspaces::Flash;
use super::super::{Operator, admin_refusal, ws_href};
use super::{field, options, pairs, refused_status, require_ws, ws_page};
use crate::state::GatewayState;
use crate::store::backend::{RegistryStore, TrustStore};

/// The key ids a card's signatures name (from their protected headers), each once.
pub(crate) fn signature_kids(card: &Value) -> Vec<String> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    card["signatures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["protected"].as_str())
        .filter_map(|p| b64.decode(p.trim_end_matches('=')).ok())
        .filter_map(|h| serde_json::from_slice::<Value>(&h).ok())
        .map(|h| h["kid"].as_str().unwrap_or("(no kid)").to_owned())
        .fold(Vec::new(), |mut out, k| {
            if !out.contains(&k) {
                out.push(k);
            }
            out
        })
}

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let top = q.notice(&[
        ("switch", "Card trust saved."),
        (
            "pinned",
            "Card key pinned: this agent's card must verify with it.",
        ),
        ("unpinned", "Pinned card key removed."),
        (
            "key",
            "New signing key: it signs the governed cards from now on.",
        ),
        ("rotated", "Rotated: a new signing key, the others retired."),
        ("retired", "Signing key retired."),
    ]);
    render(&st, &op, &ws, StatusCode::OK, &top).await
}

/// Back to the trust page with notice `ok`, or the page with the refusal.
async fn answer(
    st: &Arc<GatewayState>,
    op: &Operator,
    ws: &str,
    r: Result<Value, Refused>,
    ok: &str,
) -> Response {
    match r {
        Ok(_) => Redirect::to(&format!("{}/trust?ok={ok}", ws_href(ws))).into_response(),
        Err(r) => render(st, op, ws, refused_status(&r), &admin_refusal(&r)).await,
    }
}

pub(crate) async fn card_trust(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let v = match field(&pairs(&body), "require").as_str() {
        "true" => json!(true),
        "false" => json!(false),
        _ => Value::Null,
    };
    let path = format!("/admin/workspaces/{}/card-trust", seg(&ws));
    let r = admin(
        &st,
        Method::PUT,
        &path,
        Some(&json!({"requireSignedCards": v})),
    )
    .await;
    answer(&st, &op, &ws, r, "switch").await
}

pub(crate) async fn pin(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, agent)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Response {
    let key = field(&pairs(&body), "pinned_card_key");
    let a = match st.registry.agent(&ws, &agent).await {
        Ok(Some(a)) => a,
        Ok(None) => {
            let r = Refused {
                status: 404,
                message: format!("agent {agent} not found in workspace {ws}"),
            };
            return render(&st, &op, &ws, StatusCode::NOT_FOUND, &admin_refusal(&r)).await;
        }
        Err(e) => {
            return render(
                &st,
                &op,
                &ws,
                StatusCode::INTERNAL_SERVER_ERROR,
                &notice(&e.to_string(), true),
            )
            .await;
        }
    };
    // The registration as it stands (the credential kept), with the new pinned key.
    let req = json!({"agentId": a.agent_id, "endpoint": a.endpoint, "credential": a.credential,
        "skills": a.skills, "pinnedCardKey": (!key.is_empty()).then_some(&key)});
    let path = format!("/admin/workspaces/{}/agents", seg(&ws));
    let r = admin(&st, Method::POST, &path, Some(&req)).await;
    let ok = if key.is_empty() { "unpinned" } else { "pinned" };
    answer(&st, &op, &ws, r, ok).await
}

pub(crate) async fn new_key(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
) -> Response {
    let r = admin(&st, Method::POST, "/admin/signing-keys", Some(&json!({}))).await;
    answer(&st, &op, &ws, r, "key").await
}

pub(crate) async fn rotate(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
) -> Response {
    let r = admin(&st, Method::POST, "/admin/signing-keys/rotate", None).await;
    answer(&st, &op, &ws, r, "rotated").await
}

pub(crate) async fn retire(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, kid)): Path<(String, String)>,
) -> Response {
    let path = format!("/admin/signing-keys/{}/retire", seg(&kid));
    let r = admin(&st, Method::POST, &path, None).await;
    answer(&st, &op, &ws, r, "retired").await
}

async fn render(
    st: &Arc<GatewayState>,
    op: &Operator,
    ws: &str,
    status: StatusCode,
    top: &str,
) -> Response {
    let title = format!("Card trust in {ws}");
    if let Err(p) = require_ws(st, op, ws, &title).await {
        return p;
    }
    let h = esc(&ws_href(ws));
    let csrf = csrf_field(&op.csrf);
    let path = format!("/admin/workspaces/{}/card-trust", seg(ws));
    let switch = match admin(st, Method::GET, &path, None).await {
        Ok(v) => v,
        Err(r) => {
            return ws_page(
                op,
                ws,
                "Trust",
                &title,
                refused_status(&r),
                &admin_refusal(&r),
            );
        }
    };
    let current = match switch["requireSignedCards"].as_bool() {
        Some(true) => "true",
        Some(false) => "false",
        None => "",
    };
    let fleet = switch["fleetRequireSignedCards"].as_bool() == Some(true);
    let agents = st.registry.list_agents(ws).await.unwrap_or_default();
    let mut rows = String::new();
    for a in &agents {
        let view = super::super::agents::peer_view(st, a).await;
        let kids = match &view.card {
            Ok(c) => {
                let k = signature_kids(c);
                if k.is_empty() {
                    "unsigned".to_owned()
                } else {
                    k.iter()
                        .map(|k| format!("<code>{}</code>", esc(k)))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            }
            Err(e) => format!(r#"<span class="bad">{}</span>"#, esc(e)),
        };
        let id = esc(&a.agent_id);
        rows.push_str(&format!(
            r#"<tr data-agent="{id}"><th scope="row"><a href="{h}/agents/{ids}">{id}</a></th><td class="trust">{trust}</td><td>{kids}</td>
<td><form method="post" action="{h}/trust/agents/{ids}/pin" class="pin">{csrf}
<label for="pin-{id}">Trusted card key of {id} (public JWK, JWK Set or JWKS URL; empty: none)</label>
<textarea id="pin-{id}" name="pinned_card_key" rows="3" class="mono">{pinned}</textarea>
<button type="submit">Save trusted key</button></form></td></tr>"#,
            ids = esc(&seg(&a.agent_id)),
            trust = esc(&view.trust),
            pinned = esc(a.pinned_card_key.as_deref().unwrap_or("")),
        ));
    }
    if agents.is_empty() {
        rows.push_str(r#"<tr><td colspan="4">No agents in this workspace.</td></tr>"#);
    }
    let mut keys = String::new();
    let signing = st.shared.signing_keys().await;
    for k in signing.as_deref().unwrap_or_default() {
        let action = if k.state == "active" {
            format!(
                r#"<form method="post" action="{h}/trust/signing-keys/{kid}/retire">{csrf}<button type="submit" class="danger" aria-label="Retire signing key {kide}">Retire</button></form>"#,
                kid = esc(&seg(&k.kid)),
                kide = esc(&k.kid),
            )
        } else {
            String::new()
        };
        keys.push_str(&format!(
            r#"<tr data-kid="{kid}"><th scope="row"><code>{kid}</code></th><td>{alg}</td><td>{created}</td><td class="state-{state}">{state}</td><td>{retired}</td><td>{action}</td></tr>"#,
            kid = esc(&k.kid),
            alg = esc(&k.alg),
            created = unix(k.created_at),
            state = esc(k.state),
            retired = k.retired_at.map(unix).unwrap_or_else(|| "—".into()),
        ));
    }
    if keys.is_empty() {
        keys.push_str(
            r#"<tr><td colspan="6">No signing key: governed cards are not signed.</td></tr>"#,
        );
    }
    let keys_error = match &signing {
        Err(e) => notice(&format!("The signing keys could not be read: {e}"), true),
        Ok(_) => String::new(),
    };
    let fleet_label = format!(
        "as the fleet says ({})",
        if fleet { "required" } else { "not required" }
    );
    let body = format!(
        r#"{top}
<form method="post" action="{h}/trust/card-trust" class="card" id="card-trust-form">{csrf}
<label for="require">Require signed peer cards in this workspace</label>
<select id="require" name="require">{switch}</select>
<p class="hint">Now: signed cards are <strong id="trust-effective">{effective}</strong> here. With a requirement or a pinned key, a card that does not verify is refused (<code>a2a_card_signature_invalid</code>) and nothing is sent.</p>
<button type="submit">Save</button></form>
<div class="scroll"><table id="agent-trust"><caption>Each agent's card, as a hop sees it</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Trust state</th><th scope="col">Signed with (kid)</th><th scope="col">Trusted key (pin)</th></tr></thead>
<tbody>{rows}</tbody></table></div>
<section aria-labelledby="signing"><h2 id="signing">The gateway's card signing keys (every workspace)</h2>
{keys_error}<div class="scroll"><table id="signing-keys"><caption>Keys that sign the governed cards (the newest active one signs); public parts at <code>/a2a/.well-known/jwks.json</code></caption>
<thead><tr><th scope="col">Kid</th><th scope="col">Algorithm</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Retired</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
<tbody>{keys}</tbody></table></div>
<div class="paging"><form method="post" action="{h}/trust/signing-keys">{csrf}<button type="submit">New signing key</button></form>
<form method="post" action="{h}/trust/signing-keys/rotate">{csrf}<button type="submit" class="danger">Rotate (new key, retire the others)</button></form></div></section>"#,
        switch = options(
            &[
                ("", fleet_label.as_str()),
                ("true", "required"),
                ("false", "not required here"),
            ],
            current
        ),
        effective = if switch["effective"].as_bool() == Some(true) {
            "required"
        } else {
            "not required"
        },
    );
    ws_page(op, ws, "Trust", &title, status, &body)
}

#[cfg(test)]
mod tests {
    #[test]
    fn kids_come_from_the_protected_headers() {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let p = b64.encode(r#"{"alg":"ES256","kid":"k1","typ":"JOSE"}"#);
        let card = serde_json::json!({"signatures": [{"protected": p, "signature": "x"},
            {"protected": "!!"}]});
        assert_eq!(super::signature_kids(&card), vec!["k1".to_owned()]);
        assert!(super::signature_kids(&serde_json::json!({})).is_empty());
    }
}
