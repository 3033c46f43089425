//! The registration check (issue 15): registering or editing an agent reads its card and
//! refuses a peer that offers no binding the gateway can call, naming each interface and why
//! it was passed over. "Can call" is the gateway's own interface selection
//! ([`crate::peer::select_with`]), so the check and the calls never disagree.
//!
//! As in the DVARA API, a card that cannot be read (the peer is down, its address is refused)
//! does not stop the save: the answer says so, and calls fail later with the card error.
//! `force` saves a refused registration anyway (recorded in the admin audit log).

use serde::Serialize;
use url::Url;

use crate::peer;
use crate::state::GatewayState;
use crate::store::Agent;

/// What the card of a peer being registered says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Check {
    /// The gateway can call the peer through this interface.
    Callable {
        /// Binding (`JSONRPC`, `HTTP+JSON`).
        binding: String,
        /// A2A version.
        version: String,
        /// The interface URL.
        url: String,
    },
    /// The card was read and no interface can be called: each one and why.
    Refused {
        /// `"<source> <binding> <version> at <url>: <reason>"`, one per interface.
        #[serde(rename = "passedOver")]
        passed_over: Vec<String>,
    },
    /// The card could not be read (the save goes ahead).
    CardUnreadable {
        /// Why.
        detail: String,
    },
}

/// Reads the card of `agent` (fresh, not from the cache) and judges its interfaces.
pub async fn check(st: &GatewayState, agent: &Agent) -> Check {
    let unreadable = |detail: String| Check::CardUnreadable { detail };
    let registered = match Url::parse(&agent.endpoint) {
        Ok(u) => u,
        Err(e) => return unreadable(format!("registered endpoint: {e}")),
    };
    if let Err(r) = peer::check_url(&registered, &registered, st.config().dev_mode) {
        return unreadable(r.message);
    }
    if let Err(r) = peer::check_resolved(&registered, st.config().dev_mode).await {
        return unreadable(r.message);
    }
    let card = match peer::peer_card(
        &st.peer_clients.load_full().cards,
        &registered,
        agent.credential.as_deref(),
        st.config().limits.max_card_bytes,
        true,
    )
    .await
    {
        Ok(c) => c,
        Err(r) => return unreadable(r.message),
    };
    let prefs = peer::Prefs {
        registered: Some(&registered),
        ..peer::Prefs::of(&st.config())
    };
    let chosen = peer::select_with(&card.interfaces, &prefs);
    // gRPC's own address rules (plaintext h2c only in development mode) would refuse every call.
    if let Ok(c) = &chosen
        && c.binding == crate::protocol::errors::Binding::Grpc
        && let Err(r) = crate::peer::grpc::check_url(&c.url, &registered, st.config().dev_mode)
    {
        return Check::Refused {
            passed_over: vec![r.message],
        };
    }
    match chosen {
        Ok(c) => Check::Callable {
            binding: c.binding.as_str().to_owned(),
            version: c.version.as_str().to_owned(),
            url: c.url.to_string(),
        },
        Err(r) => Check::Refused {
            passed_over: r
                .extra
                .get("passedOver")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_else(|| vec![r.message.clone()]),
        },
    }
}

/// The message of a refused registration.
pub fn refused_message(passed_over: &[String]) -> String {
    format!(
        "the peer's Agent Card offers no binding this gateway can call (save with force to \
         register it anyway): {}",
        passed_over.join("; ")
    )
}

/// The admin API's answer to a refused registration: 422, a `google.rpc.Status` body
/// (`a2a_registration_refused`) with the interfaces and reasons also as a list in
/// `error.passedOver`.
pub(crate) fn refused_response(passed_over: &[String]) -> axum::response::Response {
    use axum::response::IntoResponse;
    let r = crate::protocol::errors::Refusal::registration_refused(&refused_message(passed_over));
    let mut body = r.status_body(&crate::ids::random_hex(16));
    body["error"]["passedOver"] = serde_json::json!(passed_over);
    (
        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
