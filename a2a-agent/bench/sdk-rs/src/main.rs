//! An echo agent on the official Rust SDK (`a2a-server-lf`), answering what
//! `a2a-agent serve --echo` answers: a completed Task whose status message echoes the text.
//! JSON-RPC at `/`, HTTP+JSON at `/message:send` (the paths of the bench's wrk scripts), the card
//! at `/.well-known/agent-card.json`. Binds 127.0.0.1 on `PORT` (0: a free port) and prints
//! `LISTENING http://127.0.0.1:PORT` as our agent does. `WORKERS` runtime threads (default: the
//! CPUs), jemalloc as the allocator (the bench gives our agent jemalloc too), TCP_NODELAY.

use std::sync::Arc;

use a2a::*;
use a2a_server::*;
use futures::stream::{self, BoxStream};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

struct Echo;

impl AgentExecutor for Echo {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let text = ctx
            .message
            .as_ref()
            .map(|m| {
                m.parts
                    .iter()
                    .filter_map(|p| match &p.content {
                        PartContent::Text(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        let reply = Message {
            role: Role::Agent,
            message_id: new_message_id(),
            task_id: Some(ctx.task_id.clone()),
            context_id: Some(ctx.context_id.clone()),
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: None,
            reference_task_ids: None,
        };
        let task = Task {
            id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: Some(reply),
                timestamp: Some(chrono::Utc::now()),
            },
            artifacts: None,
            history: None,
            metadata: None,
        };
        Box::pin(stream::once(async { Ok(StreamResponse::Task(task)) }))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let event = TaskStatusUpdateEvent {
            task_id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            status: TaskStatus {
                state: TaskState::Canceled,
                message: None,
                timestamp: Some(chrono::Utc::now()),
            },
            metadata: None,
        };
        Box::pin(stream::once(async {
            Ok(StreamResponse::StatusUpdate(event))
        }))
    }
}

fn card(url: &str) -> AgentCard {
    AgentCard {
        name: "echo".into(),
        description: "Echoes the text it is sent (benchmark peer).".into(),
        version: "1.0.0".into(),
        provider: None,
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: None,
            extended_agent_card: None,
        },
        skills: vec![AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Echoes the text.".into(),
            tags: vec!["echo".into()],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        supported_interfaces: vec![
            AgentInterface::new(url, TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(url, TRANSPORT_PROTOCOL_HTTP_JSON),
        ],
        security_schemes: None,
        security_requirements: None,
        documentation_url: None,
        icon_url: None,
        signatures: None,
    }
}

fn main() -> std::io::Result<()> {
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = std::env::var("WORKERS").ok().and_then(|v| v.parse().ok()) {
        rt.worker_threads(n);
    }
    rt.enable_all().build()?.block_on(async {
        let port: u16 = std::env::var("PORT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let handler = Arc::new(DefaultRequestHandler::new(Echo, InMemoryTaskStore::new()));
        let app = axum::Router::new()
            .merge(a2a_server::jsonrpc::jsonrpc_router(handler.clone()))
            .merge(a2a_server::rest::rest_router(handler))
            .merge(a2a_server::agent_card::agent_card_router(Arc::new(
                StaticAgentCard::new(card(&url)),
            )));
        // TCP_NODELAY as our agent sets it: without it the last small write of each SSE stream
        // waits for the client's delayed ACK (about 40 ms per stream on Linux).
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        println!("LISTENING {url}");
        axum::serve(listener, app).await
    })
}
