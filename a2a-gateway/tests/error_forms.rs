//! Every error the gateway writes is JSON in the caller's A2A form: a table of raw HTTP requests
//! over a TcpStream (oversize bodies, unknown paths, wrong methods, bad path bytes, admin without
//! a token, JSON-RPC ids of every JSON type, big integer ids, batches), each checked for status,
//! JSON content type and the binding's error shape. A counting peer proves refused requests are
//! never forwarded.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_gateway::errors::Version;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use common::*;
use serde_json::{Value, json};

/// A 1.0 JSON-RPC peer that counts the requests it gets and answers a completed task.
async fn counting_peer() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let card = crate::common::echo::echo_card(&url, Version::V1);
    let seen = Arc::new(AtomicUsize::new(0));
    let s2 = seen.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let card = card.clone();
                async move { axum::Json(card).into_response() }
            }),
        )
        .route(
            "/",
            post(move |body: String| {
                let seen = s2.clone();
                async move {
                    seen.fetch_add(1, Ordering::SeqCst);
                    let req: Value = serde_json::from_str(&body).unwrap_or_default();
                    let task = json!({"id": "t1", "contextId": "c1",
                        "status": {"state": "TASK_STATE_COMPLETED"}});
                    axum::Json(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"task": task}}))
                        .into_response()
                }
            }),
        );
    let join = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, seen, join)
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) text: String,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Writes `head` (+ `body`) and reads one answer: the headers, then `Content-Length` bytes.
/// A bounded read timeout makes a server that waits for an unsent body fail the test.
pub(crate) fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    if !body.is_empty() {
        // The server may answer and close before reading everything; that is fine.
        let _ = s.write_all(body);
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = s.read(&mut chunk).expect("answer within the read timeout");
        assert!(n > 0, "connection closed before an answer");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
    };
    let head_text = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head_text.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse().unwrap())
        .expect("error answers carry a Content-Length");
    let mut rest = buf[header_end + 4..].to_vec();
    while rest.len() < len {
        let n = s.read(&mut chunk).expect("body within the read timeout");
        assert!(n > 0, "connection closed mid-body");
        rest.extend_from_slice(&chunk[..n]);
    }
    Answer {
        status,
        headers,
        text: String::from_utf8_lossy(&rest[..len]).to_string(),
    }
}

fn request(method: &str, path: &str, extra: &str, body: &[u8]) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    )
}

/// (name, method, path, extra headers, body, status, shape).
type Case<'a> = (&'a str, &'a str, &'a str, String, &'a [u8], u16, Shape);

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// JSON-RPC error object with `id: null`, 0.3 form (`data` is an object).
    Rpc03,
    /// 1.0 `google.rpc.Status` with `error.code` = the HTTP status.
    Status,
}

fn check(name: &str, a: &Answer, status: u16, shape: Shape) -> Value {
    assert_eq!(a.status, status, "{name}: {}", a.text);
    let ct = a.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("application/json") || ct.starts_with("application/a2a+json"),
        "{name}: content-type {ct:?}"
    );
    let v: Value =
        serde_json::from_str(&a.text).unwrap_or_else(|e| panic!("{name}: {e}: {}", a.text));
    match shape {
        Shape::Rpc03 => {
            assert_eq!(v["jsonrpc"], "2.0", "{name}: {v}");
            assert!(v["id"].is_null(), "{name}: {v}");
            assert!(v["error"]["code"].is_i64(), "{name}: {v}");
            assert!(v["error"]["message"].is_string(), "{name}: {v}");
            assert!(v["error"]["data"]["code"].is_string(), "{name}: {v}");
        }
        Shape::Status => {
            assert_eq!(v["error"]["code"], json!(status), "{name}: {v}");
            assert!(v["error"]["status"].is_string(), "{name}: {v}");
            assert!(v["error"]["message"].is_string(), "{name}: {v}");
            assert!(
                v["error"]["details"][0]["reason"].is_string(),
                "{name}: {v}"
            );
        }
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_is_a2a_json() {
    let (peer_url, seen, peer) = counting_peer().await;
    let env = env(Version::V1).await;
    env.register("ws1", "count", &peer_url, None);
    let addr = env.gw.local_addr();
    let auth = format!("Authorization: Bearer {}\r\n", env.key);
    let admin = format!("Authorization: Bearer {ADMIN}\r\n");
    // HTTP+JSON callers name 1.0 here (a 0.3 one gets the 0.3 form: tests/caller_forms.rs).
    let v1 = format!("{auth}A2A-Version: 1.0\r\n");
    let run = move |head: String, body: Vec<u8>| {
        tokio::task::spawn_blocking(move || exchange(addr, &head, &body))
    };

    // Declared Content-Length over the limit: answered at once, the body never sent.
    for (path, shape, extra) in [
        ("/a2a/count", Shape::Rpc03, &auth),
        ("/a2a/count/v1/message:send", Shape::Status, &v1),
        ("/admin/workspaces", Shape::Status, &auth),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n{extra}Content-Length: 99999999999\r\n\r\n"
        );
        let a = run(head, Vec::new()).await.unwrap();
        let v = check(&format!("declared {path}"), &a, 413, shape);
        assert_eq!(a.header("connection"), Some("close"), "{path}");
        assert!(v.to_string().contains("a2a_payload_too_large"), "{v}");
    }

    // An actual body over the limit (chunked, no Content-Length).
    let big = vec![b' '; a2a_gateway::server::MAX_REQUEST_BYTES + 4096];
    let mut chunked = format!("{:x}\r\n", big.len()).into_bytes();
    chunked.extend_from_slice(&big);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let head = format!(
        "POST /a2a/count/v1/message:send HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n{v1}Transfer-Encoding: chunked\r\n\r\n"
    );
    let a = run(head, chunked).await.unwrap();
    check("actual body", &a, 413, Shape::Status);

    let cases: Vec<Case> = vec![
        (
            "404 unknown path",
            "GET",
            "/nope",
            auth.clone(),
            b"",
            404,
            Shape::Status,
        ),
        (
            "404 under v1",
            "POST",
            "/a2a/count/v1/nope",
            v1.clone(),
            b"{}",
            404,
            Shape::Status,
        ),
        (
            "404 deep",
            "GET",
            "/a2a/count/v1/tasks/t/x/y/z",
            v1.clone(),
            b"",
            404,
            Shape::Status,
        ),
        (
            "404 admin",
            "GET",
            "/admin/nope",
            admin.clone(),
            b"",
            404,
            Shape::Status,
        ),
        (
            "405 JSON-RPC GET",
            "GET",
            "/a2a/count",
            auth.clone(),
            b"",
            405,
            Shape::Rpc03,
        ),
        (
            "405 REST",
            "DELETE",
            "/a2a/count/v1/message:send",
            v1.clone(),
            b"",
            405,
            Shape::Status,
        ),
        (
            "405 admin",
            "GET",
            "/admin/keys/k/revoke",
            admin.clone(),
            b"",
            405,
            Shape::Status,
        ),
        (
            "bad UTF-8 task id",
            "GET",
            "/a2a/count/v1/tasks/%FF%FE",
            v1.clone(),
            b"",
            400,
            Shape::Status,
        ),
        (
            "bad percent task id",
            "GET",
            "/a2a/count/v1/tasks/a%zz",
            v1.clone(),
            b"",
            400,
            Shape::Status,
        ),
        (
            "bad percent JSON-RPC op",
            "POST",
            "/a2a/count/message%2",
            auth.clone(),
            b"{}",
            400,
            Shape::Rpc03,
        ),
        (
            "bad UTF-8 agent",
            "POST",
            "/a2a/%C3%28",
            auth.clone(),
            b"{}",
            400,
            Shape::Rpc03,
        ),
        (
            "admin no token, bad JSON",
            "POST",
            "/admin/workspaces",
            String::new(),
            b"{not json",
            401,
            Shape::Status,
        ),
        (
            "admin no token, empty object",
            "POST",
            "/admin/workspaces",
            String::new(),
            b"{}",
            401,
            Shape::Status,
        ),
        (
            "admin bad token",
            "PUT",
            "/admin/workspaces/ws1/limits",
            "Authorization: Bearer nope\r\n".into(),
            b"[",
            401,
            Shape::Status,
        ),
        (
            "admin bad JSON",
            "POST",
            "/admin/workspaces",
            admin.clone(),
            b"{not json",
            400,
            Shape::Status,
        ),
        (
            "admin missing field",
            "POST",
            "/admin/workspaces",
            admin.clone(),
            b"{}",
            422,
            Shape::Status,
        ),
    ];
    for (name, method, path, extra, body, status, shape) in cases {
        let a = run(request(method, path, &extra, body), body.to_vec())
            .await
            .unwrap();
        let v = check(name, &a, status, shape);
        if status == 401 {
            assert_eq!(a.header("www-authenticate"), Some("Bearer"), "{name}");
            assert!(v.to_string().contains("admin token"), "{name}: {v}");
        }
    }

    // JSON-RPC ids that are not string/number/null, and batches: -32600, id null, not forwarded.
    for (name, body) in [
        (
            "object id",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"SendMessage","params":{}}"#,
        ),
        (
            "array id",
            r#"{"jsonrpc":"2.0","id":[1],"method":"SendMessage","params":{}}"#,
        ),
        (
            "true id",
            r#"{"jsonrpc":"2.0","id":true,"method":"SendMessage","params":{}}"#,
        ),
        (
            "false id",
            r#"{"jsonrpc":"2.0","id":false,"method":"SendMessage","params":{}}"#,
        ),
        (
            "batch",
            r#"[{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}]"#,
        ),
        ("empty batch", "[]"),
    ] {
        let a = run(
            request("POST", "/a2a/count", &auth, body.as_bytes()),
            body.as_bytes().to_vec(),
        )
        .await
        .unwrap();
        let v = check(name, &a, 200, Shape::Rpc03);
        assert_eq!(v["error"]["code"], -32600, "{name}: {v}");
        assert!(a.text.contains(r#""id":null"#), "{name}: {}", a.text);
    }
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "refused requests reached the peer"
    );

    // Ids of the allowed types are echoed exactly, big integers included.
    for id in [
        "-9223372036854775809",
        "18446744073709551616",
        "12345678901234567890123",
        "7",
        "\"s\"",
        "null",
    ] {
        // A new message each time (a repeated messageId is answered from the first send).
        let send = json!({"message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"SendMessage","params":{send}}}"#);
        let head = request(
            "POST",
            "/a2a/count",
            &format!("{auth}A2A-Version: 1.0\r\n"),
            body.as_bytes(),
        );
        let a = run(head, body.into_bytes()).await.unwrap();
        assert_eq!(a.status, 200, "{id}: {}", a.text);
        assert!(
            a.text
                .starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#)),
            "{id}: {}",
            a.text
        );
        let v: Value = serde_json::from_str(&a.text).unwrap();
        assert_eq!(v["result"]["task"]["id"], "t1", "{id}: {v}");
    }
    assert_eq!(seen.load(Ordering::SeqCst), 6);

    // A big id on an error answer is exact too.
    let body = r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"NoSuchMethod"}"#;
    let a = run(
        request("POST", "/a2a/count", &auth, body.as_bytes()),
        body.as_bytes().to_vec(),
    )
    .await
    .unwrap();
    assert!(
        a.text.contains(r#""id":-9223372036854775809"#),
        "{}",
        a.text
    );
    assert!(a.text.contains(r#""error":"#), "{}", a.text);

    peer.abort();
    env.stop().await;
}
