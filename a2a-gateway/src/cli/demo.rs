//! `a2a-gateway demo`'s extension agents: a2a-agent echo agents whose cards require an
//! extension, registered in the demo workspace (the demo's own echo agent is a2a-agent's too).

use serde_json::json;
use tokio::net::TcpListener;

/// The extension the demo workspace allows; `echo-ext-required` requires it.
pub const DEMO_EXT_ALLOWED: &str = "https://a2a-rs.dev/extensions/demo-allowed/v1";
/// An extension the demo workspace does not allow; `echo-ext-forbidden` requires it.
pub const DEMO_EXT_FORBIDDEN: &str = "https://a2a-rs.dev/extensions/demo-forbidden/v1";

/// Starts the demo's extension agents (a2a-agent echo agents whose cards require an extension)
/// and registers them in `workspace`, which is made to allow [`DEMO_EXT_ALLOWED`]:
/// `echo-ext-required` (requires it: -32008 without `A2A-Extensions`, the echo with it) and
/// `echo-ext-forbidden` (requires [`DEMO_EXT_FORBIDDEN`]: `a2a_extension_not_allowed`). The
/// conformance fixtures of the extension errors call them.
pub async fn start_extension_agents(
    store: &crate::store::Store,
    workspace: &str,
) -> Result<Vec<a2a_agent::server::ServerHandle>, String> {
    let mut out = Vec::new();
    for (id, uri) in [
        ("echo-ext-required", DEMO_EXT_ALLOWED),
        ("echo-ext-forbidden", DEMO_EXT_FORBIDDEN),
    ] {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| e.to_string())?;
        let url = format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let mut card = a2a_agent::demo::echo_card().json().clone();
        card["supportedInterfaces"] =
            json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
        card["capabilities"]["extensions"] = json!([{"uri": uri, "required": true}]);
        let card = a2a_agent::card::AgentCard::from_json(card).map_err(|e| e.to_string())?;
        let server = a2a_agent::AgentServer::new(card, a2a_agent::demo::echo_handler())
            .validate_auth(false)
            .serve(listener)
            .await
            .map_err(|e| e.to_string())?;
        store
            .upsert_agent(&crate::store::Agent {
                workspace_id: workspace.into(),
                agent_id: id.into(),
                endpoint: url,
                credential: None,
                skills: None,
                pinned_card_key: None,
            })
            .map_err(|e| e.to_string())?;
        out.push(server);
    }
    let mut s = store
        .workspace_settings(workspace)
        .map_err(|e| e.to_string())?;
    if !s.allows_extension(DEMO_EXT_ALLOWED) {
        s.extensions_allowed.push(DEMO_EXT_ALLOWED.into());
    }
    store
        .put_workspace_settings(workspace, &s)
        .map_err(|e| e.to_string())?;
    Ok(out)
}
