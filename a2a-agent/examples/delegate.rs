//! Delegation between two agents on loopback: a front agent hands every message to a specialist
//! with `RequestContext::delegate`, forwarding its progress, and answers with what it said.
//! Prints the front agent's stream and the link in its task's metadata.
//!
//! Run: `cargo run -p a2ars-agent --example delegate`.

use a2a_agent::delegate::DELEGATIONS_KEY;
use a2a_agent::{AgentCard, AgentServer, Reply, RequestContext, handler_fn};
use a2a_client::A2aClient;
use a2a_types::v1::{Message, SendMessageRequest, StreamResponse};
use futures::StreamExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let specialist = handler_fn(|ctx: RequestContext| async move {
        ctx.emit("specialist: looking into it").await;
        Ok(Reply::text(format!(
            "'{}' has {} letters",
            ctx.text(),
            ctx.text().len()
        )))
    });
    let specialist = AgentServer::new(
        AgentCard::identity("specialist", "counts letters", "1.0.0"),
        specialist,
    )
    .validate_auth(false) // local only
    .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await?)
    .await?;

    let to = specialist.url().to_owned();
    let front = handler_fn(move |ctx: RequestContext| {
        let to = to.clone();
        async move {
            let child = ctx
                .delegate(to)
                .forward_progress()
                .send(Message::user_text(ctx.text()))
                .await?;
            Ok(Reply::text(format!(
                "the specialist says: {}",
                child.text()
            )))
        }
    });
    let front = AgentServer::new(AgentCard::identity("front", "delegates", "1.0.0"), front)
        .validate_auth(false)
        .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await?)
        .await?;

    let client = A2aClient::connect(front.url()).await?;
    let mut events = client
        .stream(SendMessageRequest::new(Message::user_text("delegation")))
        .await?;
    let mut task_id = String::new();
    while let Some(ev) = events.next().await {
        match ev? {
            StreamResponse::Task(t) => task_id = t.id,
            StreamResponse::StatusUpdate(s) => println!(
                "{}: {}",
                s.status.state.as_str(),
                s.status.message.map(|m| m.text()).unwrap_or_default()
            ),
            other => println!("{other:?}"),
        }
    }
    let task = client.get_task(&task_id, Some(0)).await?;
    let links = task.metadata.and_then(|mut m| m.remove(DELEGATIONS_KEY));
    println!("{DELEGATIONS_KEY}: {}", links.unwrap_or_default());

    front.shutdown().await;
    specialist.shutdown().await;
    Ok(())
}
