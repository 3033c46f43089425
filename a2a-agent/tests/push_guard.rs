//! Push notifications, the network guard: the SSRF table, DNS rebinding at delivery, no redirects
//! followed. Config operations and webhook delivery: `push.rs`.

use a2a_agent::net_guard::{GuardError, HostResolver, NetGuard};
use async_trait::async_trait;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn ssrf_table_refuses() {
    let g = NetGuard::new(false);
    let refused = [
        "http://example.com/hook",                  // plain http
        "ftp://example.com/hook",                   // scheme
        "file:///etc/passwd",                       // scheme
        "https://user:pw@example.com/",             // credentials
        "https://127.0.0.1/",                       // loopback
        "https://127.1.2.3/",                       // loopback /8
        "https://localhost/",                       // loopback name
        "https://0.0.0.0/",                         // wildcard
        "https://10.1.2.3/",                        // private
        "https://172.16.0.1/",                      // private
        "https://172.31.255.255/",                  // private
        "https://192.168.1.1/",                     // private
        "https://169.254.169.254/latest/meta-data", // AWS metadata
        "https://169.254.1.1/",                     // link-local
        "https://100.64.0.1/",                      // CGNAT
        "https://100.100.100.200/",                 // Alibaba metadata
        "https://192.0.0.192/",                     // Oracle metadata
        "https://224.0.0.1/",                       // multicast
        "https://255.255.255.255/",                 // broadcast
        "https://240.0.0.1/",                       // reserved
        "https://[::1]/",                           // IPv6 loopback
        "https://[::]/",                            // IPv6 unspecified
        "https://[fe80::1]/",                       // IPv6 link-local
        "https://[fc00::1]/",                       // ULA
        "https://[fd00:ec2::254]/",                 // AWS IPv6 metadata
        "https://[ff02::1]/",                       // IPv6 multicast
        "https://[::ffff:127.0.0.1]/",              // IPv4-mapped loopback
        "https://[::ffff:10.0.0.1]/",               // IPv4-mapped private
        "https://[::ffff:169.254.169.254]/",        // IPv4-mapped metadata
        "https://[::127.0.0.1]/",                   // IPv4-compatible loopback
        "https://[64:ff9b::a9fe:a9fe]/",            // NAT64 of 169.254.169.254
        "https://[2002:7f00:1::]/",                 // 6to4 of 127.0.0.1
        "https://[::ffff:0:7f00:1]/",               // IPv4-translated loopback
        "https://[::ffff:0:a9fe:a9fe]/",            // IPv4-translated metadata
        "https://[::ffff:0:a00:1]/",                // IPv4-translated private
        "https://[64:ff9b:1::a00:1]/",              // NAT64 local-use prefix
        "https://[64:ff9b:1:ffff::808:808]/",       // NAT64 local-use, public-looking v4
        "https://[2001:0:4136:e378::1]/",           // Teredo
        "https://[2002:a00:1::]/",                  // 6to4 of 10.0.0.1
        "https://user:pw@example.com/",             // userinfo
        "https://user@example.com/",                // username only
        "https://2130706433/",                      // decimal 127.0.0.1
        "https://0177.0.0.1/",                      // octal 127.0.0.1
        "https://0x7f.0.0.1/",                      // hex 127.0.0.1
        "https://0xa9fea9fe/",                      // hex 169.254.169.254
        "https://017700000001/",                    // octal whole 127.0.0.1
        "https://3232235777/",                      // decimal 192.168.1.1
        "https://metadata.google.internal/computeMetadata/v1/",
        "https://METADATA.GOOGLE.INTERNAL./", // case and trailing dot
        "https://metadata.azure.com/",
        "not a url",
    ];
    assert!(refused.len() >= 20);
    for u in refused {
        assert!(g.check_url(u).is_err(), "{u} must be refused");
    }
    // The reason names the normalised address.
    assert_eq!(
        g.check_url("https://2130706433/"),
        Err(GuardError::Address(
            "127.0.0.1".parse().unwrap(),
            "loopback"
        ))
    );
    assert_eq!(
        g.check_url("https://0xa9fea9fe/"),
        Err(GuardError::Address(
            "169.254.169.254".parse().unwrap(),
            "cloud metadata"
        ))
    );
}

/// Answers a public address on the first lookup and loopback afterwards.
struct Rebinding(AtomicUsize);

#[async_trait]
impl HostResolver for Rebinding {
    async fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        Ok(vec![if n == 0 {
            "93.184.216.34".parse().unwrap()
        } else {
            "127.0.0.1".parse().unwrap()
        }])
    }
}

#[tokio::test]
async fn dns_rebinding_is_refused_at_delivery() {
    // A real listener on loopback: a connection would reach it if the guard let it through.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let acc = accepted.clone();
    let server = tokio::spawn(async move {
        while let Ok((_s, _)) = listener.accept().await {
            acc.fetch_add(1, Ordering::SeqCst);
        }
    });
    let resolver = Arc::new(Rebinding(AtomicUsize::new(0)));
    let g = NetGuard::new(false).with_resolver(resolver.clone());
    let url = format!("https://hooks.example.test:{port}/hook");
    // Registration: the host resolves to a public address, accepted.
    g.check_resolved(&url).await.unwrap();
    // Delivery: the same host now answers loopback; the client's resolver refuses it.
    let client = g.client(std::time::Duration::from_secs(5)).unwrap();
    let err = client.post(&url).send().await.unwrap_err();
    assert!(err.is_connect() || err.is_request(), "{err:?}");
    assert!(
        resolver.0.load(Ordering::SeqCst) >= 2,
        "delivery resolved again"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "nothing reached loopback"
    );
    // Registration after the rebinding is refused too.
    assert!(matches!(
        g.check_resolved(&url).await,
        Err(GuardError::Address(_, "loopback"))
    ));
    server.abort();
}

#[tokio::test]
async fn guarded_client_does_not_follow_redirects() {
    use axum::response::Redirect;
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let app = axum::Router::new()
        .route(
            "/r",
            axum::routing::post(|| async { Redirect::temporary("/target") }),
        )
        .route(
            "/target",
            axum::routing::any(move || {
                h.fetch_add(1, Ordering::SeqCst);
                async { "reached" }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let g = NetGuard::new(true);
    let client = g.client(std::time::Duration::from_secs(5)).unwrap();
    let r = client
        .post(format!("http://{addr}/r"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 307);
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    server.abort();
}
