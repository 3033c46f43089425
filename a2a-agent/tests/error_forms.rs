//! Every error the agent writes is JSON in the caller's A2A form: a table of raw HTTP requests
//! over a TcpStream (oversize bodies, unknown paths, wrong methods, bad path bytes, JSON-RPC ids
//! of every JSON type, big integer ids, batches), each checked for status, JSON content type and
//! the binding's error shape. A counting handler proves refused requests are never handled.
//! (The agent has no admin API; its authentication errors are covered in `tests/agent.rs`.)

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_agent::{HandlerError, Reply, RequestContext, handler_fn};
use common::*;
use serde_json::{Value, json};

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
type Case<'a> = (&'a str, &'a str, String, &'a str, &'a [u8], u16, Shape);

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// JSON-RPC error object with `id: null`.
    Rpc,
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
        Shape::Rpc => {
            assert_eq!(v["jsonrpc"], "2.0", "{name}: {v}");
            assert!(v["id"].is_null(), "{name}: {v}");
            assert!(v["error"]["code"].is_i64(), "{name}: {v}");
            assert!(v["error"]["message"].is_string(), "{name}: {v}");
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
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let h = handler_fn(move |_ctx: RequestContext| {
        let calls = c2.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, HandlerError>(Reply::text("ok"))
        }
    });
    let mut cfg = open_config();
    cfg.max_payload_size = 64 * 1024;
    let s = start_with(a2a_agent::demo::echo_card(), h, cfg).await;
    let addr = s.local_addr();
    let after_host = s.url().trim_start_matches("http://");
    let base = after_host[after_host.find('/').unwrap_or(after_host.len())..]
        .trim_end_matches('/')
        .to_owned();
    let rpc_path = format!("{base}/");
    let run = move |head: String, body: Vec<u8>| {
        tokio::task::spawn_blocking(move || exchange(addr, &head, &body))
    };

    // Declared Content-Length over the limit: answered at once, the body never sent.
    for (path, shape) in [
        (rpc_path.clone(), Shape::Rpc),
        (format!("{base}/message:send"), Shape::Status),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 99999999999\r\n\r\n"
        );
        let a = run(head, Vec::new()).await.unwrap();
        check(&format!("declared {path}"), &a, 413, shape);
        assert_eq!(a.header("connection"), Some("close"), "{path}");
    }

    // An actual body over the limit (chunked, no Content-Length).
    let big = vec![b' '; 64 * 1024 + 4096];
    let mut chunked = format!("{:x}\r\n", big.len()).into_bytes();
    chunked.extend_from_slice(&big);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let head = format!(
        "POST {base}/message:send HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let a = run(head, chunked).await.unwrap();
    check("actual body", &a, 413, Shape::Status);

    let v1 = "A2A-Version: 1.0\r\n";
    let cases: Vec<Case> = vec![
        (
            "404 unknown path",
            "GET",
            format!("{base}/nope"),
            v1,
            b"",
            404,
            Shape::Status,
        ),
        (
            "404 unknown verb",
            "POST",
            format!("{base}/tasks/t:explode"),
            v1,
            b"{}",
            404,
            Shape::Status,
        ),
        (
            "404 outside the base",
            "GET",
            "/elsewhere/x/y".into(),
            v1,
            b"",
            404,
            Shape::Status,
        ),
        (
            "405 JSON-RPC GET",
            "GET",
            rpc_path.clone(),
            "",
            b"",
            405,
            Shape::Rpc,
        ),
        (
            "405 JSON-RPC PUT 1.0",
            "PUT",
            rpc_path.clone(),
            v1,
            b"{}",
            405,
            Shape::Rpc,
        ),
        (
            "405 REST",
            "DELETE",
            format!("{base}/message:send"),
            v1,
            b"",
            405,
            Shape::Status,
        ),
        (
            "bad UTF-8 task id",
            "GET",
            format!("{base}/tasks/%FF%FE"),
            v1,
            b"",
            400,
            Shape::Status,
        ),
        (
            "bad percent task id",
            "GET",
            format!("{base}/tasks/a%zz"),
            v1,
            b"",
            400,
            Shape::Status,
        ),
        (
            "bad percent push config",
            "GET",
            format!("{base}/tasks/t/pushNotificationConfigs/%E"),
            v1,
            b"",
            400,
            Shape::Status,
        ),
    ];
    for (name, method, path, extra, body, status, shape) in cases {
        let a = run(request(method, &path, extra, body), body.to_vec())
            .await
            .unwrap();
        check(name, &a, status, shape);
    }

    // JSON-RPC ids that are not string/number/null, and batches: -32600, id null, not handled.
    let send = json!({"message": msg("hi")});
    for (name, id) in [
        ("object id", "{\"a\":1}"),
        ("array id", "[1]"),
        ("true id", "true"),
        ("false id", "false"),
    ] {
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"SendMessage","params":{send}}}"#);
        let a = run(
            request("POST", &rpc_path, v1, body.as_bytes()),
            body.into_bytes(),
        )
        .await
        .unwrap();
        let v = check(name, &a, 200, Shape::Rpc);
        assert_eq!(v["error"]["code"], -32600, "{name}: {v}");
        assert!(a.text.contains(r#""id":null"#), "{name}: {}", a.text);
    }
    for (name, body) in [
        (
            "batch",
            format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{send}}}]"#),
        ),
        ("empty batch", "[]".to_owned()),
    ] {
        let a = run(
            request("POST", &rpc_path, v1, body.as_bytes()),
            body.into_bytes(),
        )
        .await
        .unwrap();
        let v = check(name, &a, 200, Shape::Rpc);
        assert_eq!(v["error"]["code"], -32600, "{name}: {v}");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a refused request reached the handler"
    );

    // Ids of the allowed types are echoed exactly, big integers included.
    let ids = [
        "-9223372036854775809",
        "18446744073709551616",
        "12345678901234567890123",
        "7",
        "\"s\"",
        "null",
    ];
    for id in ids {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"SendMessage","params":{{"message":{}}}}}"#,
            msg("hi")
        );
        let a = run(
            request("POST", &rpc_path, v1, body.as_bytes()),
            body.into_bytes(),
        )
        .await
        .unwrap();
        assert_eq!(a.status, 200, "{id}: {}", a.text);
        assert!(
            a.text
                .starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#)),
            "{id}: {}",
            a.text
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), ids.len());

    // A big id on an error answer (0.3 method name, unknown task) is exact too.
    let body = r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"tasks/get","params":{"id":"nope"}}"#;
    let a = run(
        request("POST", &rpc_path, "", body.as_bytes()),
        body.as_bytes().to_vec(),
    )
    .await
    .unwrap();
    assert!(
        a.text
            .starts_with(r#"{"jsonrpc":"2.0","id":-9223372036854775809,"error":"#),
        "{}",
        a.text
    );

    s.shutdown().await;
}
