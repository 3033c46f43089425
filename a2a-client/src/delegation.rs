//! Delegation chains: carrying a gateway's signed chain on when an agent delegates.
//!
//! An A2A gateway in front of agents (such as `a2a-gateway`) sends each agent the hop's
//! delegation chain in the [`CHAIN_HEADER`] header: which agents the work already went through,
//! signed by the gateway. When that agent's handler calls another agent through the gateway, it
//! sends the header back unchanged ([`ClientBuilder::delegation_chain`]); the gateway then sees
//! the whole chain and stops cycles and over-deep delegation. The value is opaque to the client.
//!
//! ```
//! use a2a_client::ClientBuilder;
//! // `inbound` is the header value the agent received (for an a2a-agent handler:
//! // `ctx.delegation_chain()`).
//! let inbound: Option<&str> = Some("eyJhZ2VudHMiOltdfQ.c2ln");
//! let builder = ClientBuilder::default().delegation_chain(inbound).unwrap();
//! # let _ = builder;
//! ```

use crate::client::ClientBuilder;
use crate::error::ClientError;

/// The header carrying a gateway's signed delegation chain.
pub const CHAIN_HEADER: &str = "a2a-delegation-chain";

impl ClientBuilder {
    /// Sends the delegation chain an agent received on every request of this client (nothing
    /// when `chain` is `None`: a call that is not a delegation).
    pub fn delegation_chain(self, chain: Option<&str>) -> Result<Self, ClientError> {
        match chain {
            Some(c) if !c.is_empty() => self.header(CHAIN_HEADER, c),
            _ => Ok(self),
        }
    }
}
