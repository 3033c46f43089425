//! The gateway's own calls to a registered peer, made for no caller's request: a session kill's
//! CancelTask and context scan (`governance::kill`), the Task a 0.3 push notification carries
//! (`push`). Each goes to the interface a caller's hop would use, in the peer's version.

use serde_json::{Value, json};

use crate::protocol::answer::Answer;
use crate::protocol::errors::Version;
use crate::protocol::ops::Operation;

/// A registered agent's chosen interface, for the gateway's own calls to it.
pub(crate) struct Peer<'a> {
    st: &'a crate::state::GatewayState,
    agent: &'a crate::store::Agent,
    pub(crate) chosen: crate::peer::Chosen,
}

impl<'a> Peer<'a> {
    /// The agent's card read (cached) and its interface chosen, as for a caller's hop.
    pub(crate) async fn open(
        st: &'a crate::state::GatewayState,
        agent: &'a crate::store::Agent,
    ) -> Result<Peer<'a>, String> {
        let (chosen, _) = crate::outbound::choose(st, agent, st.config().limits.max_card_bytes)
            .await
            .map_err(|r| r.code)?;
        Ok(Peer { st, agent, chosen })
    }

    /// `op` with 1.0 `params`, sent in the peer's version; the answer in 1.0 form, or the
    /// refusal's code.
    pub(crate) async fn op(&self, op: Operation, params: Value) -> Result<Answer, String> {
        let st = self.st;
        let params = crate::outbound::peer_params(op, Version::V1, &self.chosen, &params, false)
            .map_err(|r| r.code)?;
        let ctx = crate::outbound::PeerCall {
            st,
            agent: self.agent,
            chosen: &self.chosen,
            caller: Version::V1,
            traceparent: format!("00-{}-{}-01", crate::ids::id_hex(16), crate::ids::id_hex(8)),
            hops: 1,
            id: json!(crate::ids::id_hex(8)),
            max_resp: st.config().limits.max_response_bytes,
            max_stream: st.config().limits.max_stream_bytes,
            gov: None,
            open: None,
            peer_nanos: Default::default(),
        };
        ctx.call(op, params).await.map_err(|r| r.code)
    }
}
