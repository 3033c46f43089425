//! Slow and greedy clients over raw TCP, shared by the agent's and the gateway's edge tests
//! (the gateway includes this file with `#[path]`): both servers use `a2a_agent::listen`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the peer closes (Ok(bytes)) or `within` passes (Err(bytes so far)).
pub async fn read_until_closed(s: &mut TcpStream, within: Duration) -> Result<Vec<u8>, Vec<u8>> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Err(_) => return Err(out),
            Ok(Ok(0)) | Ok(Err(_)) => return Ok(out),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// Headers dribbled one byte every 200 ms never complete: the server closes the connection.
pub async fn slowloris_is_cut(addr: SocketAddr) {
    let s = TcpStream::connect(addr).await.unwrap();
    let (mut r, mut w) = s.into_split();
    let dribble = tokio::spawn(async move {
        let _ = w.write_all(b"POST / HTTP/1.1\r\nHost: x\r\n").await;
        for b in
            b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                .iter()
        {
            if w.write_all(&[*b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(8), async {
        loop {
            match r.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    dribble.abort();
    assert!(closed.is_ok(), "slowloris connection still open");
}

/// Headers complete, body announced but only partly sent: 408 with a JSON error, then close.
pub async fn slow_body_gets_408(addr: SocketAddr, path: &str, extra_headers: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: 100\r\n\r\n{{\"jsonrpc\""
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let got = read_until_closed(&mut s, Duration::from_secs(8))
        .await
        .expect("slow body connection not closed");
    let text = String::from_utf8_lossy(&got).into_owned();
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(body).expect("408 body is JSON");
    // 1.0 / JSON-RPC: {"error": ...}; 0.3 HTTP+JSON: {"code", "message"}.
    assert!(
        v.get("error").is_some() || (v.get("code").is_some() && v.get("message").is_some()),
        "{v}"
    );
    text
}

/// One complete request, then nothing: the keep-alive connection is closed after the idle
/// timeout.
pub async fn idle_is_closed(addr: SocketAddr, get_path: &str) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {get_path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let got = read_until_closed(&mut s, Duration::from_secs(8))
        .await
        .expect("idle keep-alive connection not closed");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
}

/// A complete GET on a fresh connection, keeping it open; returns the status line's code.
pub async fn get_keep(addr: SocketAddr, path: &str) -> (u16, String, TcpStream) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let (code, text) = get_on(&mut s, path).await;
    (code, text, s)
}

/// A complete GET on an open connection (keep-alive); returns the status line's code (0 when
/// the connection was closed) and the response.
pub async fn get_on(s: &mut TcpStream, path: &str) -> (u16, String) {
    if s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .is_err()
    {
        return (0, String::new());
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    // Enough for the head and a small body.
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                got.extend_from_slice(&buf[..n]);
                let t = String::from_utf8_lossy(&got);
                if let Some((h, b)) = t.split_once("\r\n\r\n") {
                    let len = h
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if b.len() >= len {
                        break;
                    }
                }
            }
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

/// The HTTP/2 connection preface (h2c with prior knowledge).
pub const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// An empty HTTP/2 SETTINGS frame.
pub const H2_SETTINGS: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0];

/// A connection that sends `sent` (maybe nothing) and then stalls is closed by the server
/// within `within`.
pub async fn stalled_is_cut(addr: SocketAddr, sent: &[u8], within: Duration) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    if !sent.is_empty() {
        s.write_all(sent).await.unwrap();
    }
    let shown = String::from_utf8_lossy(&sent[..sent.len().min(30)]).into_owned();
    assert!(
        read_until_closed(&mut s, within).await.is_ok(),
        "a connection that sent {shown:?} and stalled is still open after {within:?}"
    );
}

/// With the cap at `cap`: `cap` connections are served and kept, the next gets 503 with a JSON
/// error, and once one closes a normal request is served again.
pub async fn cap_refuses_then_serves(addr: SocketAddr, cap: usize, path: &str) {
    let mut held = Vec::new();
    for i in 0..cap {
        let (code, text, s) = get_keep(addr, path).await;
        assert_eq!(code, 200, "connection {i} under the cap: {text}");
        held.push(s);
    }
    let (code, text, _s) = get_keep(addr, path).await;
    assert_eq!(code, 503, "over the cap: {text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(body).expect("503 body is JSON");
    // 1.0 / JSON-RPC: {"error": ...}; 0.3 HTTP+JSON: {"code", "message"}.
    assert!(
        v.get("error").is_some() || (v.get("code").is_some() && v.get("message").is_some()),
        "{v}"
    );
    drop(_s);
    held.pop();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, _, _) = get_keep(addr, path).await;
        if code == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "not served again below the cap");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(held);
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (a flood test holds thousands
/// of sockets); returns the soft limit now in force.
pub fn raise_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 1024;
        }
        let want = libc::rlimit {
            rlim_cur: r.rlim_max,
            rlim_max: r.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
            r = want;
        }
    }
    #[allow(clippy::unnecessary_cast)]
    let cur = r.rlim_cur as u64;
    cur
}

/// Keeps `flood` silent connections open against `addr` (each reconnects as soon as the server
/// drops it) while `clients` normal clients each send `per_client` GETs of `path` on fresh
/// connections; returns (requests answered 200, requests sent).
pub async fn normal_requests_under_a_silent_flood(
    addr: SocketAddr,
    flood: usize,
    clients: usize,
    per_client: usize,
    path: &str,
) -> (usize, usize) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let held = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut flooders = Vec::new();
    for _ in 0..flood {
        let stop = stop.clone();
        let held = held.clone();
        flooders.push(tokio::spawn(async move {
            let mut buf = [0u8; 64];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok(mut s) = TcpStream::connect(addr).await else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                held.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // Silent until the server closes it (or the test ends).
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    match tokio::time::timeout(Duration::from_millis(200), s.read(&mut buf)).await {
                        Ok(Ok(0)) | Ok(Err(_)) => break,
                        _ => {}
                    }
                }
                held.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            }
        }));
    }
    // Let the flood fill the cap before the normal clients start.
    let deadline = Instant::now() + Duration::from_secs(10);
    while held.load(std::sync::atomic::Ordering::Relaxed) < flood / 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let path: std::sync::Arc<str> = path.into();
    let mut normal = Vec::new();
    for _ in 0..clients {
        let path = path.clone();
        normal.push(tokio::spawn(async move {
            let mut ok = 0;
            for _ in 0..per_client {
                let Ok(Ok(mut s)) =
                    tokio::time::timeout(Duration::from_secs(8), TcpStream::connect(addr)).await
                else {
                    continue;
                };
                if get_on(&mut s, &path).await.0 == 200 {
                    ok += 1;
                }
            }
            ok
        }));
    }
    let mut ok = 0;
    for n in normal {
        ok += n.await.unwrap_or(0);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for f in flooders {
        let _ = f.await;
    }
    (ok, clients * per_client)
}
