//! The peer a hop calls: the registered address (checked), the card (cached, its trust
//! checked) and the interface chosen on it.

use serde_json::Value;
use url::Url;

use crate::state::GatewayState;
use crate::store::Agent;
use crate::{peer, peer::Chosen};
use crate::{protocol::errors::Binding, protocol::errors::Refusal};

/// registered endpoint checks, peer card: the agent's registered address (checked) and its card
/// (cached), as every hop reads them (also the console's agent views).
pub(crate) async fn registered_card(
    st: &GatewayState,
    agent: &Agent,
    max_card: u64,
) -> Result<(Url, a2a_client::discovery::FetchedCard), Refusal> {
    // The static checks are kept per endpoint text (`crate::peer::checks`); DNS runs every hop.
    let registered = st
        .peer_checks
        .registered(&agent.endpoint, st.config().dev_mode)?;
    peer::check_resolved(&registered.url, st.config().dev_mode).await?;
    let card = peer::peer_card_at(
        &st.peer_clients.load_full().cards,
        registered.card_url,
        registered.fallback,
        agent.credential.as_deref(),
        max_card,
        false,
    )
    .await;
    st.metrics.card_fetch(peer::fetch_result(&card));
    let card = card?;
    Ok((registered.url, card))
}

/// registered endpoint checks, peer card, interface, chosen URL checks: the peer's card (cached)
/// read from its registered address and the interface the gateway will call.
pub(crate) async fn choose(
    st: &GatewayState,
    agent: &Agent,
    max_card: u64,
) -> Result<(Chosen, a2a_client::discovery::FetchedCard), Refusal> {
    let (registered, card) = registered_card(st, agent, max_card).await?;
    // card trust: an invalid signature never gives an address (`crate::trust`).
    let trust = st.trust.check_card(agent, &card).await?;
    // Kept with the exact card body it was chosen from (`crate::peer::checks`).
    let kept = st.peer_checks.chosen(&agent.endpoint, &card.body);
    let fresh = kept.is_none();
    let mut chosen = match kept {
        Some(c) => c,
        None => {
            let prefs = peer::Prefs {
                registered: Some(&registered),
                ..peer::Prefs::of(&st.config())
            };
            peer::select_with(&card.interfaces, &prefs)?
        }
    };
    crate::trust::check_coverage(&trust, &card, &chosen.url)?;
    if fresh {
        match chosen.binding {
            Binding::Grpc => {
                crate::peer::grpc::check_url(&chosen.url, &registered, st.config().dev_mode)?
            }
            _ => peer::check_url(&chosen.url, &registered, st.config().dev_mode)?,
        }
        st.peer_checks
            .keep_chosen(&agent.endpoint, &card.body, &chosen);
    }
    chosen.signature_trust = Some(trust.as_str());
    peer::check_resolved(&chosen.url, st.config().dev_mode).await?;
    Ok((chosen, card))
}

/// The skill ids of a peer card (either version), kept to the registration's allow-list.
pub(crate) fn card_skills(card: &a2a_client::discovery::FetchedCard, agent: &Agent) -> Vec<String> {
    let v: Value = card.json().unwrap_or(Value::Null);
    v.get("skills")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.get("id").and_then(Value::as_str))
                .filter(|id| {
                    agent
                        .skills
                        .as_ref()
                        .is_none_or(|allow| allow.iter().any(|a| a == id))
                })
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
