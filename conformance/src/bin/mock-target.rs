//! `mock-target`: a tiny loopback HTTP server used only by the conformance crate's own tests to
//! exercise the wire runner (URL discovery, headers, JSON bodies, SSE, captures). Not an A2A server.
//!
//! Routes: `GET /card` (JSON with a generated id), `POST /echo` (echoes the JSON body, `X-Echo-Method`
//! and `X-Seen-Token` = the request's `X-Target-Token` headers), `GET /stream` (two SSE events),
//! anything else 404. One request per connection.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    println!("mock-target listening on http://{addr}");
    println!("token: tok-{}", addr.port());
    loop {
        let (sock, _) = listener.accept().await?;
        tokio::spawn(async move {
            let _ = serve(sock).await;
        });
    }
}

async fn serve(mut sock: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > 64 * 1024 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let first = head.lines().next().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let header = |name: &str| {
        head.lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
    };
    let len: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let token = header("x-target-token").unwrap_or_default();
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let (status, ctype, extra, payload) = match (method.as_str(), path.as_str()) {
        ("GET", "/card") => (
            "200 OK",
            "application/json",
            String::new(),
            format!(
                "{{\"name\":\"mock\",\"id\":\"{:08x}-0000-4000-8000-{:012x}\"}}",
                (nanos as u64) & 0xffff_ffff,
                (nanos as u64) & 0xffff_ffff_ffff
            ),
        ),
        ("POST", "/echo") => (
            "200 OK",
            "application/json",
            format!("X-Echo-Method: POST\r\nX-Seen-Token: {token}\r\n"),
            String::from_utf8_lossy(&body).into_owned(),
        ),
        ("GET", "/stream") => (
            "200 OK",
            "text/event-stream",
            String::new(),
            ": comment\n\ndata: {\"n\":1}\n\ndata: {\"n\":2}\n\n".to_string(),
        ),
        _ => (
            "404 Not Found",
            "application/json",
            String::new(),
            "{\"error\":\"not found\"}".to_string(),
        ),
    };
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    );
    sock.write_all(resp.as_bytes()).await?;
    sock.shutdown().await
}
