//! Signed push notifications: an agent with trusted card keys ([`crate::trust::KeySource`]) must send
//! `Authorization: Bearer <JWT>` with each notification to its sealed callback, signed by one of
//! those keys (algorithms of [`a2a_client::signing::ALLOWED_ALGS`]; the header's `kid` picks the
//! key) with the claims:
//!
//! - `aud`: the callback URL the gateway gave the peer (`{base}/a2a/{agent}/push:notify/{id}`);
//! - `taskId`: the task of the sealed config (and of the notification);
//! - `iat` and `exp`, at most [`MAX_LIFETIME_SECS`] apart (30 s of clock skew allowed);
//! - `jti`: unique; a token is accepted once (ids are kept until the token expires).

use crate::store::backend::TrustStore;
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;

use a2a_client::signing;

use crate::state::GatewayState;
use crate::trust::KeySource;
use crate::{store::Agent, store::PushCallback};

/// Longest accepted token lifetime (`exp - iat`), seconds.
pub const MAX_LIFETIME_SECS: i64 = 300;
/// Clock skew allowed, seconds.
pub const LEEWAY_SECS: u64 = 30;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Claims {
    exp: i64,
    iat: i64,
    jti: String,
    #[serde(default)]
    task_id: Option<String>,
}

/// A refused notification: status, gateway code and the reason (logged).
pub type Refused = (StatusCode, &'static str, String);

fn invalid(why: impl Into<String>) -> Refused {
    (
        StatusCode::UNAUTHORIZED,
        "a2a_push_signature_invalid",
        why.into(),
    )
}

/// Checks the notification's bearer JWT when the agent has trusted keys (otherwise `Ok`).
/// `notified_task` is the task the notification names, when it names one.
pub async fn check(
    st: &GatewayState,
    agent: Option<&Agent>,
    cb: &PushCallback,
    headers: &HeaderMap,
    notified_task: Option<&str>,
) -> Result<(), Refused> {
    let Some(raw) = agent
        .and_then(|a| a.pinned_card_key.as_deref())
        .filter(|s| !s.trim().is_empty())
    else {
        return Ok(());
    };
    let source = KeySource::parse(raw, st.config().dev_mode).map_err(invalid)?;
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            (
                StatusCode::UNAUTHORIZED,
                "a2a_push_signature_required",
                "the agent has a pinned key: a signed bearer JWT is required".to_owned(),
            )
        })?;
    let head =
        jsonwebtoken::decode_header(token).map_err(|e| invalid(format!("JWT header: {e}")))?;
    let alg = format!("{:?}", head.alg);
    let keys = match source {
        KeySource::Pinned(set) => set,
        KeySource::Url(u) => {
            st.trust
                .jwks
                .load_full()
                .get(&u, false)
                .await
                .map_err(|r| invalid(r.message))?
                .0
        }
    };
    let kid = head.kid.as_deref();
    let candidates: Vec<_> = keys
        .keys
        .iter()
        .filter(|k| match (k.common.key_id.as_deref(), kid) {
            (None, _) => true,
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
        })
        .collect();
    if candidates.is_empty() {
        return Err(invalid(format!("no trusted key with kid {kid:?}")));
    }
    let audience = format!(
        "{}/a2a/{}/push:notify/{}",
        st.config()
            .push_callback_base_url
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches('/'),
        cb.agent_id,
        cb.callback_id
    );
    let mut last = String::from("no trusted key verifies the token");
    let mut claims = None;
    for jwk in candidates {
        let (key, algorithm) = match signing::verifying_key(jwk, &alg) {
            Ok(k) => k,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let mut v = jsonwebtoken::Validation::new(algorithm);
        v.set_audience(&[audience.as_str()]);
        v.set_required_spec_claims(&["exp", "iat", "aud", "jti"]);
        v.leeway = LEEWAY_SECS;
        match jsonwebtoken::decode::<Claims>(token, &key, &v) {
            Ok(d) => {
                claims = Some(d.claims);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let c = claims.ok_or_else(|| invalid(last))?;
    let now = crate::trust::store::now();
    if c.exp - c.iat > MAX_LIFETIME_SECS {
        return Err(invalid(format!(
            "the token lives {} s; at most {MAX_LIFETIME_SECS} s",
            c.exp - c.iat
        )));
    }
    if c.iat > now + LEEWAY_SECS as i64 {
        return Err(invalid("the token is issued in the future"));
    }
    let task = c.task_id.as_deref().unwrap_or_default();
    let mismatch = || {
        (
            StatusCode::FORBIDDEN,
            "a2a_push_task_mismatch",
            format!("the token is for task {task:?}"),
        )
    };
    if task.is_empty() || (!cb.task_id.is_empty() && task != cb.task_id) {
        return Err(mismatch());
    }
    if notified_task.is_some_and(|t| t != task) {
        return Err(mismatch());
    }
    let issuer = format!("{}/{}", cb.workspace_id, cb.agent_id);
    match st.shared.use_jti(&issuer, &c.jti, c.exp).await {
        Ok(true) => Ok(()),
        Ok(false) => Err((
            StatusCode::UNAUTHORIZED,
            "a2a_push_replayed",
            format!("token {:?} was already used", c.jti),
        )),
        Err(e) if e.is_unavailable() => Err((
            StatusCode::SERVICE_UNAVAILABLE,
            "a2a_store_unavailable",
            e.to_string(),
        )),
        Err(e) => Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "a2a_internal_error",
            e.to_string(),
        )),
    }
}
