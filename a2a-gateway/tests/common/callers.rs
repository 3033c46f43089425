//! Every caller form of the gateway (issue 39's attack suite): JSON-RPC 1.0 and 0.3 at
//! `/a2a/{agent}`, the path-named operations (`/a2a/{agent}/message:send`, ...) in 1.0 and 0.3,
//! HTTP+JSON 1.0 and 0.3 under `/a2a/{agent}/v1`, and gRPC (the agent as `tenant`). One
//! [`Call`] in any form; what came back is a [`Got`], headers and error details included.

use std::net::SocketAddr;

use serde_json::{Value, json};

use super::leaks::Got;

/// A caller form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Rpc1,
    Rpc03,
    Path1,
    Path03,
    Rest1,
    Rest03,
    Grpc,
}

pub const FORMS: [Form; 7] = [
    Form::Rpc1,
    Form::Rpc03,
    Form::Path1,
    Form::Path03,
    Form::Rest1,
    Form::Rest03,
    Form::Grpc,
];

/// One call on a caller's behalf.
#[derive(Debug, Clone)]
pub enum Call {
    Send(String),
    Stream(String),
    Get(String),
    List,
    Cancel(String),
    Subscribe(String),
    /// A push config on the task, for the webhook URL.
    PushSet(String, String),
    /// The push config of the task with the id.
    PushGet(String, String),
    /// The push configs of the task.
    PushList(String),
    /// A send with an inline push config for the webhook URL.
    SendPush(String, String),
    /// The governed card (`A2A-Version` as the form's).
    Card,
    /// GetExtendedAgentCard in the form's terms.
    Extended,
}

impl Form {
    /// Whether the form speaks A2A 1.0 (its webhooks get 1.0 notifications).
    pub fn is_v1(self) -> bool {
        matches!(self, Form::Rpc1 | Form::Path1 | Form::Rest1 | Form::Grpc)
    }

    /// Whether the form has the call (A2A 0.3 has no ListTasks but as a path-named operation).
    pub fn has(self, call: &Call) -> bool {
        !matches!((self, call), (Form::Rpc03 | Form::Rest03, Call::List))
    }

    fn header(self) -> Option<&'static str> {
        match self {
            Form::Rpc1 | Form::Path1 | Form::Rest1 | Form::Grpc => Some("1.0"),
            Form::Path03 | Form::Rest03 => Some("0.3"),
            Form::Rpc03 => None,
        }
    }
}

fn msg(v1: bool, text: &str) -> Value {
    let id = uuid::Uuid::new_v4().to_string();
    if v1 {
        json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
    } else {
        json!({"kind": "message", "messageId": id, "role": "user",
            "parts": [{"kind": "text", "text": text}]})
    }
}

/// A push config for `hook` in the form's version (the caller's token, no authentication).
fn push_cfg(hook: &str) -> Value {
    json!({"url": hook, "token": "caller-token"})
}

/// A send's `configuration` with an inline push config for `hook`.
fn inline(v1: bool, hook: &str) -> Value {
    let key = if v1 {
        "taskPushNotificationConfig"
    } else {
        "pushNotificationConfig"
    };
    json!({ key: push_cfg(hook) })
}

/// (method in the form's version, DVARA path, params) of a JSON-RPC call.
fn rpc_parts(v1: bool, call: &Call) -> (&'static str, &'static str, Value) {
    let n = |a, b| if v1 { a } else { b };
    match call {
        Call::Send(t) => (
            n("SendMessage", "message/send"),
            "message:send",
            json!({"message": msg(v1, t)}),
        ),
        Call::Stream(t) => (
            n("SendStreamingMessage", "message/stream"),
            "message:stream",
            json!({"message": msg(v1, t)}),
        ),
        Call::Get(id) => (n("GetTask", "tasks/get"), "tasks:get", json!({"id": id})),
        Call::List => (n("ListTasks", "tasks/list"), "tasks:list", json!({})),
        Call::Cancel(id) => (
            n("CancelTask", "tasks/cancel"),
            "tasks:cancel",
            json!({"id": id}),
        ),
        Call::Subscribe(id) => (
            n("SubscribeToTask", "tasks/resubscribe"),
            "tasks:resubscribe",
            json!({"id": id}),
        ),
        Call::PushSet(task, hook) => (
            n(
                "CreateTaskPushNotificationConfig",
                "tasks/pushNotificationConfig/set",
            ),
            "pushConfig:set",
            if v1 {
                json!({"taskId": task, "url": hook, "token": "caller-token"})
            } else {
                json!({"taskId": task,
                    "pushNotificationConfig": {"url": hook, "token": "caller-token"}})
            },
        ),
        Call::PushGet(task, id) => (
            n(
                "GetTaskPushNotificationConfig",
                "tasks/pushNotificationConfig/get",
            ),
            "pushConfig:get",
            if v1 {
                json!({"taskId": task, "id": id})
            } else {
                json!({"id": task, "pushNotificationConfigId": id})
            },
        ),
        Call::PushList(task) => (
            n(
                "ListTaskPushNotificationConfigs",
                "tasks/pushNotificationConfig/list",
            ),
            "pushConfig:list",
            if v1 {
                json!({"taskId": task})
            } else {
                json!({"id": task})
            },
        ),
        Call::SendPush(t, hook) => (
            n("SendMessage", "message/send"),
            "message:send",
            json!({"message": msg(v1, t), "configuration": inline(v1, hook)}),
        ),
        Call::Card | Call::Extended => (
            n("GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"),
            "card:extended",
            json!({}),
        ),
    }
}

/// Reads an HTTP answer whole: status line, headers and body.
async fn read(resp: reqwest::Response) -> Got {
    let mut got = Got::default();
    got.text(resp.status().to_string());
    for (k, v) in resp.headers() {
        got.text(format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())));
    }
    got.body(&resp.text().await.unwrap_or_default());
    got
}

/// `call` to `agent` in `form` with `key`, at the gateway `base` (`addr` for gRPC).
pub async fn call(
    http: &reqwest::Client,
    base: &str,
    addr: SocketAddr,
    key: &str,
    form: Form,
    agent: &str,
    call: &Call,
) -> Got {
    if let Call::Card = call {
        let mut req = http
            .get(format!("{base}/a2a/{agent}/.well-known/agent-card.json"))
            .bearer_auth(key);
        if let Some(v) = form.header() {
            req = req.header("A2A-Version", v);
        }
        return read(req.send().await.unwrap()).await;
    }
    let v1 = form.is_v1();
    let req = match form {
        Form::Grpc => return grpc(addr, key, agent, call).await,
        Form::Rpc1 | Form::Rpc03 | Form::Path1 | Form::Path03 => {
            let (method, path, params) = rpc_parts(v1, call);
            let (url, body) = if matches!(form, Form::Path1 | Form::Path03) {
                (
                    format!("{base}/a2a/{agent}/{path}"),
                    json!({"jsonrpc": "2.0", "id": 7, "params": params}),
                )
            } else {
                (
                    format!("{base}/a2a/{agent}"),
                    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
                )
            };
            http.post(url)
                .header("content-type", "application/json")
                .body(body.to_string())
        }
        Form::Rest1 | Form::Rest03 => {
            let root = format!("{base}/a2a/{agent}/v1");
            let send = |t: &str| {
                let m = msg(true, t);
                if v1 {
                    json!({"message": m})
                } else {
                    json!({"message": {"messageId": m["messageId"], "role": "ROLE_USER",
                        "content": [{"text": t}]}})
                }
            };
            let post = |path: String, body: Value| {
                http.post(format!("{root}/{path}"))
                    .header("content-type", "application/json")
                    .body(body.to_string())
            };
            match call {
                Call::Send(t) => post("message:send".into(), send(t)),
                Call::Stream(t) => post("message:stream".into(), send(t)),
                Call::Get(id) => http.get(format!("{root}/tasks/{id}")),
                Call::List => http.get(format!("{root}/tasks")),
                Call::Cancel(id) => post(format!("tasks/{id}:cancel"), json!({})),
                Call::Subscribe(id) => post(format!("tasks/{id}:subscribe"), json!({})),
                Call::PushSet(task, hook) => post(
                    format!("tasks/{task}/pushNotificationConfigs"),
                    if v1 {
                        json!({"url": hook, "token": "caller-token"})
                    } else {
                        json!({"pushNotificationConfig": {"url": hook, "token": "caller-token"}})
                    },
                ),
                Call::PushGet(task, id) => {
                    http.get(format!("{root}/tasks/{task}/pushNotificationConfigs/{id}"))
                }
                Call::PushList(task) => {
                    http.get(format!("{root}/tasks/{task}/pushNotificationConfigs"))
                }
                Call::SendPush(t, hook) => {
                    let mut body = send(t);
                    body["configuration"] = inline(v1, hook);
                    post("message:send".into(), body)
                }
                Call::Extended => http.get(format!(
                    "{root}/{}",
                    if v1 { "extendedAgentCard" } else { "card" }
                )),
                Call::Card => unreachable!("served above"),
            }
        }
    };
    let mut req = req.bearer_auth(key);
    if let Some(v) = form.header() {
        req = req.header("A2A-Version", v);
    }
    read(req.send().await.unwrap()).await
}

/// A gRPC call (ProtoJSON in and out through `a2a_types::grpc`'s codec): every message of the
/// answer, and the status of an error with its message, details and metadata.
async fn grpc(addr: SocketAddr, key: &str, agent: &str, call: &Call) -> Got {
    use hyper_util::client::legacy::Client;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::rt::TokioExecutor;
    let (name, body) = match call {
        Call::Send(t) => ("SendMessage", json!({"message": msg(true, t)})),
        Call::Stream(t) => ("SendStreamingMessage", json!({"message": msg(true, t)})),
        Call::Get(id) => ("GetTask", json!({"id": id})),
        Call::List => ("ListTasks", json!({})),
        Call::Cancel(id) => ("CancelTask", json!({"id": id})),
        Call::Subscribe(id) => ("SubscribeToTask", json!({"id": id})),
        Call::PushSet(task, hook) => (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": hook, "token": "caller-token"}),
        ),
        Call::PushGet(task, id) => (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": id}),
        ),
        Call::PushList(task) => ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
        Call::SendPush(t, hook) => (
            "SendMessage",
            json!({"message": msg(true, t), "configuration": inline(true, hook)}),
        ),
        Call::Card | Call::Extended => ("GetExtendedAgentCard", json!({})),
    };
    let mut body = body;
    body["tenant"] = json!(agent);
    let rpc = a2a_types::grpc::Rpc::named(name).expect("an rpc");
    let channel = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build::<_, tonic::body::Body>(HttpConnector::new());
    let origin: http::Uri = format!("http://{addr}").parse().expect("origin");
    let mut grpc = tonic::client::Grpc::with_origin(channel, origin);
    grpc.ready().await.expect("ready");
    let path: http::uri::PathAndQuery = rpc.path().parse().expect("path");
    let mut req = tonic::Request::new(body);
    req.metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    let codec = rpc.client_codec().expect("codec");
    let mut got = Got::default();
    let status = if rpc.streaming {
        match grpc.server_streaming(req, path, codec).await {
            Ok(r) => {
                let mut s = r.into_inner();
                loop {
                    match s.message().await {
                        Ok(Some(m)) => got.value(m),
                        Ok(None) => break None,
                        Err(st) => break Some(st),
                    }
                }
            }
            Err(st) => Some(st),
        }
    } else {
        match grpc.unary(req, path, codec).await {
            Ok(r) => {
                got.value(r.into_inner());
                None
            }
            Err(st) => Some(st),
        }
    };
    if let Some(st) = status {
        got.text(format!("{:?} {}", st.code(), st.message()));
        got.text(String::from_utf8_lossy(st.details()).into_owned());
        for (k, v) in st.metadata().clone().into_headers().iter() {
            got.text(format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())));
        }
    }
    got
}
