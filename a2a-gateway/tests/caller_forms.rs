//! Every error in its caller's form (issue 40, item 7), on raw HTTP where a client would not go:
//! framing errors hyper answers itself (400 / 414 / 431) come back as the gateway's JSON in the
//! form the path implies; a 0.3 HTTP+JSON caller gets the edge's refusals (unknown route, wrong
//! method, oversize body, bad path bytes, an unknown verb) in the 0.3 form, a 1.0 caller in
//! 1.0's; a task the caller does not own is the gateway's own TaskNotFound, never labelled
//! `a2a_upstream_error` (which stays for the peer's own errors); a body that is not JSON is the
//! spec's ContentTypeNotSupportedError (-32005) on every binding, with the gateway's code.

use crate::common;
use crate::error_forms::exchange;

use a2a_gateway::errors::Version;
use common::*;
use serde_json::{Value, json};

/// The error form of an answer body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// JSON-RPC 1.0: `error.data` = `[ErrorInfo]`.
    Rpc1,
    /// JSON-RPC 0.3: `error.data` an object.
    Rpc03,
    /// HTTP+JSON 1.0: `google.rpc.Status`.
    Rest1,
    /// HTTP+JSON 0.3: `{code, message, data}`.
    Rest03,
}

/// The form of `v` and the gateway's own code in it.
fn form_and_code(v: &Value) -> (Option<Form>, String) {
    let s = |x: &Value| x.as_str().unwrap_or_default().to_owned();
    if v["jsonrpc"] == "2.0" {
        let data = &v["error"]["data"];
        return match data.as_array() {
            Some(a) => (Some(Form::Rpc1), s(&a[0]["metadata"]["code"])),
            None => (Some(Form::Rpc03), s(&data["code"])),
        };
    }
    if v["error"]["details"].is_array() {
        return (
            Some(Form::Rest1),
            s(&v["error"]["details"][0]["metadata"]["code"]),
        );
    }
    if v["code"].is_i64() && v["data"].is_object() {
        return (Some(Form::Rest03), s(&v["data"]["code"]));
    }
    (None, String::new())
}

async fn raw(addr: std::net::SocketAddr, head: String, body: Vec<u8>) -> (u16, Value, String) {
    let a = tokio::task::spawn_blocking(move || exchange(addr, &head, &body))
        .await
        .unwrap();
    let v: Value = serde_json::from_str(&a.text).unwrap_or(Value::Null);
    let ct = a.header("content-type").unwrap_or_default().to_owned();
    (a.status, v, ct)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_errors_answer_json_in_the_form_of_the_path() {
    let env = env(Version::V1).await;
    let addr = env.gw.local_addr();
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    let long = "a".repeat(70_000);
    let bad_len = |path: &str, v: &str| {
        format!("POST {path} HTTP/1.1\r\nHost: a\r\n{v}Content-Length: 1x\r\n\r\n")
    };
    let cases: Vec<(&str, String, u16, Form, &str)> = vec![
        (
            "bad Content-Length, JSON-RPC 1.0",
            bad_len("/a2a/echo", "A2A-Version: 1.0\r\n"),
            400,
            Form::Rpc1,
            "a2a_bad_request",
        ),
        (
            "bad Content-Length, JSON-RPC 0.3",
            bad_len("/a2a/echo/message:send", ""),
            400,
            Form::Rpc03,
            "a2a_bad_request",
        ),
        (
            "bad Content-Length, HTTP+JSON 1.0",
            bad_len("/a2a/echo/v1/message:send", "A2A-Version: 1.0\r\n"),
            400,
            Form::Rest1,
            "a2a_bad_request",
        ),
        (
            "bad Content-Length, HTTP+JSON 0.3",
            bad_len("/a2a/echo/v1/message:send", ""),
            400,
            Form::Rest03,
            "a2a_bad_request",
        ),
        (
            "bad Content-Length, admin API",
            bad_len("/admin/workspaces", ""),
            400,
            Form::Rest1,
            "a2a_bad_request",
        ),
        (
            "too many headers, HTTP+JSON 1.0",
            format!("GET /a2a/echo/v1/tasks/t HTTP/1.1\r\nA2A-Version: 1.0\r\n{many}\r\n"),
            431,
            Form::Rest1,
            "a2a_headers_too_large",
        ),
        (
            "too many headers, JSON-RPC 0.3",
            format!("POST /a2a/echo HTTP/1.1\r\n{many}\r\n"),
            431,
            Form::Rpc03,
            "a2a_headers_too_large",
        ),
        (
            "URI too long, HTTP+JSON (no version seen: 0.3)",
            format!("GET /a2a/echo/v1/tasks/{long} HTTP/1.1\r\nHost: a\r\n\r\n"),
            414,
            Form::Rest03,
            "a2a_uri_too_long",
        ),
    ];
    for (name, head, status, form, code) in cases {
        let (st, v, ct) = raw(addr, head, Vec::new()).await;
        assert_eq!(st, status, "{name}: {v}");
        assert!(ct.starts_with("application/json"), "{name}: {ct}");
        assert_eq!(
            form_and_code(&v),
            (Some(form), code.to_owned()),
            "{name}: {v}"
        );
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_03_callers_get_edge_errors_in_the_03_form() {
    let env = env(Version::V1).await;
    let addr = env.gw.local_addr();
    let key = format!("Authorization: Bearer {}\r\n", env.key);
    let req = |method: &str, path: &str, extra: &str, body: &str| {
        format!(
            "{method} {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: application/json\r\n{key}{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let cases: Vec<(&str, &str, &str, &str, u16, &str)> = vec![
        (
            "unknown route",
            "GET",
            "/a2a/echo/v1/nope",
            "",
            404,
            "a2a_route_not_found",
        ),
        (
            "wrong method",
            "DELETE",
            "/a2a/echo/v1/message:send",
            "",
            405,
            "a2a_method_not_allowed",
        ),
        (
            "bad path bytes",
            "GET",
            "/a2a/echo/v1/tasks/%zz",
            "",
            400,
            "a2a_bad_path",
        ),
        (
            "unknown verb",
            "POST",
            "/a2a/echo/v1/tasks/t:explode",
            "{}",
            404,
            "a2a_method_not_found",
        ),
        (
            "oversize body (declared)",
            "POST",
            "/a2a/echo/v1/message:send",
            "",
            413,
            "a2a_payload_too_large",
        ),
    ];
    for (version, form) in [("", Form::Rest03), ("A2A-Version: 1.0\r\n", Form::Rest1)] {
        for (name, method, path, body, status, code) in &cases {
            let head = if *status == 413 {
                format!(
                    "{method} {path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n{key}{version}Content-Length: 99999999999\r\n\r\n"
                )
            } else {
                req(method, path, version, body)
            };
            let (st, v, ct) = raw(addr, head, Vec::new()).await;
            assert_eq!(st, *status, "{name} {version:?}: {v}");
            assert!(ct.starts_with("application/json"), "{name}: {ct}");
            assert_eq!(
                form_and_code(&v),
                (Some(form), (*code).to_owned()),
                "{name} {version:?}: {v}"
            );
        }
    }
    // A refused 0.x version on HTTP+JSON is answered in the 0.3 form too.
    let (st, v, _) = raw(
        addr,
        req("GET", "/a2a/echo/v1/tasks/t", "A2A-Version: 0.2\r\n", ""),
        vec![],
    )
    .await;
    assert_eq!(st, 400, "{v}");
    assert_eq!(v["code"], -32009, "{v}");
    assert_eq!(form_and_code(&v).0, Some(Form::Rest03), "{v}");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_the_gateway_makes_are_never_upstream_errors() {
    let env = env_with(Version::V1, |c| c.serve_grpc = true).await;
    let endpoint = env.peers[0].url.clone();
    env.register("ws2", "echo", &endpoint, None);
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    // A task of ws1.
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("hello")).await;
    let task = b["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let get1 = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task}});
    let get03 = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task}});
    // Another workspace's task, in every form: TaskNotFound, the gateway's own code.
    let (_, b) = env
        .rpc_key("/a2a/echo", Some("1.0"), get1.clone(), &key2)
        .await;
    assert_eq!(b["error"]["code"], -32001, "{b}");
    assert_eq!(b["error"]["data"][0]["reason"], "TASK_NOT_FOUND", "{b}");
    assert_eq!(gw_code(&b), "a2a_task_not_found", "{b}");
    let (_, b) = env.rpc_key("/a2a/echo", None, get03, &key2).await;
    assert_eq!(b["error"]["data"]["type"], "TaskNotFoundError", "{b}");
    assert_eq!(gw_code(&b), "a2a_task_not_found", "{b}");
    let r = env
        .http
        .get(env.url(&format!("/a2a/echo/v1/tasks/{task}")))
        .header("A2A-Version", "1.0")
        .bearer_auth(&key2)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        form_and_code(&v),
        (Some(Form::Rest1), "a2a_task_not_found".into()),
        "{v}"
    );
    // The same answer as a task nobody has.
    let nobody =
        json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-nobody"}});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), nobody).await;
    assert_eq!(gw_code(&b), "a2a_task_not_found", "{b}");
    // gRPC: NOT_FOUND with the gateway's code.
    let out = common::grpc_raw::call(
        env.gw.local_addr(),
        "GetTask",
        &[("authorization", &format!("Bearer {key2}"))],
        common::grpc_raw::encode(
            "lf.a2a.v1.GetTaskRequest",
            &json!({"tenant": "echo", "id": task}),
        ),
    )
    .await;
    assert_eq!(out.code, tonic::Code::NotFound, "{out:?}");
    let meta = a2a_types::grpc::status::from_status(out.status.as_ref().unwrap()).metadata;
    assert_eq!(meta["code"], "a2a_task_not_found", "{meta:?}");
    // The peer's own TaskNotFound (a task bound to ws1 the peer never had) is passed through.
    bind_task(&env, &endpoint, "t-peer-forgot", "echo");
    let forgot =
        json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-peer-forgot"}});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), forgot).await;
    assert_eq!(b["error"]["code"], -32001, "{b}");
    assert_eq!(gw_code(&b), "a2a_upstream_error", "{b}");
    // ws1 still reads its own task.
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), get1).await;
    assert_eq!(b["result"]["id"], task.as_str(), "{b}");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_json_is_content_type_not_supported() {
    let env = env(Version::V1).await;
    let post = |path: &str, version: Option<&str>| {
        let mut r = env
            .http
            .post(env.url(path))
            .header("content-type", "text/plain")
            .bearer_auth(&env.key)
            .body(send10("x").to_string());
        if let Some(v) = version {
            r = r.header("A2A-Version", v);
        }
        r.send()
    };
    for (path, version, status, form) in [
        ("/a2a/echo", Some("1.0"), 415, Form::Rpc1),
        ("/a2a/echo", None, 415, Form::Rpc03),
        ("/a2a/echo/v1/message:send", Some("1.0"), 400, Form::Rest1),
        ("/a2a/echo/v1/message:send", None, 400, Form::Rest03),
    ] {
        let r = post(path, version).await.unwrap();
        assert_eq!(r.status(), status, "{path} {version:?}");
        let accept = r
            .headers()
            .get("accept")
            .map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(
            accept.as_deref(),
            Some("application/json, application/a2a+json"),
            "{path} {version:?}"
        );
        let v: Value = r.json().await.unwrap();
        assert_eq!(
            form_and_code(&v),
            (Some(form), "a2a_unsupported_media_type".into()),
            "{path} {version:?}: {v}"
        );
        match form {
            Form::Rpc1 => {
                assert_eq!(v["error"]["code"], -32005, "{v}");
                assert_eq!(
                    v["error"]["data"][0]["reason"],
                    "CONTENT_TYPE_NOT_SUPPORTED"
                );
                assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
            }
            Form::Rpc03 => {
                assert_eq!(v["error"]["code"], -32005, "{v}");
                assert_eq!(v["error"]["data"]["type"], "ContentTypeNotSupportedError");
            }
            Form::Rest1 => {
                assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{v}");
                assert_eq!(
                    v["error"]["details"][0]["reason"],
                    "CONTENT_TYPE_NOT_SUPPORTED"
                );
            }
            Form::Rest03 => assert_eq!(v["code"], -32005, "{v}"),
        }
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_long_caller_value_comes_back_in_an_error() {
    let env = env(Version::V1).await;
    let long = "x".repeat(100_000);
    let path_long = "x".repeat(20_000);
    let probes = common::long_probe::probes(
        &env.url("/a2a/echo"),
        &env.url("/a2a/echo/v1"),
        &long,
        &path_long,
    );
    common::long_probe::run(probes, Some(&env.key)).await;
    // An unknown agent, a bad key and a content type, all long.
    let http = reqwest::Client::new();
    let x = "x".repeat(257);
    for (name, req) in [
        (
            "agent",
            http.post(env.url(&format!("/a2a/{path_long}")))
                .bearer_auth(&env.key)
                .header("content-type", "application/json")
                .body(send10("hi").to_string()),
        ),
        (
            "key",
            http.post(env.url("/a2a/echo"))
                .bearer_auth(format!("a2agw_{path_long}"))
                .header("content-type", "application/json")
                .body(send10("hi").to_string()),
        ),
        (
            "content type",
            http.post(env.url("/a2a/echo"))
                .bearer_auth(&env.key)
                .header("content-type", format!("text/{path_long}"))
                .body(send10("hi").to_string()),
        ),
    ] {
        let text = req.send().await.unwrap().text().await.unwrap();
        assert!(
            !text.contains(&x),
            "{name}: {}",
            &text[..text.len().min(600)]
        );
        assert!(text.len() < 4096, "{name}: {}", text.len());
    }
    env.stop().await;
}
