//! Card discovery against a local axum server: A2A-Version sent, ETag/304, max-age, size limit.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_client::discovery::{CacheStatus, CardResolver, Clock, DiscoveryError, TtlClamp};
use a2a_client::select::{Binding, Speaks, Version};
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

#[derive(Debug)]
struct ManualClock(Mutex<Instant>);

impl ManualClock {
    fn advance(&self, d: Duration) {
        *self.0.lock().unwrap() += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

#[derive(Default)]
struct Seen {
    hits: AtomicUsize,
    not_modified: AtomicUsize,
    versions: Mutex<Vec<String>>,
    cache_control: Mutex<String>,
    etag: Mutex<String>,
}

const CARD: &str = r#"{"name":"x","description":"d","version":"1",
 "supportedInterfaces":[{"url":"http://127.0.0.1:1/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t"}],
 "capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}"#;

async fn card(State(seen): State<Arc<Seen>>, headers: HeaderMap) -> Response {
    seen.hits.fetch_add(1, Ordering::SeqCst);
    seen.versions.lock().unwrap().push(
        headers
            .get("a2a-version")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
    );
    let etag = seen.etag.lock().unwrap().clone();
    let cc = seen.cache_control.lock().unwrap().clone();
    if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        == Some(etag.as_str())
    {
        seen.not_modified.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, etag), (header::CACHE_CONTROL, cc)],
        )
            .into_response();
    }
    (
        [
            (header::ETAG, etag),
            (header::CACHE_CONTROL, cc),
            (header::CONTENT_TYPE, "application/json".to_string()),
        ],
        CARD,
    )
        .into_response()
}

async fn big() -> Response {
    let mut body = String::from(r#"{"name":""#);
    body.push_str(&"x".repeat(5000));
    body.push_str(r#""}"#);
    body.into_response()
}

async fn chunked_big() -> Response {
    let chunks = (0..50).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b' '; 200])));
    axum::body::Body::from_stream(futures::stream::iter(chunks)).into_response()
}

async fn serve(seen: Arc<Seen>) -> (String, tokio::task::JoinHandle<()>) {
    let app = Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/big/.well-known/agent-card.json", get(big))
        .route("/chunked/.well-known/agent-card.json", get(chunked_big))
        .route(
            "/missing/.well-known/agent-card.json",
            get(|| async { (StatusCode::NOT_FOUND, "nope") }),
        )
        .route(
            "/garbage/.well-known/agent-card.json",
            get(|| async { "{not json" }),
        )
        .with_state(seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (format!("http://{addr}"), handle)
}

fn setup(cc: &str) -> (Arc<Seen>, Arc<ManualClock>) {
    let seen = Arc::new(Seen::default());
    *seen.cache_control.lock().unwrap() = cc.to_string();
    *seen.etag.lock().unwrap() = "\"v1\"".to_string();
    (seen, Arc::new(ManualClock(Mutex::new(Instant::now()))))
}

#[tokio::test]
async fn max_age_then_revalidate_with_etag() {
    let (seen, clock) = setup("max-age=60");
    let (base, server) = serve(seen.clone()).await;
    let resolver = CardResolver::new(reqwest::Client::new()).with_clock(clock.clone());

    let first = resolver.fetch(&base).await.unwrap();
    assert_eq!(first.cache, CacheStatus::Fetched);
    assert_eq!(first.etag.as_deref(), Some("\"v1\""));
    assert!(first.is_v1());
    let sel = first.select(&Speaks::all()).unwrap();
    assert_eq!(
        (sel.binding, sel.version, sel.tenant.as_deref()),
        (Binding::JsonRpc, Version::V1, Some("t"))
    );

    // Fresh: no request at all.
    clock.advance(Duration::from_secs(59));
    let second = resolver.fetch(&base).await.unwrap();
    assert_eq!(second.cache, CacheStatus::Fresh);
    assert_eq!(seen.hits.load(Ordering::SeqCst), 1);

    // Stale: conditional request, 304, cached body reused and freshness renewed.
    clock.advance(Duration::from_secs(2));
    let third = resolver.fetch(&base).await.unwrap();
    assert_eq!(third.cache, CacheStatus::Revalidated);
    assert_eq!(third.body, first.body);
    assert_eq!(seen.hits.load(Ordering::SeqCst), 2);
    assert_eq!(seen.not_modified.load(Ordering::SeqCst), 1);
    let fourth = resolver.fetch(&base).await.unwrap();
    assert_eq!(fourth.cache, CacheStatus::Fresh);
    assert_eq!(seen.hits.load(Ordering::SeqCst), 2);

    // Changed on the server: stale again, ETag no longer matches, full 200.
    *seen.etag.lock().unwrap() = "\"v2\"".to_string();
    clock.advance(Duration::from_secs(61));
    let fifth = resolver.fetch(&base).await.unwrap();
    assert_eq!(fifth.cache, CacheStatus::Fetched);
    assert_eq!(fifth.etag.as_deref(), Some("\"v2\""));

    assert!(seen.versions.lock().unwrap().iter().all(|v| v == "1.0"));
    server.abort();
}

#[tokio::test]
async fn no_cache_always_revalidates_and_no_store_never_caches() {
    let (seen, clock) = setup("no-cache");
    let (base, server) = serve(seen.clone()).await;
    let resolver = CardResolver::new(reqwest::Client::new()).with_clock(clock.clone());
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fetched
    );
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Revalidated
    );
    assert_eq!(seen.hits.load(Ordering::SeqCst), 2);

    *seen.cache_control.lock().unwrap() = "no-store".to_string();
    resolver.clear();
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fetched
    );
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fetched
    );
    assert_eq!(seen.not_modified.load(Ordering::SeqCst), 1);
    server.abort();
}

#[tokio::test]
async fn configured_version_header_is_sent() {
    let (seen, clock) = setup("");
    let (base, server) = serve(seen.clone()).await;
    let resolver = CardResolver::new(reqwest::Client::new())
        .with_clock(clock)
        .with_a2a_version("0.3");
    resolver.fetch(&base).await.unwrap();
    assert_eq!(seen.versions.lock().unwrap().as_slice(), ["0.3"]);
    server.abort();
}

#[tokio::test]
async fn size_limit_and_errors() {
    let (seen, _) = setup("");
    let (base, server) = serve(seen).await;
    let resolver = CardResolver::new(reqwest::Client::new()).with_max_bytes(4096);
    let err = resolver.fetch(&format!("{base}/big")).await.unwrap_err();
    assert!(
        matches!(err, DiscoveryError::TooLarge { limit: 4096, .. }),
        "{err}"
    );
    let err = resolver
        .fetch(&format!("{base}/chunked"))
        .await
        .unwrap_err();
    assert!(matches!(err, DiscoveryError::TooLarge { .. }), "{err}");
    let err = resolver
        .fetch(&format!("{base}/missing"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DiscoveryError::Status { status: 404, ref body, .. } if body == "nope"),
        "{err}"
    );
    let err = resolver
        .fetch(&format!("{base}/garbage"))
        .await
        .unwrap_err();
    assert!(matches!(err, DiscoveryError::Parse { .. }), "{err}");
    // Within the limit the same large card is fine.
    let ok = CardResolver::new(reqwest::Client::new())
        .fetch(&format!("{base}/big"))
        .await
        .unwrap();
    assert_eq!(ok.body.len(), 5011);
    server.abort();
}

/// A card behind the same key as the agent (a governed gateway card) is read by `connect`.
#[tokio::test]
async fn connect_sends_header_credentials_with_the_card_request() {
    async fn guarded(headers: HeaderMap) -> Response {
        let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if key == Some("k1") && bearer == Some("Bearer t1") {
            ([(header::CONTENT_TYPE, "application/json")], CARD).into_response()
        } else {
            StatusCode::UNAUTHORIZED.into_response()
        }
    }
    let app = Router::new().route("/.well-known/agent-card.json", get(guarded));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let without = a2a_client::ClientBuilder::default().connect(&base).await;
    assert!(
        without.is_err(),
        "a card behind a key must not be read without it"
    );

    let client = a2a_client::ClientBuilder::default()
        .credential(a2a_client::auth::Credential::api_key_header(
            "X-API-Key",
            "k1",
        ))
        .credential(a2a_client::auth::Credential::Bearer("t1".into()))
        .connect(&base)
        .await
        .expect("card read with the key");
    assert_eq!(client.interface().tenant.as_deref(), Some("t"));
    server.abort();
}

fn clamp(min: u64, max: u64) -> TtlClamp {
    TtlClamp {
        min: Duration::from_secs(min),
        max: Duration::from_secs(max),
        default: Duration::from_secs(300),
    }
}

#[tokio::test]
async fn ttl_clamp_bounds_the_peer_max_age() {
    // max-age=5 is raised to the 30 s minimum.
    let (seen, clock) = setup("max-age=5");
    let (base, server) = serve(seen.clone()).await;
    let resolver = CardResolver::new(reqwest::Client::new())
        .with_clock(clock.clone())
        .with_ttl_clamp(clamp(30, 3600));
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fetched
    );
    clock.advance(Duration::from_secs(29));
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fresh
    );
    clock.advance(Duration::from_secs(2));
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Revalidated
    );
    assert_eq!(seen.not_modified.load(Ordering::SeqCst), 1);

    // A huge max-age is cut to the maximum.
    *seen.cache_control.lock().unwrap() = "max-age=99999".to_string();
    resolver.clear();
    resolver.fetch(&base).await.unwrap();
    clock.advance(Duration::from_secs(3599));
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fresh
    );
    clock.advance(Duration::from_secs(2));
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Revalidated
    );

    // no-store is kept for the minimum under a clamp (never without one: see above).
    *seen.cache_control.lock().unwrap() = "no-store".to_string();
    resolver.clear();
    resolver.fetch(&base).await.unwrap();
    clock.advance(Duration::from_secs(10));
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fresh
    );
    server.abort();
}

#[tokio::test]
async fn revalidate_asks_again_even_when_fresh() {
    let (seen, clock) = setup("max-age=600");
    let (base, server) = serve(seen.clone()).await;
    let resolver = CardResolver::new(reqwest::Client::new()).with_clock(clock);
    resolver.fetch(&base).await.unwrap();
    assert_eq!(
        resolver.fetch(&base).await.unwrap().cache,
        CacheStatus::Fresh
    );
    let again = resolver.revalidate(&base).await.unwrap();
    assert_eq!(again.cache, CacheStatus::Revalidated);
    assert_eq!(
        seen.not_modified.load(Ordering::SeqCst),
        1,
        "sent If-None-Match"
    );
    assert_eq!(seen.hits.load(Ordering::SeqCst), 2);
    // Nothing cached: revalidate is a plain fetch.
    resolver.clear();
    assert_eq!(
        resolver.revalidate(&base).await.unwrap().cache,
        CacheStatus::Fetched
    );
    server.abort();
}

#[tokio::test]
async fn fallback_url_stale_if_error_and_card_check() {
    let fail = Arc::new(AtomicBool::new(false));
    let f = fail.clone();
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let f = f.clone();
                async move {
                    if f.load(Ordering::SeqCst) {
                        return StatusCode::SERVICE_UNAVAILABLE.into_response();
                    }
                    ([(header::CACHE_CONTROL, "max-age=60")], CARD).into_response()
                }
            }),
        )
        .route(
            "/nameless/.well-known/agent-card.json",
            get(|| async { r#"{"url":"http://h/"}"# }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let (_, clock) = setup("");
    fn named(body: &[u8]) -> Result<(), String> {
        let v: serde_json::Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        v.get("name")
            .map(|_| ())
            .ok_or_else(|| "not an Agent Card".to_string())
    }
    let resolver = CardResolver::new(reqwest::Client::new())
        .with_clock(clock.clone())
        .with_ttl_clamp(clamp(30, 3600))
        .with_stale_if_error(true)
        .with_card_check(named);

    // The path's card is missing (404): the root card is used and cached under the path's URL.
    let primary = CardResolver::card_url(&format!("{base}/a2a")).unwrap();
    let root = CardResolver::card_url(&base).unwrap();
    let got = resolver
        .fetch_url_or(primary.clone(), Some(root.clone()), false)
        .await
        .unwrap();
    assert_eq!(
        (got.cache, got.url.clone()),
        (CacheStatus::Fetched, root.clone())
    );
    let again = resolver
        .fetch_url_or(primary.clone(), Some(root.clone()), false)
        .await
        .unwrap();
    assert_eq!(again.cache, CacheStatus::Fresh);

    // Both fail once stale: the cached card is served, marked stale.
    fail.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(61));
    let stale = resolver
        .fetch_url_or(primary.clone(), Some(root.clone()), false)
        .await
        .unwrap();
    assert_eq!(stale.cache, CacheStatus::Stale);
    assert_eq!(stale.body, got.body);
    // Without a cached card the primary URL's error is returned.
    resolver.forget(&primary);
    let err = resolver
        .fetch_url_or(primary.clone(), Some(root), false)
        .await
        .unwrap_err();
    assert!(
        matches!(err, DiscoveryError::Status { status: 404, .. }),
        "{err}"
    );

    // A body the check refuses is an error and is not cached.
    let err = resolver
        .fetch(&format!("{base}/nameless"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, DiscoveryError::Invalid { ref reason, .. } if reason == "not an Agent Card"),
        "{err}"
    );
    server.abort();
}
