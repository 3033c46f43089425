//! The header-read timeout counts from the accept (issue 40): a connection that sends nothing,
//! a few bytes, part of a request line or only the HTTP/2 preface is closed within
//! `header_read_timeout`, long before the idle timeout, whatever stage the HTTP/1 vs HTTP/2
//! detection is in; requests on fresh and keep-alive connections (HTTP/1.1 and h2c) are still
//! served, and an idle h2 connection whose peer ignores the GOAWAY is still closed.

use crate::common;
use crate::common::slow;

use a2a_agent::{AgentConfig, ServerHandle};
use slow::{H2_PREFACE, H2_SETTINGS};
use std::time::Duration;
#[cfg(feature = "http2")]
use tokio::io::{AsyncReadExt, AsyncWriteExt};
#[cfg(feature = "http2")]
use tokio::net::TcpStream;

const CARD: &str = "/.well-known/agent-card.json";
/// Well before the 60 s idle timeout, with a generous margin over the 1 s header timeout.
const CUT_WITHIN: Duration = Duration::from_secs(5);

/// Header-read timeout 1 s, idle timeout 60 s (or `idle_ms`).
async fn server(idle_ms: u64) -> ServerHandle {
    common::echo(AgentConfig {
        header_read_timeout: a2a_agent::config::Dur::from_millis(1000),
        idle_timeout: a2a_agent::config::Dur::from_millis(idle_ms),
        ..common::open_config()
    })
    .await
}

/// Every stalled connection is cut (concurrently, so the test takes one timeout), then the
/// server still answers a request on a fresh connection.
async fn all_cut(s: &ServerHandle, cases: &[&'static [u8]]) {
    let addr = s.local_addr();
    let tasks: Vec<_> = cases
        .iter()
        .map(|sent| tokio::spawn(slow::stalled_is_cut(addr, sent, CUT_WITHIN)))
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let (code, text, _) = slow::get_keep(addr, CARD).await;
    assert_eq!(code, 200, "{text}");
}

#[tokio::test]
async fn a_silent_connection_is_closed_within_the_header_timeout() {
    let s = server(60_000).await;
    all_cut(&s, &[b""]).await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_connection_that_sent_a_few_bytes_is_closed_within_the_header_timeout() {
    let s = server(60_000).await;
    // "P" and "PRI * HT" may still be the h2 preface (detection undecided); "G" and a partial
    // request line are HTTP/1 heads.
    all_cut(&s, &[b"P", b"PRI * HT", b"G", b"GET / HT"]).await;
    s.shutdown().await;
}

#[tokio::test]
async fn an_h2_connection_without_a_request_is_closed_within_the_header_timeout() {
    let s = server(60_000).await;
    let with_settings: &'static [u8] = [H2_PREFACE, H2_SETTINGS].concat().leak();
    all_cut(&s, &[H2_PREFACE, with_settings]).await;
    s.shutdown().await;
}

#[cfg(feature = "http2")]
#[tokio::test]
async fn keep_alive_connections_are_not_cut_by_the_first_request_deadline() {
    let s = server(60_000).await;
    let addr = s.local_addr();
    // HTTP/1.1: requests 300 ms apart (hyper's header timer runs between HTTP/1.1 requests, so
    // each gap stays under the 1 s header timeout) well past the first request's deadline.
    let (code, text, mut c) = slow::get_keep(addr, CARD).await;
    assert_eq!(code, 200, "{text}");
    for i in 0..6 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (code, text) = slow::get_on(&mut c, CARD).await;
        assert_eq!(code, 200, "keep-alive request {i}: {text}");
    }
    // h2c: the second request 2.5 s after the first, past the header timeout, within the idle
    // timeout.
    let mut h = TcpStream::connect(addr).await.unwrap();
    h.write_all(&[H2_PREFACE, H2_SETTINGS].concat())
        .await
        .unwrap();
    assert_eq!(
        h2_get(&mut h, 1, CARD).await,
        Some(true),
        "first h2 request"
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(h2_get(&mut h, 3, CARD).await, Some(true), "h2 after 2.5 s");
    s.shutdown().await;
}

#[cfg(feature = "http2")]
#[tokio::test]
async fn an_idle_h2_connection_that_ignores_the_goaway_is_closed() {
    // Idle timeout 1 s: the server sends GOAWAY and a PING; this peer answers neither.
    let s = server(1000).await;
    let mut h = TcpStream::connect(s.local_addr()).await.unwrap();
    h.write_all(&[H2_PREFACE, H2_SETTINGS].concat())
        .await
        .unwrap();
    assert_eq!(h2_get(&mut h, 1, CARD).await, Some(true));
    assert!(
        slow::read_until_closed(&mut h, Duration::from_secs(8))
            .await
            .is_ok(),
        "idle h2 connection still open"
    );
    s.shutdown().await;
}

#[cfg(feature = "http2")]
/// One HTTP/2 frame: (type, flags, stream id, payload).
async fn frame(s: &mut TcpStream) -> std::io::Result<(u8, u8, u32, Vec<u8>)> {
    let mut h = [0u8; 9];
    s.read_exact(&mut h).await?;
    let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
    let mut p = vec![0; len];
    s.read_exact(&mut p).await?;
    let id = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
    Ok((h[3], h[4], id, p))
}

#[cfg(feature = "http2")]
/// A GET on stream `id` of an h2c connection (HPACK literals, no Huffman); reads frames until
/// the stream ends. Some(status is 200), None when the connection closed or 5 s passed.
async fn h2_get(s: &mut TcpStream, id: u32, path: &str) -> Option<bool> {
    // :method GET, :scheme http (static table), :path and :authority as literals.
    let mut block = vec![0x82, 0x86, 0x04, path.len() as u8];
    block.extend_from_slice(path.as_bytes());
    block.extend_from_slice(&[0x01, 0x01, b'x']);
    let len = (block.len() as u32).to_be_bytes();
    // HEADERS with END_STREAM | END_HEADERS.
    let mut f = vec![len[1], len[2], len[3], 0x1, 0x5];
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&block);
    s.write_all(&f).await.ok()?;
    let read = async {
        let mut ok = None;
        loop {
            let (ty, flags, sid, p) = frame(s).await.ok()?;
            if sid != id {
                continue;
            }
            if ty == 0x1 && ok.is_none() {
                // :status 200 is static-table entry 8.
                ok = Some(p.first() == Some(&0x88));
            }
            if (ty == 0x0 || ty == 0x1) && flags & 0x1 != 0 {
                return ok;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .ok()
        .flatten()
}
