//! Framing errors (issue 40): a request head hyper cannot read (a bad `Content-Length`, a
//! malformed header, a URI too long, too many headers) is answered with the agent's JSON error
//! in the form its path and `A2A-Version` imply, with `Content-Length` and `Connection: close`,
//! not hyper's empty 400 / 414 / 431. Raw requests over a TcpStream (no client would send
//! them).

use crate::common;
use crate::error_forms::exchange;

use common::*;
use serde_json::Value;

/// The error form an answer must have.
#[derive(Debug, Clone, Copy)]
enum Form {
    /// JSON-RPC, 1.0 (`data` is `[ErrorInfo]`).
    Rpc1,
    /// JSON-RPC, 0.3 (`data` is not a list).
    Rpc03,
    /// HTTP+JSON 1.0: `google.rpc.Status`.
    Rest1,
    /// HTTP+JSON 0.3: the bare error object.
    Rest03,
}

fn check(name: &str, v: &Value, status: u16, form: Form) {
    match form {
        Form::Rpc1 | Form::Rpc03 => {
            assert_eq!(v["jsonrpc"], "2.0", "{name}: {v}");
            assert!(v["id"].is_null(), "{name}: {v}");
            assert_eq!(v["error"]["code"], -32600, "{name}: {v}");
            let list = v["error"]["data"].is_array();
            assert_eq!(list, matches!(form, Form::Rpc1), "{name}: {v}");
        }
        Form::Rest1 => {
            assert_eq!(v["error"]["code"], status, "{name}: {v}");
            assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{name}: {v}");
            assert_eq!(
                v["error"]["details"][0]["reason"], "INVALID_REQUEST",
                "{name}: {v}"
            );
        }
        Form::Rest03 => {
            assert_eq!(v["code"], -32600, "{name}: {v}");
            assert!(
                v["message"].is_string() && v.get("error").is_none(),
                "{name}: {v}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_errors_answer_json_in_the_form_of_the_path() {
    let s = echo(open_config()).await;
    let addr = s.local_addr();
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    let long = "a".repeat(70_000);
    let cases: Vec<(&str, String, u16, Form)> = vec![
        (
            "bad Content-Length, JSON-RPC 1.0",
            "POST / HTTP/1.1\r\nHost: a\r\nA2A-Version: 1.0\r\nContent-Length: abc\r\n\r\n".into(),
            400,
            Form::Rpc1,
        ),
        (
            "bad Content-Length, JSON-RPC with no version (0.3)",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n".into(),
            400,
            Form::Rpc03,
        ),
        (
            "a malformed header line, HTTP+JSON 1.0",
            "POST /message:send HTTP/1.1\r\nHost: a\r\nA2A-Version: 1.0\r\nno colon here\r\n\r\n"
                .into(),
            400,
            Form::Rest1,
        ),
        (
            "too many headers, HTTP+JSON 1.0 (the version named before them)",
            format!("GET /tasks/t HTTP/1.1\r\nHost: a\r\nA2A-Version: 1.0\r\n{many}\r\n"),
            431,
            Form::Rest1,
        ),
        (
            "too many headers, HTTP+JSON 0.3",
            format!("GET /v1/tasks/t HTTP/1.1\r\nHost: a\r\n{many}\r\n"),
            431,
            Form::Rest03,
        ),
        (
            // The head captured is the URI's start: the path decides, no version is seen (0.3).
            "URI too long, HTTP+JSON",
            format!("GET /tasks/{long} HTTP/1.1\r\nHost: a\r\n\r\n"),
            414,
            Form::Rest03,
        ),
        (
            "URI too long, JSON-RPC",
            format!("POST /?x={long} HTTP/1.1\r\nHost: a\r\n\r\n"),
            414,
            Form::Rpc03,
        ),
    ];
    for (name, head, status, form) in cases {
        let a = tokio::task::spawn_blocking(move || exchange(addr, &head, b""))
            .await
            .unwrap();
        assert_eq!(a.status, status, "{name}: {}", a.text);
        let ct = a.header("content-type").unwrap_or_default();
        assert!(ct.contains("json"), "{name}: {ct:?}");
        assert_eq!(a.header("connection"), Some("close"), "{name}");
        assert!(a.header("date").is_some(), "{name}");
        assert!(a.text.len() < 1024, "{name}: {}", a.text);
        let v: Value = serde_json::from_str(&a.text).unwrap_or_else(|e| panic!("{name}: {e}"));
        check(name, &v, status, form);
    }
    // A good request on a fresh connection still works.
    let (st, _) = rpc(
        s.url(),
        "SendMessage",
        serde_json::json!({"message": msg("hi")}),
    )
    .await;
    assert_eq!(st, 200);
    s.shutdown().await;
}
