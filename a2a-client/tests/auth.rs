//! Auth: API key placements and bearer on the wire; OAuth2 client credentials against a local
//! token endpoint (cached, refreshed with refresh_token, re-granted when the refresh is refused).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_client::auth::{
    ApiKeyLocation, AuthError, ClientAuthMethod, Credential, OAuth2ClientCredentials,
};
use a2a_client::discovery::Clock;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

#[derive(Debug)]
struct ManualClock(Mutex<Instant>);

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

#[derive(Default)]
struct TokenServer {
    grants: AtomicUsize,
    refreshes: AtomicUsize,
    refuse_refresh: std::sync::atomic::AtomicBool,
    forms: Mutex<Vec<HashMap<String, String>>>,
    auth_headers: Mutex<Vec<String>>,
}

async fn token(
    State(s): State<Arc<TokenServer>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    s.auth_headers.lock().unwrap().push(
        headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
    );
    s.forms.lock().unwrap().push(form.clone());
    match form.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {
            let n = s.grants.fetch_add(1, Ordering::SeqCst) + 1;
            Json(
                json!({"access_token": format!("grant-{n}"), "token_type": "Bearer",
                        "expires_in": 120, "refresh_token": format!("refresh-{n}")}),
            )
            .into_response()
        }
        Some("refresh_token") if !s.refuse_refresh.load(Ordering::SeqCst) => {
            let n = s.refreshes.fetch_add(1, Ordering::SeqCst) + 1;
            Json(json!({"access_token": format!("refreshed-{n}"), "token_type": "bearer", "expires_in": 120}))
                .into_response()
        }
        _ => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": "no"})),
        )
            .into_response(),
    }
}

async fn echo(
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Json<serde_json::Value> {
    let h = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    Json(json!({"x-api-key": h("x-api-key"), "cookie": h("cookie"),
                "authorization": h("authorization"), "query": q}))
}

async fn serve(state: Arc<TokenServer>) -> (String, tokio::task::JoinHandle<()>) {
    let app = Router::new()
        .route("/token", post(token))
        .route("/echo", get(echo))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), handle)
}

async fn seen_by_server(base: &str, cred: &Credential) -> serde_json::Value {
    let http = reqwest::Client::new();
    let req = cred.apply(http.get(format!("{base}/echo"))).await.unwrap();
    req.send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn api_keys_and_bearer_reach_the_server() {
    let (base, server) = serve(Arc::default()).await;
    let v = seen_by_server(&base, &Credential::api_key_header("X-API-Key", "k1")).await;
    assert_eq!(v["x-api-key"], "k1");
    let q = Credential::ApiKey {
        location: ApiKeyLocation::Query,
        name: "key".into(),
        value: "k 2".into(),
    };
    assert_eq!(seen_by_server(&base, &q).await["query"]["key"], "k 2");
    let c = Credential::ApiKey {
        location: ApiKeyLocation::Cookie,
        name: "session".into(),
        value: "k3".into(),
    };
    assert_eq!(seen_by_server(&base, &c).await["cookie"], "session=k3");
    let b = Credential::Bearer("tok".into());
    assert_eq!(
        seen_by_server(&base, &b).await["authorization"],
        "Bearer tok"
    );
    server.abort();
}

#[tokio::test]
async fn oauth2_token_is_cached_refreshed_and_regranted() {
    let state = Arc::new(TokenServer::default());
    let (base, server) = serve(state.clone()).await;
    let clock = Arc::new(ManualClock(Mutex::new(Instant::now())));
    let oauth = Arc::new(
        OAuth2ClientCredentials::new(
            reqwest::Client::new(),
            format!("{base}/token").parse().unwrap(),
            "client id",
            "s3cret",
        )
        .with_scopes(["a2a.read", "a2a.write"])
        .with_refresh_margin(Duration::from_secs(20))
        .with_clock(clock.clone()),
    );
    let cred = Credential::OAuth2(oauth.clone());

    assert_eq!(
        seen_by_server(&base, &cred).await["authorization"],
        "Bearer grant-1"
    );
    assert_eq!(
        seen_by_server(&base, &cred).await["authorization"],
        "Bearer grant-1"
    );
    assert_eq!(
        state.grants.load(Ordering::SeqCst),
        1,
        "token must be cached"
    );
    {
        let forms = state.forms.lock().unwrap();
        assert_eq!(forms[0]["scope"], "a2a.read a2a.write");
        // HTTP Basic over the form-encoded id: base64("client+id:s3cret").
        assert_eq!(
            state.auth_headers.lock().unwrap()[0],
            "Basic Y2xpZW50K2lkOnMzY3JldA=="
        );
    }

    // 120 s lifetime minus the 20 s margin: still cached at 99 s, renewed at 101 s.
    *clock.0.lock().unwrap() += Duration::from_secs(99);
    assert_eq!(oauth.token().await.unwrap(), "grant-1");
    *clock.0.lock().unwrap() += Duration::from_secs(2);
    assert_eq!(oauth.token().await.unwrap(), "refreshed-1");
    assert_eq!(state.forms.lock().unwrap()[1]["refresh_token"], "refresh-1");

    // The refreshed answer has no refresh_token: the next renewal is a new grant.
    *clock.0.lock().unwrap() += Duration::from_secs(101);
    assert_eq!(oauth.token().await.unwrap(), "grant-2");

    // A refused refresh falls back to a new grant.
    state.refuse_refresh.store(true, Ordering::SeqCst);
    *clock.0.lock().unwrap() += Duration::from_secs(101);
    assert_eq!(oauth.token().await.unwrap(), "grant-3");

    // invalidate() (after a 401) forces a new grant even while cached.
    oauth.invalidate().await;
    assert_eq!(oauth.token().await.unwrap(), "grant-4");
    server.abort();
}

#[tokio::test]
async fn oauth2_client_secret_post_and_refusal() {
    let state = Arc::new(TokenServer::default());
    let (base, server) = serve(state.clone()).await;
    let oauth = OAuth2ClientCredentials::new(
        reqwest::Client::new(),
        format!("{base}/token").parse().unwrap(),
        "id",
        "sec",
    )
    .with_auth_method(ClientAuthMethod::Post);
    assert_eq!(oauth.token().await.unwrap(), "grant-1");
    {
        let forms = state.forms.lock().unwrap();
        assert_eq!(forms[0]["client_id"], "id");
        assert_eq!(forms[0]["client_secret"], "sec");
        assert!(!forms[0].contains_key("scope"));
        assert_eq!(state.auth_headers.lock().unwrap()[0], "");
    }
    let bad = OAuth2ClientCredentials::new(
        reqwest::Client::new(),
        format!("{base}/echo").parse().unwrap(),
        "id",
        "sec",
    );
    let err = bad.token().await.unwrap_err();
    assert!(
        matches!(err, AuthError::Refused { status: 405, .. }),
        "{err}"
    );
    server.abort();
}
