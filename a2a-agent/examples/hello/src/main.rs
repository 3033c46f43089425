//! A hello agent: `cargo run` here, then
//! `curl -s localhost:8080/.well-known/agent-card.json`.

use a2a_agent::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let card = AgentCard::identity("hello", "Says hello", "1.0.0");
    let handler = handler_fn(|ctx: RequestContext| async move {
        Ok(Reply::text(format!("Hello, {}!", ctx.text())))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    let server = AgentServer::new(card, handler)
        .validate_auth(false)
        .serve(listener)
        .await?;
    println!("serving at {}", server.url());
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
