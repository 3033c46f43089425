//! Delegation chains for handlers: the signed chain a gateway sent with this request, to carry
//! on when the handler calls another agent (with `a2a_client::ClientBuilder::delegation_chain`).

use crate::handler::RequestContext;

/// The header carrying a gateway's signed delegation chain (the same name as
/// `a2a_client::delegation::CHAIN_HEADER`).
pub const CHAIN_HEADER: &str = "a2a-delegation-chain";

impl RequestContext {
    /// The delegation chain this request arrived with (opaque, signed by the gateway), to send
    /// unchanged on the handler's own calls through the gateway; `None` when there is none.
    pub fn delegation_chain(&self) -> Option<&str> {
        self.headers()
            .get(CHAIN_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
    }
}
