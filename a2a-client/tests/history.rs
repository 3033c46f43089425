//! History lengths in the caller's (1.0) terms at a 0.3 agent (H20): 1.0 `historyLength: 0`
//! means "no history", while 0.3 reads `0` as "no limit". The client asks a 0.3 agent for the
//! smallest limit and trims the answer, on JSON-RPC and HTTP+JSON, for GetTask and SendMessage.

use a2a_agent::{AgentConfig, AgentServer, Reply, RequestContext, handler_fn};
use a2a_client::{A2aClient, Binding, SelectedInterface, Version};
use a2a_types::v1;

async fn agent() -> a2a_agent::ServerHandle {
    let handler = handler_fn(|ctx: RequestContext| async move {
        ctx.emit("working on it").await;
        Ok(Reply::Text(format!("done: {}", ctx.text())))
    });
    let cfg = AgentConfig {
        validate_auth: false,
        ..AgentConfig::default()
    };
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(a2a_agent::demo::echo_card(), handler)
        .config(cfg)
        .serve(l)
        .await
        .unwrap()
}

fn task(r: v1::SendMessageResponse) -> v1::Task {
    match r {
        v1::SendMessageResponse::Task(t) => t,
        other => panic!("not a task: {other:?}"),
    }
}

#[tokio::test]
async fn history_length_zero_means_no_history_at_a_03_agent() {
    let a = agent().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let url = match binding {
            Binding::JsonRpc => a.url().to_string(),
            _ => a.url().trim_end_matches('/').to_string(),
        };
        let c = A2aClient::builder()
            .from_interface(SelectedInterface::direct(
                url.parse().unwrap(),
                binding,
                Version::V03,
            ))
            .unwrap();
        let mut req = v1::SendMessageRequest::new(v1::Message::user_text("hello"));
        req.configuration
            .get_or_insert_with(Default::default)
            .history_length = Some(0);
        let sent = task(c.send(req).await.unwrap());
        assert!(sent.history.is_empty(), "{binding:?}: {sent:?}");
        // The agent keeps a history: unset gives all of it, 1 the last message, 0 none.
        let all = c.get_task(&sent.id, None).await.unwrap();
        assert!(all.history.len() >= 2, "{binding:?}: {all:?}");
        let one = c.get_task(&sent.id, Some(1)).await.unwrap();
        assert_eq!(one.history.len(), 1, "{binding:?}: {one:?}");
        let none = c.get_task(&sent.id, Some(0)).await.unwrap();
        assert!(none.history.is_empty(), "{binding:?}: {none:?}");
        assert_eq!(none.id, sent.id);
    }
    a.shutdown().await;
}
