//! Peer calls, the hop itself: one request to the chosen interface of the peer (JSON-RPC or
//! HTTP+JSON, in the peer's version; gRPC 1.0 in `crate::outbound::grpc`), its answer read within
//! limits and translated back to the caller's version; the peer's errors become the gateway's
//! refusals.

pub(crate) mod cancel_end;
mod choose;
pub(crate) mod grpc;
pub(crate) mod peer_error;
pub(crate) use peer_error::map_answer_error;
pub(crate) mod relay;
pub(crate) mod side_call;

pub(crate) use choose::{card_skills, choose, registered_card};

use std::time::Duration;

use serde_json::{Value, json};
use url::Url;

use crate::governance::loops::HOPS_HEADER;
use crate::protocol::ops::GatewayOp;
use crate::protocol::ops::Operation;
use crate::protocol::xlate;
use crate::store::Agent;
use crate::{peer, peer::Chosen};
use crate::{peer::http::PeerResponse, peer::http::ReadError, peer::http::SendError};
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

pub(crate) struct PeerCall<'a> {
    pub(crate) st: &'a GatewayState,
    pub(crate) agent: &'a Agent,
    pub(crate) chosen: &'a Chosen,
    pub(crate) caller: Version,
    pub(crate) traceparent: String,
    pub(crate) hops: u32,
    pub(crate) id: Value,
    pub(crate) max_resp: u64,
    pub(crate) max_stream: u64,
    /// The hop's governance: answers and events pass its steps in 1.0 form.
    pub(crate) gov: Option<std::sync::Arc<crate::governance::HopGov>>,
    /// A stream's registration with the kill switch.
    pub(crate) open: Option<std::sync::Arc<crate::governance::kill::OpenStream>>,
    /// Nanoseconds spent waiting for the peer (summed over the hop's calls; a stream's until
    /// its answer head): the hop's peer time in the metrics ([`PeerCall::peer_time`]).
    pub(crate) peer_nanos: std::sync::atomic::AtomicU64,
}

/// translation to the peer's version: the params in the peer's version, with the chosen entry's
/// tenant (1.0), without the paging members when the gateway pages itself (`paged`).
pub(crate) fn peer_params(
    op: Operation,
    caller: Version,
    chosen: &Chosen,
    params: &Value,
    paged: bool,
) -> Result<Value, Refusal> {
    xlate::validate_request(op, caller, params)?;
    peer_params_validated(op, caller, chosen, params, paged)
}

/// [`peer_params`] for params the pipeline already validated in the caller's version
/// ("request validation in the caller's version"): the strict walk runs once per hop.
pub(crate) fn peer_params_validated(
    op: Operation,
    caller: Version,
    chosen: &Chosen,
    params: &Value,
    paged: bool,
) -> Result<Value, Refusal> {
    let peer_params = xlate::translate_request(op, caller, chosen.version, params)?;
    Ok(peer_form(chosen, peer_params, paged))
}

/// The request of a hop in the peer's version, made the peer's: the chosen entry's tenant
/// (1.0), without the paging members when the gateway pages itself (`paged`).
pub(crate) fn peer_form(chosen: &Chosen, mut peer_params: Value, paged: bool) -> Value {
    if chosen.version == Version::V1
        && let Some(obj) = peer_params.as_object_mut()
    {
        match &chosen.tenant {
            Some(t) => {
                obj.insert("tenant".into(), json!(t));
            }
            None => {
                obj.remove("tenant");
            }
        }
        if paged {
            obj.remove("pageSize");
            obj.remove("pageToken");
        }
    }
    peer_params
}

/// The `Accept` of a peer call: event streams for the streaming operations, else `unary`.
fn accept(op: Operation, unary: &'static str) -> reqwest::header::HeaderValue {
    reqwest::header::HeaderValue::from_static(if op.is_streaming() {
        "text/event-stream"
    } else {
        unary
    })
}

/// A peer's answer body as JSON.
fn parse_body(body: &[u8]) -> Result<Value, Refusal> {
    serde_json::from_slice(body)
        .map_err(|e| Refusal::upstream_invalid_response(&format!("not JSON: {e}")))
}

/// A JSON-RPC answer whose `result` passes through (`crate::protocol::passed`): a response with a
/// non-null `result` and no `error` member; anything else takes the `Value` path.
fn passed_rpc(body: &[u8]) -> Option<crate::protocol::passed::Passed> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        result: Option<&'a serde_json::value::RawValue>,
        #[serde(default, deserialize_with = "crate::protocol::passed::present")]
        error: Option<serde::de::IgnoredAny>,
    }
    let env: Envelope = serde_json::from_slice(body).ok()?;
    if env.error.is_some() {
        return None;
    }
    crate::protocol::passed::Passed::send_result(env.result?.get())
}

/// A JSON body with an `error` object: an A2A error answer (JSON-RPC or `google.rpc.Status`).
fn is_a2a_error(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .is_some_and(|v| v.get("error").is_some_and(Value::is_object))
}

impl PeerCall<'_> {
    /// peer call: `op` on the chosen binding.
    pub(crate) async fn call(&self, op: Operation, params: Value) -> Result<Answer, Refusal> {
        self.call_passing(op, params, false).await
    }

    /// [`PeerCall::call`]; with `pass` (see `crate::protocol::passed::passable`) the peer's answer may
    /// come back as [`Answer::Passed`], its text unparsed.
    pub(crate) async fn call_passing(
        &self,
        op: Operation,
        params: Value,
        pass: bool,
    ) -> Result<Answer, Refusal> {
        let r = match self.chosen.binding {
            Binding::JsonRpc => self.jsonrpc(op, params, pass).await,
            Binding::HttpJson => self.rest(op, params, pass).await,
            Binding::Grpc => {
                let started = std::time::Instant::now();
                let r = self.grpc(op, params).await;
                self.add_peer_time(started);
                r
            }
        };
        // A peer's error reaches the caller only through governance.
        r.map_err(|e| peer_error::govern(&self.st.governance, self.gov.as_deref(), e))
    }

    /// Adds the time since `started` to the hop's peer time.
    fn add_peer_time(&self, started: std::time::Instant) {
        let took = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.peer_nanos
            .fetch_add(took, std::sync::atomic::Ordering::Relaxed);
    }

    /// The hop's peer time so far (`None` before any call): waiting for the peer's answer
    /// head ([`PeerCall::send`]) and body (`read_body`); a gRPC call whole.
    pub(crate) fn peer_time(&self) -> Option<Duration> {
        match self.peer_nanos.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            n => Some(Duration::from_nanos(n)),
        }
    }

    pub(crate) fn request(
        &self,
        method: reqwest::Method,
        url: Url,
        content_type: &'static str,
    ) -> reqwest::RequestBuilder {
        use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
        // Static names and values: no header parse or copy per call.
        let mut req = self
            .st
            .peers()
            .http
            .request(method, url)
            .header(
                HeaderName::from_static("a2a-version"),
                HeaderValue::from_static(self.chosen.version.as_str()),
            )
            .header(HeaderName::from_static("traceparent"), &self.traceparent)
            .header(
                HeaderName::from_static(HOPS_HEADER),
                HeaderValue::from(self.hops),
            )
            .header(CONTENT_TYPE, HeaderValue::from_static(content_type));
        if let Some(g) = &self.gov {
            req = req.header(crate::governance::loops::CHAIN_HEADER, &g.chain_header);
        }
        if let Some(c) = &self.agent.credential {
            req = req.bearer_auth(c);
        }
        req = peer::delegated::outbound(req, self.st.config().dvara_headers);
        if let Some(id) = crate::tasks::resume::upstream() {
            req = req.header("Last-Event-ID", id);
        }
        crate::governance::extensions::outbound(req, self.chosen.version)
    }

    /// Sends a peer request through the hops' client (`crate::peer::http`): the whole call,
    /// answer body included, within `peer_timeout_secs` (24 h for a streaming operation, whose
    /// stall timer is the relay's).
    pub(crate) async fn send(
        &self,
        op: Operation,
        req: reqwest::RequestBuilder,
    ) -> Result<PeerResponse, Refusal> {
        let req = req
            .build()
            .map_err(|e| Refusal::peer_unreachable(&peer::error_chain(&e)))?;
        let timeout = if op.is_streaming() {
            Duration::from_secs(24 * 3600)
        } else {
            Duration::from_secs(self.st.config().peer_timeout_secs.max(1))
        };
        let peers = self.st.peer_clients.load_full();
        let started = std::time::Instant::now();
        let r = tokio::select! {
            _ = self.st.shutdown.cancelled() => return Err(crate::protocol::errors::shutting_down()),
            r = peers.peer_http.send(req, timeout, op.reads_only()) => r,
        };
        self.add_peer_time(started);
        let resp = r.map_err(|e| match e {
            SendError::Timeout => Refusal::peer_timeout(self.st.config().peer_timeout_secs),
            SendError::Failed(m) => Refusal::peer_unreachable(&m),
        })?;
        crate::governance::extensions::inbound(resp.headers());
        Ok(resp)
    }

    /// The peer's answer body within the limits, checked to be JSON by its content type (an
    /// empty success reads as `{}`).
    async fn read_body(&self, resp: PeerResponse) -> Result<(u16, Vec<u8>), Refusal> {
        let status = resp.status().as_u16();
        // 401: the registered credential was refused (403 too, unless the answer is an A2A
        // error, checked once the body is read).
        if status == 401 {
            return Err(Refusal::peer_credential_rejected(
                &self.agent.agent_id,
                status,
            ));
        }
        // Checked once the body is read (an empty success needs no content type).
        let ct = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let not_json = (!a2a_types::version::is_json_media_type(ct)).then(|| ct.to_owned());
        let started = std::time::Instant::now();
        let read = tokio::select! {
            _ = self.st.shutdown.cancelled() => return Err(crate::protocol::errors::shutting_down()),
            r = resp.read_limited(self.max_resp) => r,
        };
        self.add_peer_time(started);
        let body = read.map_err(|e| match e {
            ReadError::TooLarge => Refusal::response_too_large(self.max_resp),
            ReadError::TimedOut => Refusal::peer_timeout(self.st.config().peer_timeout_secs),
            ReadError::Failed(e) => Refusal::peer_unreachable(&e),
        })?;
        if body.is_empty() && (200..300).contains(&status) {
            return Ok((status, b"{}".to_vec()));
        }
        if status == 403 && !is_a2a_error(&body) {
            return Err(Refusal::peer_credential_rejected(
                &self.agent.agent_id,
                status,
            ));
        }
        if let Some(ct) = not_json {
            return Err(Refusal::upstream_content_type(if ct.is_empty() {
                "(none)"
            } else {
                &ct
            }));
        }
        Ok((status, body))
    }

    pub(crate) fn is_sse(resp: &PeerResponse) -> bool {
        resp.headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(a2a_types::version::is_event_stream)
    }

    pub(crate) async fn jsonrpc(
        &self,
        op: Operation,
        params: Value,
        pass: bool,
    ) -> Result<Answer, Refusal> {
        // Written straight from the parts (no envelope object built first).
        #[derive(serde::Serialize)]
        struct Envelope<'a> {
            jsonrpc: &'static str,
            id: &'a Value,
            method: &'static str,
            params: &'a Value,
        }
        let body = serde_json::to_vec(&Envelope {
            jsonrpc: "2.0",
            id: &self.id,
            method: op.name(self.chosen.version),
            params: &params,
        })
        .map_err(|e| Refusal::internal(&format!("peer request: {e}")))?;
        drop(params);
        let mut req = self.request(
            reqwest::Method::POST,
            self.chosen.url.clone(),
            "application/json",
        );
        req = req.header(reqwest::header::ACCEPT, accept(op, "application/json"));
        let resp = self.send(op, req.body(body)).await?;
        if op.is_streaming() && Self::is_sse(&resp) {
            return Ok(Answer::Stream(self.stream(resp, Binding::JsonRpc)));
        }
        let (_, body) = self.read_body(resp).await?;
        if pass && let Some(p) = passed_rpc(&body) {
            return Ok(Answer::Passed(p));
        }
        let mut v = parse_body(&body)?;
        if let Some(err) = v.get("error") {
            return Err(peer_error::from_rpc(
                err,
                &self.agent.agent_id,
                self.chosen.version,
            ));
        }
        // The 1.x Python SDK omits `result` for DeleteTaskPushNotificationConfig (its result
        // is empty); read that as the empty result rather than refuse it.
        let has_jsonrpc = v.get("jsonrpc").is_some();
        let result = match v.get_mut("result") {
            Some(r) => r.take(),
            None if op == Operation::DeleteTaskPushNotificationConfig && has_jsonrpc => Value::Null,
            None => {
                return Err(Refusal::upstream_invalid_response(
                    "neither result nor error",
                ));
            }
        };
        if op.is_streaming() {
            return Err(Refusal::upstream_invalid_response(
                "expected an event stream",
            ));
        }
        self.answer(op, self.chosen.version, result)
    }

    /// answer checks and translation: the peer's unary result (in `from`) in the caller's
    /// version; with governance, read into 1.0, passed through the answer steps, then written in
    /// the caller's version.
    pub(crate) fn answer(
        &self,
        op: Operation,
        from: Version,
        result: Value,
    ) -> Result<Answer, Refusal> {
        let Some(g) = self.gov.as_ref().filter(|g| g.active) else {
            return xlate::result_owned(op, from, self.caller, result)
                .map(Answer::Unary)
                .map_err(map_answer_error);
        };
        let mut r10 =
            xlate::result_owned(op, from, Version::V1, result).map_err(map_answer_error)?;
        {
            let mut ev = g
                .evidence
                .lock()
                .map_err(|_| Refusal::internal("evidence lock"))?;
            self.st.governance.answer(&g.hop, &mut r10, &mut ev)?;
        }
        xlate::result_owned(op, Version::V1, self.caller, r10)
            .map(Answer::Unary)
            .map_err(map_answer_error)
    }

    pub(crate) fn rest_url(&self, segments: &[&str]) -> Url {
        let mut url = self.chosen.url.clone();
        if let Ok(mut p) = url.path_segments_mut() {
            p.pop_if_empty();
            if let Some(t) = &self.chosen.tenant {
                p.push(t);
            }
            for s in segments {
                p.push(s);
            }
        }
        url
    }

    pub(crate) async fn rest(
        &self,
        op: Operation,
        mut params: Value,
        pass: bool,
    ) -> Result<Answer, Refusal> {
        use reqwest::Method;
        if let Some(o) = params.as_object_mut() {
            o.remove("tenant");
        }
        let s = |k: &str| {
            params
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let (method, url, body): (Method, Url, Option<Value>) = match op {
            Operation::SendMessage => {
                (Method::POST, self.rest_url(&["message:send"]), Some(params))
            }
            Operation::SendStreamingMessage => (
                Method::POST,
                self.rest_url(&["message:stream"]),
                Some(params),
            ),
            Operation::GetTask => {
                let mut u = self.rest_url(&["tasks", &s("id")]);
                if let Some(h) = params.get("historyLength") {
                    u.query_pairs_mut()
                        .append_pair("historyLength", &h.to_string());
                }
                (Method::GET, u, None)
            }
            Operation::ListTasks => {
                let mut u = self.rest_url(&["tasks"]);
                if let Some(o) = params.as_object() {
                    for (k, v) in o {
                        let val = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        u.query_pairs_mut().append_pair(k, &val);
                    }
                }
                (Method::GET, u, None)
            }
            Operation::CancelTask => {
                let mut b = params.clone();
                if let Some(o) = b.as_object_mut() {
                    o.remove("id");
                }
                (
                    Method::POST,
                    self.rest_url(&["tasks", &format!("{}:cancel", s("id"))]),
                    Some(b),
                )
            }
            Operation::SubscribeToTask => (
                Method::POST,
                self.rest_url(&["tasks", &format!("{}:subscribe", s("id"))]),
                Some(json!({})),
            ),
            Operation::CreateTaskPushNotificationConfig => (
                Method::POST,
                self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs"]),
                Some(params.clone()),
            ),
            Operation::GetTaskPushNotificationConfig => (
                Method::GET,
                self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs", &s("id")]),
                None,
            ),
            Operation::ListTaskPushNotificationConfigs => {
                let mut u = self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs"]);
                for k in ["pageSize", "pageToken"] {
                    if let Some(v) = params.get(k) {
                        let val = v
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| v.to_string());
                        u.query_pairs_mut().append_pair(k, &val);
                    }
                }
                (Method::GET, u, None)
            }
            Operation::DeleteTaskPushNotificationConfig => (
                Method::DELETE,
                self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs", &s("id")]),
                None,
            ),
            // Not an operation the gateway forwards (`crate::protocol::ops::ALL`).
            Operation::GetExtendedAgentCard => {
                (Method::GET, self.rest_url(&["extendedAgentCard"]), None)
            }
        };
        let mut req = self.request(method, url, "application/a2a+json");
        req = req.header(
            reqwest::header::ACCEPT,
            accept(op, "application/a2a+json, application/json"),
        );
        if let Some(b) = body {
            req = req.body(
                serde_json::to_vec(&b)
                    .map_err(|e| Refusal::internal(&format!("peer request: {e}")))?,
            );
        }
        let resp = self.send(op, req).await?;
        if op.is_streaming() && resp.status().is_success() && Self::is_sse(&resp) {
            return Ok(Answer::Stream(self.stream(resp, Binding::HttpJson)));
        }
        let (status, body) = self.read_body(resp).await?;
        if pass
            && (200..300).contains(&status)
            && let Some(p) = std::str::from_utf8(&body)
                .ok()
                .and_then(crate::protocol::passed::Passed::send_result)
        {
            return Ok(Answer::Passed(p));
        }
        let v = parse_body(&body)?;
        if !(200..300).contains(&status) {
            return Err(peer_error::from_status(
                status,
                &v,
                &self.agent.agent_id,
                self.chosen.version,
            ));
        }
        if op.is_streaming() {
            return Err(Refusal::upstream_invalid_response(
                "expected an event stream",
            ));
        }
        self.answer(op, Version::V1, v)
    }
}
