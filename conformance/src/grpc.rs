//! The gRPC binding of the wire cases: each case's 1.0 JSON-RPC exchange replayed as the gRPC rpc
//! of the same operation, against the targets that serve gRPC (`"grpc": true` in the targets file).
//!
//! How a case is derived ([`derive`]), step by step, from each of its `JSONRPC` `1.0` variants:
//! - the rpc is the JSON-RPC `method` (the 1.0 method names are the rpc names), the request
//!   message is `params`, transcoded to protobuf by `a2a_types::grpc` (the one conversion the
//!   agent, client and gateway use); the request headers become metadata (`a2a-version`,
//!   `a2a-extensions`, credentials), all but the HTTP framing ones (`content-type`, `accept`, ...);
//! - an expected `result` is matched against the response message transcoded back to 1.0 JSON,
//!   expected `events` against the stream's messages in order, and an expected `error` by its
//!   A2A kind: the `google.rpc.Status` must carry the A2A `ErrorInfo` whose reason is the
//!   fixture's (`data[].reason`, else the reason of its code) and the spec's status code for it.
//! - HTTP response headers and the JSON-RPC envelope (`jsonrpc`, `id`) have no gRPC form and are
//!   not checked.
//!
//! Cases with no gRPC form are skipped with the reason ([`derive`]'s `Err`): 0.3-only cases,
//! cards over plain HTTP, HTTP+JSON-only cases (routes, HTTP statuses, content types), and steps
//! that test the JSON-RPC envelope, batches, raw bodies or HTTP-level answers.

use std::collections::BTreeMap;
use std::time::Duration;

use a2a_types::error::ErrorKind;
use a2a_types::grpc::Rpc;
use a2a_types::grpc::status::{a2a_reason, any_reason};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tonic::metadata::{MetadataKey, MetadataValue};

use crate::fixture::{Step, WireCase};
use crate::matcher::{Vars, match_value, substitute, substitute_str};
use crate::wire::{Target, prefixed, run_id};

/// The binding name used in the runner's lines.
pub const BINDING: &str = "GRPC";

/// An HTTP/2 (h2c) connection pool for the gRPC calls.
pub type Channel = HyperClient<HttpConnector, tonic::body::Body>;

/// A new h2c channel.
pub fn channel() -> Channel {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    HyperClient::builder(TokioExecutor::new())
        .http2_only(true)
        .build(connector)
}

/// One derived gRPC exchange.
#[derive(Debug, Clone)]
pub struct GrpcStep {
    /// The rpc called.
    pub rpc: &'static Rpc,
    /// The request message as 1.0 JSON (variables not yet substituted).
    pub params: Value,
    /// Metadata (lower-case names; values may use variables).
    pub metadata: BTreeMap<String, String>,
    /// What must come back.
    pub expect: Expect,
    /// The JSON-RPC request's path after the target's base path (`""`, or e.g. `-ext` for
    /// another agent behind a gateway): added to the target's `grpc_tenant`.
    pub path: String,
}

/// The expected outcome of a [`GrpcStep`].
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// A unary response message (with matchers).
    Message(Value),
    /// Stream messages in order (with matchers), then the end of the stream: OK, or an error
    /// with this `ErrorInfo` reason.
    Events(Vec<Value>, Option<String>),
    /// An error with this `ErrorInfo` reason.
    Error(String),
}

/// Request headers that are HTTP framing, not gRPC metadata.
const HTTP_ONLY_HEADERS: &[&str] = &["content-type", "accept", "content-length", "host", "te"];

/// Error kinds that only exist in the JSON-RPC envelope.
const ENVELOPE_KINDS: &[ErrorKind] = &[
    ErrorKind::JsonParse,
    ErrorKind::InvalidRequest,
    ErrorKind::MethodNotFound,
];

/// The gRPC replays of `case`: the steps of each of its JSON-RPC 1.0 variants, or why that
/// variant (or the whole case, when it has none) has no gRPC form.
pub fn derive(case: &WireCase) -> Vec<Result<Vec<GrpcStep>, String>> {
    let variants: Vec<_> = case
        .variants
        .iter()
        .filter(|v| v.binding == "JSONRPC" && v.version == "1.0")
        .collect();
    if variants.is_empty() {
        let v1: Vec<&str> = case
            .variants
            .iter()
            .filter(|v| v.version == "1.0")
            .map(|v| v.binding.as_str())
            .collect();
        return vec![Err(if v1.contains(&"HTTP+JSON") {
            "HTTP+JSON-only case (routes, HTTP statuses, content types): no gRPC form".into()
        } else if v1.contains(&"HTTP") {
            "agent card over plain HTTP: no gRPC form".into()
        } else {
            "0.3 only: the 0.3 gRPC service is not served".into()
        })];
    }
    variants
        .into_iter()
        .map(|v| {
            let steps = v.all_steps();
            if steps.is_empty() {
                return Err("variant has no steps".into());
            }
            steps.iter().map(derive_step).collect()
        })
        .collect()
}

fn derive_step(step: &Step) -> Result<GrpcStep, String> {
    let req = &step.request;
    if !req.method.eq_ignore_ascii_case("POST") {
        return Err(format!("HTTP {} request: no gRPC form", req.method));
    }
    if req.path.contains("A2A-Version=") {
        return Err("version in the query string: no gRPC form".into());
    }
    let mut metadata = BTreeMap::new();
    for (k, val) in &req.headers {
        let k = k.to_ascii_lowercase();
        if k == "content-type" && !val.starts_with("application/json") {
            return Err(format!("content type {val}: no gRPC form"));
        }
        if !HTTP_ONLY_HEADERS.contains(&k.as_str()) {
            metadata.insert(k, val.clone());
        }
    }
    if req.body_text.is_some() {
        return Err("raw body text (malformed JSON): JSON parsing has no gRPC form".into());
    }
    let body = match &req.body {
        Some(Value::Object(o)) => o,
        Some(Value::Array(_)) => return Err("JSON-RPC batch: no gRPC form".into()),
        _ => return Err("no JSON-RPC request object: envelope check, no gRPC form".into()),
    };
    if body.get("jsonrpc") != Some(&Value::String("2.0".into())) || !body.contains_key("id") {
        return Err("JSON-RPC envelope check (jsonrpc / id): no gRPC form".into());
    }
    let method = body.get("method").and_then(Value::as_str).unwrap_or("");
    let Some(rpc) = Rpc::named(method) else {
        return Err(format!(
            "method {method:?} is not an rpc of the 1.0 service (JSON-RPC method-name handling)"
        ));
    };
    let params = match body.get("params") {
        None => Value::Object(Default::default()),
        Some(p @ Value::Object(_)) => p.clone(),
        Some(_) => return Err("params not an object: envelope check, no gRPC form".into()),
    };
    let want = &step.response;
    if want.status != 200 {
        return Err(format!(
            "HTTP-level answer (status {}) before dispatch: no gRPC form",
            want.status
        ));
    }
    let expect = match (&want.events, &want.body) {
        (Some(events), _) => derive_events(events)?,
        (None, Some(body)) => match reply(body)? {
            Reply::Result(r) => Expect::Message(r),
            Reply::Error(reason) => Expect::Error(reason),
        },
        (None, None) => return Err("no expected body: no gRPC form".into()),
    };
    if rpc.streaming != matches!(expect, Expect::Events(..)) && !matches!(expect, Expect::Error(_))
    {
        return Err(format!(
            "{method}: expected answer does not fit the rpc's streaming kind"
        ));
    }
    Ok(GrpcStep {
        rpc,
        params,
        metadata,
        expect,
        path: req.path.clone(),
    })
}

enum Reply {
    Result(Value),
    Error(String),
}

/// The result or error reason of an expected JSON-RPC response.
fn reply(body: &Value) -> Result<Reply, String> {
    if let Some(r) = body.get("result") {
        return Ok(Reply::Result(r.clone()));
    }
    let Some(err) = body.get("error") else {
        return Err("expected body has neither result nor error: no gRPC form".into());
    };
    let given = err.get("data").and_then(Value::as_array).and_then(|d| {
        d.iter()
            .find_map(|i| i.get("reason").and_then(Value::as_str))
            .filter(|r| !r.starts_with('$'))
    });
    let kind = match (given, err.get("code").and_then(Value::as_i64)) {
        (Some(r), _) => ErrorKind::from_reason(r).unwrap_or(ErrorKind::Other(0)),
        (None, Some(c)) => ErrorKind::from_code(c),
        (None, None) => return Err("expected error has no literal code or reason".into()),
    };
    if ENVELOPE_KINDS.contains(&kind) {
        return Err(format!(
            "JSON-RPC envelope error ({}): no gRPC form",
            kind.name_v1()
        ));
    }
    if matches!(kind, ErrorKind::Other(_)) && given.is_none() {
        return Err(format!(
            "expected error code {} names no single A2A kind",
            kind.code()
        ));
    }
    Ok(Reply::Error(
        given.map_or_else(|| kind.reason().to_string(), str::to_string),
    ))
}

fn derive_events(events: &[Value]) -> Result<Expect, String> {
    let mut out = Vec::new();
    let mut end = None;
    for (i, e) in events.iter().enumerate() {
        if e.is_string() {
            // An array matcher such as "$prefix".
            out.push(e.clone());
            continue;
        }
        match reply(e)? {
            Reply::Result(r) => out.push(r),
            Reply::Error(reason) if i + 1 == events.len() => end = Some(reason),
            Reply::Error(_) => return Err("error event before the last event".into()),
        }
    }
    Ok(Expect::Events(out, end))
}

/// The scheme, host and port of a base URL.
fn origin(base_url: &str) -> Result<http::Uri, String> {
    let uri: http::Uri = base_url
        .parse()
        .map_err(|e| format!("base url {base_url}: {e}"))?;
    let authority = uri
        .authority()
        .ok_or_else(|| format!("base url {base_url} has no host"))?;
    format!("{}://{authority}", uri.scheme_str().unwrap_or("http"))
        .parse()
        .map_err(|e| format!("base url {base_url}: {e}"))
}

/// Replays `steps` over gRPC against `target`; returns the failures (empty = pass).
pub async fn replay(
    channel: &Channel,
    target: &Target,
    steps: &[GrpcStep],
    timeout: Duration,
) -> Vec<String> {
    let mut vars = target.vars.clone();
    vars.insert("run".into(), serde_json::json!(run_id()));
    for (i, step) in steps.iter().enumerate() {
        let fails = match tokio::time::timeout(
            timeout,
            replay_step(channel, target, step, &mut vars),
        )
        .await
        {
            Ok(f) => f,
            Err(_) => vec![format!("{} timed out after {timeout:?}", step.rpc.name)],
        };
        if !fails.is_empty() {
            let prefix = if steps.len() > 1 {
                format!("step {}: ", i + 1)
            } else {
                String::new()
            };
            return fails.into_iter().map(|f| format!("{prefix}{f}")).collect();
        }
    }
    Vec::new()
}

async fn replay_step(
    channel: &Channel,
    target: &Target,
    step: &GrpcStep,
    vars: &mut Vars,
) -> Vec<String> {
    let rpc = step.rpc;
    let origin = match origin(&target.base_url) {
        Ok(o) => o,
        Err(e) => return vec![e],
    };
    let codec = match rpc.client_codec() {
        Ok(c) => c,
        Err(e) => return vec![format!("codec of {}: {e}", rpc.name)],
    };
    let path: http::uri::PathAndQuery = match rpc.path().parse() {
        Ok(p) => p,
        Err(e) => return vec![format!("rpc path {}: {e}", rpc.path())],
    };
    let mut params = substitute(&step.params, vars);
    // Behind the gateway the request's `tenant` names the agent: the target's `grpc_tenant`
    // (the agent of its base path) followed by the step's own path suffix, as on JSON-RPC.
    if let (Some(Value::String(tenant)), Some(o)) =
        (vars.get("grpc_tenant"), params.as_object_mut())
    {
        let suffix = step.path.split(['/', '?']).next().unwrap_or_default();
        o.entry("tenant")
            .or_insert_with(|| Value::String(format!("{tenant}{suffix}")));
    }
    let mut req = tonic::Request::new(params);
    let mut metadata: BTreeMap<String, String> = target
        .headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect();
    metadata.extend(
        step.metadata
            .iter()
            .map(|(k, v)| (k.clone(), substitute_str(v, vars))),
    );
    for (k, v) in &metadata {
        match (
            MetadataKey::from_bytes(k.as_bytes()),
            MetadataValue::try_from(v.as_str()),
        ) {
            (Ok(k), Ok(v)) => {
                req.metadata_mut().insert(k, v);
            }
            _ => return vec![format!("header {k}: not valid gRPC metadata")],
        }
    }
    let mut grpc = tonic::client::Grpc::with_origin(channel.clone(), origin);
    if let Err(e) = grpc.ready().await {
        return vec![format!("gRPC channel not ready: {e}")];
    }
    let (messages, end) = if rpc.streaming {
        match grpc.server_streaming(req, path, codec).await {
            Err(s) => (None, Some(s)),
            Ok(resp) => {
                let mut stream = resp.into_inner();
                let mut got = Vec::new();
                let end = loop {
                    match stream.message().await {
                        Ok(Some(m)) => got.push(m),
                        Ok(None) => break None,
                        Err(s) => break Some(s),
                    }
                };
                (Some(got), end)
            }
        }
    } else {
        match grpc.unary(req, path, codec).await {
            Ok(r) => (Some(vec![r.into_inner()]), None),
            Err(s) => (None, Some(s)),
        }
    };
    let mut fails = Vec::new();
    let expected_end = match &step.expect {
        Expect::Message(want) => {
            match messages.as_deref() {
                Some([got]) => fails.extend(prefixed("message", match_value(want, got, vars))),
                Some(_) => fails.push("unary rpc answered no single message".into()),
                None => {}
            }
            None
        }
        Expect::Events(want, end) => {
            let got = Value::Array(messages.clone().unwrap_or_default());
            if messages.is_some() {
                let want = Value::Array(want.clone());
                fails.extend(prefixed("events", match_value(&want, &got, vars)));
            }
            end.as_ref()
        }
        Expect::Error(reason) => {
            if messages.as_ref().is_some_and(|m| !m.is_empty()) {
                fails.push(format!(
                    "expected error {reason}, got message(s) {}",
                    truncate(&Value::Array(messages.clone().unwrap_or_default()).to_string())
                ));
            }
            Some(reason)
        }
    };
    match (expected_end, end) {
        (None, None) => {}
        (None, Some(s)) => fails.push(format!(
            "expected success, got status {:?} {:?} (reason {:?})",
            s.code(),
            s.message(),
            a2a_reason(&s)
        )),
        (Some(reason), None) => fails.push(format!("expected error {reason}, got status OK")),
        (Some(reason), Some(s)) => fails.extend(check_status(reason, &s)),
    }
    fails
}

/// The status must carry the A2A `ErrorInfo` `reason` and the spec's status code for its kind.
fn check_status(reason: &str, s: &tonic::Status) -> Vec<String> {
    let mut fails = Vec::new();
    // A spec reason must come in the A2A domain; another (a gateway's own code, e.g.
    // A2A_POLICY_DENIED) in whatever domain its server uses.
    let got = match ErrorKind::from_reason(reason) {
        Some(_) => a2a_reason(s),
        None => any_reason(s),
    };
    match got {
        Some(r) if r == reason => {}
        got => fails.push(format!(
            "error reason: expected {reason}, found {got:?} (status {:?} {:?})",
            s.code(),
            s.message()
        )),
    }
    if let Some(kind) = ErrorKind::from_reason(reason) {
        let want = tonic::Code::from_i32(kind.grpc_code());
        if s.code() != want {
            fails.push(format!(
                "status code: expected {want:?} for {reason}, found {:?}",
                s.code()
            ));
        }
    }
    fails
}

fn truncate(s: &str) -> String {
    s.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(v: Value) -> WireCase {
        serde_json::from_value(v).unwrap()
    }

    fn jsonrpc(body: Value, response: Value) -> WireCase {
        case(json!({"description": "d", "variants": [
            {"binding": "JSONRPC", "version": "0.3", "request": {"method": "POST", "path": "", "body": {}},
             "response": {"status": 200}},
            {"binding": "JSONRPC", "version": "1.0",
             "request": {"method": "POST", "path": "", "headers": {"A2A-Version": "1.0", "Accept": "text/event-stream"}, "body": body},
             "response": response}]}))
    }

    #[test]
    fn result_error_and_events_are_derived() {
        let c = jsonrpc(
            json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}),
            json!({"status": 200, "body": {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "$any_string"}}}),
        );
        let steps = derive(&c).remove(0).unwrap();
        assert_eq!(steps[0].rpc.name, "GetTask");
        assert_eq!(steps[0].params, json!({"id": "x"}));
        assert_eq!(steps[0].expect, Expect::Error("TASK_NOT_FOUND".into()));
        assert_eq!(
            steps[0].metadata.keys().collect::<Vec<_>>(),
            vec!["a2a-version"]
        );

        let c = jsonrpc(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}}),
            json!({"status": 200, "events": ["$prefix", {"jsonrpc": "2.0", "id": 1, "result": {"task": {}}}]}),
        );
        assert_eq!(
            derive(&c).remove(0).unwrap()[0].expect,
            Expect::Events(vec![json!("$prefix"), json!({"task": {}})], None)
        );
    }

    #[test]
    fn forms_without_grpc_are_skipped_with_a_reason() {
        let ok = json!({"status": 200, "body": {"result": {}}});
        for (body, response, why) in [
            (json!([]), ok.clone(), "batch"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "message/send"}),
                ok.clone(),
                "not an rpc",
            ),
            (
                json!({"jsonrpc": "1.0", "id": 1, "method": "GetTask"}),
                ok.clone(),
                "envelope",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask"}),
                json!({"status": 401}),
                "HTTP-level",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask"}),
                json!({"status": 200, "body": {"error": {"code": -32600}}}),
                "envelope error",
            ),
        ] {
            let err = derive(&jsonrpc(body, response)).remove(0).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let rest = case(json!({"description": "d", "variants": [
            {"binding": "HTTP+JSON", "version": "1.0", "request": {"method": "GET", "path": "/x"}, "response": {"status": 200}}]}));
        assert!(
            derive(&rest)
                .remove(0)
                .unwrap_err()
                .contains("HTTP+JSON-only")
        );
    }
}
