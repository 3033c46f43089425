//! The default build's listener (no `http2` feature): HTTP/1.1 requests are served, an h2c
//! connection preface is not answered with HTTP/2. Run here with `cargo test` (this package
//! builds `a2ars-agent` with default features, as a new project does).

use a2a_agent::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn serve() -> ServerHandle {
    let card = AgentCard::identity("hello", "Says hello", "1.0.0");
    let handler = handler_fn(|ctx: RequestContext| async move {
        Ok(Reply::text(format!("Hello, {}!", ctx.text())))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(card, handler)
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// Writes `bytes`, then reads until the server closes the connection or 5 s pass.
async fn exchange(addr: &str, bytes: &[u8]) -> Vec<u8> {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    let _ =
        tokio::time::timeout(std::time::Duration::from_secs(5), tcp.read_to_end(&mut out)).await;
    out
}

#[tokio::test]
async fn http1_is_served_and_h2c_is_not() {
    let server = serve().await;
    let addr = server.local_addr().to_string();

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Ada"}]}}}"#;
    let req = format!(
        "POST / HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\na2a-version: 1.0\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let resp = String::from_utf8_lossy(&exchange(&addr, req.as_bytes()).await).into_owned();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("Hello, Ada!"), "{resp}");

    // An h2c client with prior knowledge: the preface, then an empty SETTINGS frame. An HTTP/2
    // server answers with its own SETTINGS frame (type 4); this one must not.
    let mut h2 = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    h2.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    let resp = exchange(&addr, &h2).await;
    assert!(
        resp.len() < 9 || resp[3] != 4,
        "an HTTP/2 SETTINGS frame came back: {resp:?}"
    );
    assert!(
        resp.is_empty() || resp.starts_with(b"HTTP/1.1 "),
        "{}",
        String::from_utf8_lossy(&resp)
    );
    server.shutdown().await;
}
