//! A retry of a send that governance holds for approval, whose `messageId` was claimed
//! before (`crate::hop::idempotency`): answered from that first claim, never held again.

use serde_json::{Value, json};

use crate::hop::idempotency::{Claim, answer};
use crate::outbound::PeerCall;
use crate::protocol::ops::Operation;
use crate::tasks::ownership::Owner;
use crate::{protocol::answer::Answer, protocol::errors::Refusal, state::GatewayState};

/// The answer of a retry that governance would hold for approval but whose `messageId` was
/// claimed before (`claim`: [`Claim::Held`] or [`Claim::Done`]): a send held before is
/// answered as the held send is (`crate::hop::approval::repeat`); one that reached the peer
/// (before a policy held such sends) with the task or message it became, read from the peer
/// as any repeat. Nothing is held again and nothing new reaches the peer.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn held_repeat(
    st: &GatewayState,
    call: &crate::hop::call::Call,
    owner: &Owner,
    agent: &crate::store::Agent,
    chosen: &crate::peer::Chosen,
    (max_resp, max_stream): (u64, u64),
    params: &Value,
    op: Operation,
    claim: Claim,
) -> Result<Answer, Refusal> {
    match claim {
        Claim::Held(id) => {
            crate::hop::approval::repeat(
                st,
                &owner.workspace_id,
                &owner.agent_id,
                &id,
                op,
                call.version,
                params,
            )
            .await
        }
        Claim::Done(outcome) => {
            let ctx = PeerCall {
                st,
                agent,
                chosen,
                caller: call.version,
                traceparent: call.traceparent(),
                hops: call.hops.saturating_add(1),
                id: call
                    .id
                    .to_exact_value()
                    .filter(|v| !v.is_null())
                    .unwrap_or_else(|| json!(crate::ids::id_hex(8))),
                max_resp,
                max_stream,
                gov: None,
                open: None,
                peer_nanos: Default::default(),
            };
            answer(&ctx, op, call.version, outcome).await
        }
        Claim::Off | Claim::First(_) => Err(Refusal::internal("not a repeat")),
    }
}
