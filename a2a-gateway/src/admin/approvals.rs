//! Admin API of approvals (held hops, docs/gateway/governance.md "Approval"), under the admin token:
//!
//! - `GET /admin/workspaces/{ws}/approvals?state=&after=&limit=`: a page of approvals without
//!   their requests (facts and previews: a list never reads a held request);
//! - `GET /admin/workspaces/{ws}/approvals/{id}`: one with its whole request as it will be sent;
//! - `POST /admin/workspaces/{ws}/approvals/{id}/approve|deny` `{approver, reason?}`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;

use super::governance::workspace_exists;
use crate::state::GatewayState;
use crate::store::backend::HoldStore;
use crate::{admin::reply::err, admin::reply::store_err};

/// The approval routes (the caller adds the admin token check).
pub fn routes() -> Router<Arc<GatewayState>> {
    Router::new()
        .route("/admin/workspaces/{ws}/approvals", get(approvals))
        .route("/admin/workspaces/{ws}/approvals/{id}", get(approval))
        .route(
            "/admin/workspaces/{ws}/approvals/{id}/approve",
            post(approve),
        )
        .route("/admin/workspaces/{ws}/approvals/{id}/deny", post(deny))
}

/// Approvals a list answers unless `limit` says otherwise.
const DEFAULT_PAGE: u32 = 100;

#[derive(Deserialize)]
struct ListQuery {
    state: Option<String>,
    after: Option<String>,
    limit: Option<u32>,
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// `GET /admin/workspaces/{ws}/approvals?state=&after=&limit=`: a page of the workspace's
/// approvals, newest first, without their requests (`limit` 100 by default, at most 1,000;
/// `after`: the last id of the previous page). Pending approvals past their hold are marked
/// expired first.
async fn approvals(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    axum::extract::Query(q): axum::extract::Query<ListQuery>,
) -> Response {
    if let Err(r) = workspace_exists(&st, &ws).await {
        return r;
    }
    let store = &st.holds;
    if let Err(e) = store.expire_due(&ws, now()).await {
        return store_err(e);
    }
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    match store
        .summaries(&ws, q.state.as_deref(), q.after.as_deref(), limit)
        .await
    {
        Ok(list) => axum::Json(list).into_response(),
        Err(e) => store_err(e),
    }
}

/// `GET /admin/workspaces/{ws}/approvals/{id}`: one approval with its whole request as it will
/// be sent (`request`, `sizes`).
async fn approval(
    State(st): State<Arc<GatewayState>>,
    Path((ws, id)): Path<(String, String)>,
) -> Response {
    match st.holds.approval(&ws, &id).await {
        Ok(Some(mut a)) => {
            if a.summary.is_expired(now())
                && st
                    .holds
                    .decide(&ws, &id, "expired", None, None)
                    .await
                    .unwrap_or(false)
            {
                a.summary.state = "expired".into();
            }
            // The whole held request (as it will be sent), beside the queue's preview.
            let mut v = serde_json::to_value(&a.summary).unwrap_or_default();
            match crate::governance::approval_view::request_view(&a) {
                Ok(view) => {
                    v["request"] = view["request"].clone();
                    v["sizes"] = view["sizes"].clone();
                }
                Err(e) => v["requestError"] = serde_json::json!(e),
            }
            axum::Json(v).into_response()
        }
        Ok(None) => err(StatusCode::NOT_FOUND, &format!("approval {id} not found")),
        Err(e) => store_err(e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    approver: String,
    #[serde(default)]
    reason: Option<String>,
}

fn decided(r: Result<Value, (u16, String)>) -> Response {
    match r {
        Ok(v) => axum::Json(v).into_response(),
        // The database could not be reached before the decision: nothing changed, retry.
        Err((503, _)) => crate::protocol::render::render(
            crate::protocol::render::Form::Rest,
            &crate::protocol::errors::Refusal::store_unavailable(),
        ),
        Err((s, m)) => err(
            StatusCode::from_u16(s).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &m,
        ),
    }
}

async fn approve(
    State(st): State<Arc<GatewayState>>,
    Path((ws, id)): Path<(String, String)>,
    axum::Json(b): axum::Json<Decision>,
) -> Response {
    if b.approver.trim().is_empty() {
        return err(StatusCode::BAD_REQUEST, "approver: required");
    }
    decided(crate::hop::release::release(&st, &ws, &id, &b.approver, b.reason.as_deref()).await)
}

async fn deny(
    State(st): State<Arc<GatewayState>>,
    Path((ws, id)): Path<(String, String)>,
    axum::Json(b): axum::Json<Decision>,
) -> Response {
    if b.approver.trim().is_empty() {
        return err(StatusCode::BAD_REQUEST, "approver: required");
    }
    decided(crate::hop::release::deny(&st, &ws, &id, &b.approver, b.reason.as_deref()).await)
}
