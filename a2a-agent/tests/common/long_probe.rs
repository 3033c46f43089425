//! Requests whose caller values are long (issue 40), shared by the agent's tests and the
//! gateway's (through `#[path]`): every error answer must quote no such value whole.

#![allow(dead_code)]

use serde_json::{Value, json};

/// `(name, method, path, headers, body)`: the request.
pub type Probe = (
    &'static str,
    &'static str,
    String,
    Vec<(&'static str, String)>,
    Option<Value>,
);

/// The probes under `base` (the agent's base URL, or a gateway agent's URL: `/v1` routes below
/// it). `long` is the caller value, `path_long` a shorter one for URLs.
pub fn probes(base: &str, rest: &str, long: &str, path_long: &str) -> Vec<Probe> {
    let v1 = || vec![("A2A-Version", "1.0".to_owned())];
    let rpc =
        |m: &str, p: Value| Some(json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": p}));
    let message = json!({"messageId": "m-long", "role": "ROLE_USER", "parts": [{"text": "hi"}]});
    let mut bad_role = message.clone();
    bad_role["role"] = json!(long);
    let mut bad_member = message.clone();
    bad_member[long] = json!(1);
    vec![
        (
            "1.0 GetTask",
            "POST",
            base.into(),
            v1(),
            rpc("GetTask", json!({"id": long})),
        ),
        (
            "0.3 tasks/get",
            "POST",
            base.into(),
            vec![],
            rpc("tasks/get", json!({"id": long})),
        ),
        (
            "1.0 unknown method",
            "POST",
            base.into(),
            v1(),
            rpc(long, json!({})),
        ),
        (
            "0.3 unknown method",
            "POST",
            base.into(),
            vec![],
            rpc(long, json!({})),
        ),
        (
            "1.0 send: enum value",
            "POST",
            base.into(),
            v1(),
            rpc("SendMessage", json!({"message": bad_role})),
        ),
        (
            "1.0 send: member name",
            "POST",
            base.into(),
            v1(),
            rpc("SendMessage", json!({"message": bad_member})),
        ),
        (
            "1.0 send: unknown task",
            "POST",
            base.into(),
            v1(),
            rpc(
                "SendMessage",
                json!({"message": {"messageId": "m-l2", "role": "ROLE_USER", "taskId": long,
                    "parts": [{"text": "hi"}]}}),
            ),
        ),
        (
            "A2A-Version",
            "POST",
            base.into(),
            vec![("A2A-Version", format!("9.{path_long}"))],
            rpc("GetTask", json!({"id": "t"})),
        ),
        (
            "Last-Event-ID",
            "POST",
            base.into(),
            vec![
                ("A2A-Version", "1.0".into()),
                ("Last-Event-ID", path_long.into()),
            ],
            rpc("SubscribeToTask", json!({"id": "t"})),
        ),
        (
            "HTTP+JSON 1.0 GetTask",
            "GET",
            format!("{rest}/tasks/{path_long}"),
            v1(),
            None,
        ),
        (
            "HTTP+JSON 0.3 GetTask",
            "GET",
            format!("{base}/v1/tasks/{path_long}"),
            vec![],
            None,
        ),
        (
            "HTTP+JSON 1.0 list status",
            "GET",
            format!("{rest}/tasks?status={path_long}"),
            v1(),
            None,
        ),
        (
            "HTTP+JSON 1.0 cancel",
            "POST",
            format!("{rest}/tasks/{path_long}:cancel"),
            v1(),
            Some(json!({})),
        ),
    ]
}

/// Sends each probe; every answer must be JSON, quote no run of 257 `x` or `9`, and stay small.
pub async fn run(probes: Vec<Probe>, auth: Option<&str>) {
    let x = "x".repeat(257);
    let nines = "9".repeat(257);
    let http = reqwest::Client::new();
    for (name, method, url, headers, body) in probes {
        let mut req = http.request(method.parse().unwrap(), &url);
        if let Some(k) = auth {
            req = req.bearer_auth(k);
        }
        for (k, v) in &headers {
            req = req.header(*k, v);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let r = req.send().await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        assert!(status >= 200, "{name}");
        assert!(
            !text.contains(&x) && !text.contains(&nines),
            "{name}: {status} {} bytes: {}",
            text.len(),
            &text[..text.len().min(600)]
        );
        assert!(text.len() < 4096, "{name}: {} bytes", text.len());
        // JSON (an error, or an answer that drops what it does not know).
        let _: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
