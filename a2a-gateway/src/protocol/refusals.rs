//! Every refusal the gateway gives, one constructor each: its code, JSON-RPC code, reason and
//! HTTP status in one place (docs/gateway/calls.md lists them). Governance's refusals (policy, PII,
//! approval, delegation, session kill, extensions) are in `refusals_gov.rs`.

use serde_json::{Map, Value, json};

use crate::{
    protocol::errors::Origin, protocol::errors::Refusal, protocol::errors::spec_default,
    protocol::errors::spec_reason, protocol::errors::spec_type,
};

impl Refusal {
    pub(crate) fn gateway(status: u16, code: &str, message: impl Into<String>) -> Refusal {
        Refusal {
            rpc_code: -32000,
            code: code.to_owned(),
            reason: code.to_ascii_uppercase(),
            origin: Origin::Gateway,
            status,
            message: message.into(),
            type_name: "a2a_error".to_owned(),
            extra: Map::new(),
            field: None,
        }
    }

    pub(crate) fn spec(
        status: u16,
        rpc_code: i64,
        code: &str,
        reason: &str,
        type_name: &str,
        message: impl Into<String>,
    ) -> Refusal {
        Refusal {
            rpc_code,
            code: code.to_owned(),
            reason: reason.to_owned(),
            origin: Origin::Spec,
            status,
            message: message.into(),
            type_name: type_name.to_owned(),
            extra: Map::new(),
            field: None,
        }
    }

    /// Adds an extra member.
    pub fn with(mut self, key: &str, value: Value) -> Refusal {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// -32009: the requested version is not served.
    pub fn version_not_supported(requested: &str, supported: &[&str]) -> Refusal {
        Refusal::spec(
            400,
            -32009,
            "a2a_version_not_supported",
            "VERSION_NOT_SUPPORTED",
            "VersionNotSupportedError",
            format!(
                "A2A protocol version {requested} is not supported. Supported versions: {}",
                supported.join(", ")
            ),
        )
        .with("requestedVersion", json!(requested))
        .with("supportedVersions", json!(supported))
    }

    /// 401: missing, invalid, expired or revoked key.
    pub fn unauthorized(detail: &str) -> Refusal {
        Refusal::gateway(
            401,
            "a2a_unauthorized",
            format!("Workspace API key {detail}"),
        )
    }

    /// The key lacks the operation's scope.
    pub fn scope_denied(scope: &str) -> Refusal {
        Refusal::gateway(
            403,
            "a2a_scope_denied",
            format!("The API key lacks the {scope} scope for this operation"),
        )
    }

    /// The target is not registered in the caller's workspace (or does not exist).
    pub fn agent_not_found(agent: &str) -> Refusal {
        Refusal::gateway(
            404,
            "a2a_agent_not_found",
            format!("Agent {agent} not found"),
        )
    }

    /// -32700: not JSON.
    pub fn parse_error(detail: &str) -> Refusal {
        Refusal::spec(
            400,
            -32700,
            "a2a_parse_error",
            "PARSE_ERROR",
            "JSONParseError",
            format!("Invalid JSON payload: {detail}"),
        )
    }

    /// -32600: not a JSON-RPC request (for example, no method).
    pub fn invalid_request(detail: &str) -> Refusal {
        Refusal::spec(
            400,
            -32600,
            "a2a_invalid_request",
            "INVALID_REQUEST",
            "InvalidRequestError",
            format!("Request payload validation error: {detail}"),
        )
    }

    /// -32601: unknown method, with a hint naming the right one.
    pub fn method_not_found(detail: &str) -> Refusal {
        Refusal::spec(
            404,
            -32601,
            "a2a_method_not_found",
            "METHOD_NOT_FOUND",
            "MethodNotFoundError",
            format!("Method not found: {detail}"),
        )
    }

    /// -32602: invalid parameters (with the JSON path in the message). A `detail` of the form
    /// `params.<path>: <why>` also names the field ([`Refusal::field`]: `<path>`).
    pub fn invalid_params(detail: &str) -> Refusal {
        let mut r = Refusal::spec(
            400,
            -32602,
            "a2a_invalid_params",
            "INVALID_PARAMS",
            "InvalidParamsError",
            format!("Invalid parameters: {detail}"),
        );
        r.field = detail
            .split_once(": ")
            .map(|(path, _)| path)
            .filter(|p| !p.contains(char::is_whitespace))
            .and_then(|p| p.strip_prefix("params"))
            .map(|p| p.strip_prefix('.').unwrap_or(p))
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        r
    }

    /// -32004 `a2a_untranslatable`: the peer's version cannot carry the request.
    pub fn untranslatable(detail: &str) -> Refusal {
        let mut r = Refusal::spec(
            400,
            -32004,
            "a2a_untranslatable",
            "UNSUPPORTED_OPERATION",
            "UnsupportedOperationError",
            format!("The peer's A2A version cannot carry this request: {detail}"),
        );
        r.reason = "UNSUPPORTED_OPERATION".into();
        r
    }

    /// 413: too much outbound message text.
    pub fn message_too_large(chars: usize, limit: usize) -> Refusal {
        Refusal::gateway(
            413,
            "a2a_message_too_large",
            format!("Message text is {chars} characters; the limit is {limit}"),
        )
    }

    /// 413: more text for the PII scan than `max_scanned_bytes` (the code of
    /// [`Refusal::message_too_large`]).
    pub fn scanned_too_large(bytes: usize, limit: usize) -> Refusal {
        Refusal::gateway(
            413,
            "a2a_message_too_large",
            format!(
                "The message carries {bytes} bytes of text to check for PII; the limit is {limit}"
            ),
        )
    }

    /// -32005 `ContentTypeNotSupportedError` (code `a2a_unsupported_media_type`): the request's
    /// content type is not JSON (`Accept` lists the two types). HTTP 400 on HTTP+JSON (the
    /// spec's table); JSON-RPC answers keep HTTP 415 ([`crate::edge::refusal::rpc_refusal`]).
    pub fn unsupported_media_type(got: &str) -> Refusal {
        Refusal::spec(
            400,
            -32005,
            "a2a_unsupported_media_type",
            "CONTENT_TYPE_NOT_SUPPORTED",
            "ContentTypeNotSupportedError",
            format!(
                "Content type {:?} is not supported; send application/json or application/a2a+json",
                a2a_types::elide::elide(got)
            ),
        )
    }

    /// Push notifications cannot be governed here: no callback base URL and no direct delivery.
    pub fn push_not_available(detail: &str) -> Refusal {
        Refusal::gateway(
            503,
            "a2a_push_not_available",
            format!("Push notifications are not available through this gateway: {detail}"),
        )
    }

    /// A push notification larger than `max_push_bytes` (the push callback's own code).
    pub fn push_too_large(limit: u64) -> Refusal {
        Refusal::gateway(
            413,
            "a2a_push_too_large",
            format!("The push notification exceeds the limit of {limit} bytes"),
        )
    }

    /// Streaming is disabled by the operator.
    pub fn streaming_disabled() -> Refusal {
        Refusal::gateway(
            403,
            "a2a_streaming_disabled",
            "Streaming is disabled on this gateway",
        )
    }

    /// No interface of the peer's card can be spoken.
    pub fn peer_protocol_unsupported(detail: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_peer_protocol_unsupported",
            format!("The peer offers no supported binding: {detail}"),
        )
    }

    /// The chosen interface URL failed a check; nothing was sent.
    pub fn peer_url_refused(check: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_peer_url_refused",
            format!("Peer address refused: {check}"),
        )
    }

    /// The peer could not be reached.
    pub fn peer_unreachable(detail: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_peer_unreachable",
            format!("The peer could not be reached: {detail}"),
        )
    }

    /// 502 `a2a_stream_relay_lost`: a stream resumed on this replica follows the events
    /// another replica relays, and that replica stopped (its lease ended): nobody relays the
    /// peer's later events.
    pub fn stream_relay_lost() -> Refusal {
        Refusal::gateway(
            502,
            "a2a_stream_relay_lost",
            "The gateway replica relaying this stream stopped; SubscribeToTask without \
             Last-Event-ID follows the task from the peer again",
        )
    }

    /// 502 `a2a_peer_credential_rejected`: the peer refused the agent's registered credential.
    pub fn peer_credential_rejected(agent_id: &str, status: u16) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_peer_credential_rejected",
            format!(
                "The peer {agent_id} rejected the agent's registered credential (HTTP {status}); check the credential registered for it"
            ),
        )
    }

    /// 502 `a2a_card_signature_invalid`: the peer's card signature does not allow the call
    /// (invalid; or not verified while the agent has trusted keys or signing is required).
    pub fn card_signature_invalid(detail: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_card_signature_invalid",
            format!("The peer's Agent Card signature does not allow this call: {detail}"),
        )
    }

    /// The peer's card could not be read and no cached card is available.
    pub fn card_unavailable(detail: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_card_unavailable",
            format!("The peer's Agent Card is unavailable: {detail}"),
        )
    }

    /// -32006: the peer's answer does not follow the specification.
    pub fn upstream_invalid_response(detail: &str) -> Refusal {
        let mut r = Refusal::spec(
            502,
            -32006,
            "a2a_upstream_invalid_response",
            "INVALID_AGENT_RESPONSE",
            "InvalidAgentResponseError",
            format!("Invalid agent response: {detail}"),
        );
        r.origin = Origin::Spec;
        r
    }

    /// The peer's answer cannot be carried in the caller's version.
    pub fn upstream_untranslatable(detail: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_upstream_untranslatable",
            format!("The peer's answer cannot be carried in your A2A version: {detail}"),
        )
    }

    /// The peer answered with a non-JSON content type.
    pub fn upstream_content_type(got: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_upstream_content_type",
            format!("The peer answered with content type {got:?}"),
        )
    }

    /// The peer refused the version the gateway named.
    pub fn peer_version_not_supported(peer: &str, version: &str) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_peer_version_not_supported",
            format!("Agent {peer} does not support A2A {version}"),
        )
    }

    /// The peer's answer exceeded the response limit.
    pub fn response_too_large(limit: u64) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_response_too_large",
            format!("The peer's answer exceeded {limit} bytes"),
        )
    }

    /// A stream exceeded its size limit.
    pub fn stream_too_large(limit: u64) -> Refusal {
        Refusal::gateway(
            502,
            "a2a_stream_too_large",
            format!("The stream exceeded {limit} bytes"),
        )
    }

    /// The peer stalled.
    pub fn peer_timeout(secs: u64) -> Refusal {
        Refusal::gateway(
            504,
            "a2a_peer_timeout",
            format!("The peer sent nothing for {secs} s"),
        )
    }

    /// The operation is not offered by the gateway (for example push configuration without a callback).
    pub fn unsupported_operation(detail: &str) -> Refusal {
        Refusal::spec(
            400,
            -32004,
            "a2a_unsupported_operation",
            "UNSUPPORTED_OPERATION",
            "UnsupportedOperationError",
            format!("This operation is not supported: {detail}"),
        )
    }

    /// -32001 `a2a_task_not_found`: the gateway's own answer for a task the caller does not own
    /// (another workspace's, or one that does not exist: the two are not told apart). A peer's
    /// TaskNotFound is [`Refusal::upstream_error`].
    pub fn task_not_found() -> Refusal {
        Refusal::spec(
            404,
            -32001,
            "a2a_task_not_found",
            "TASK_NOT_FOUND",
            "TaskNotFoundError",
            "Task not found",
        )
    }

    /// -32002 `a2a_task_not_cancelable`: the gateway's own answer for a task it holds that can
    /// no longer be canceled (a decided approval).
    pub fn task_not_cancelable() -> Refusal {
        Refusal::spec(
            400,
            -32002,
            "a2a_task_not_cancelable",
            "TASK_NOT_CANCELABLE",
            "TaskNotCancelableError",
            "Task cannot be canceled",
        )
    }

    /// A peer's A2A error, passed through with its code and reason; its text is withheld.
    pub fn upstream_error(rpc_code: i64, reason: Option<&str>) -> Refusal {
        let reason = reason
            .map(str::to_owned)
            .or_else(|| spec_reason(rpc_code).map(str::to_owned))
            .unwrap_or_else(|| "UPSTREAM_ERROR".to_owned());
        let (status, message) = spec_default(rpc_code);
        Refusal {
            rpc_code,
            code: "a2a_upstream_error".to_owned(),
            reason,
            origin: if spec_reason(rpc_code).is_some() {
                Origin::Spec
            } else {
                Origin::Gateway
            },
            status,
            message: message.to_owned(),
            type_name: spec_type(rpc_code).unwrap_or("a2a_error").to_owned(),
            extra: Map::new(),
            field: None,
        }
    }

    /// 413: the request body is over the gateway's limit (refused from `Content-Length` before
    /// the body is read, or while reading it).
    pub fn payload_too_large(limit: u64) -> Refusal {
        Refusal::gateway(
            413,
            "a2a_payload_too_large",
            format!("The request body exceeds the limit of {limit} bytes"),
        )
    }

    /// 404: no route of the gateway matches the path.
    pub fn route_not_found(method: &str, path: &str) -> Refusal {
        Refusal::spec(
            404,
            -32601,
            "a2a_route_not_found",
            "METHOD_NOT_FOUND",
            "MethodNotFoundError",
            format!("No route for {method} {path}"),
        )
    }

    /// 405: the path exists but not for this HTTP method.
    pub fn method_not_allowed(method: &str, path: &str) -> Refusal {
        Refusal::spec(
            405,
            -32601,
            "a2a_method_not_allowed",
            "METHOD_NOT_FOUND",
            "MethodNotFoundError",
            format!("{method} is not allowed on {path}"),
        )
    }

    /// 400: a path segment is not valid percent-encoded UTF-8.
    pub fn bad_path(detail: &str) -> Refusal {
        Refusal::spec(
            400,
            -32600,
            "a2a_bad_path",
            "INVALID_REQUEST",
            "InvalidRequestError",
            format!("Invalid request path: {detail}"),
        )
    }

    /// 422 (admin API): the peer's card offers no binding the gateway can call.
    pub fn registration_refused(message: &str) -> Refusal {
        Refusal::gateway(422, "a2a_registration_refused", message)
    }

    /// An admin API error (`a2a_admin_error`) with its HTTP status.
    pub fn admin(status: u16, message: &str) -> Refusal {
        Refusal::gateway(status, "a2a_admin_error", message)
    }

    /// Any other HTTP-level failure with its status (an axum rejection, say).
    pub fn http(status: u16, message: &str) -> Refusal {
        match status {
            400 => Refusal::invalid_request(message),
            415 => Refusal::unsupported_media_type(message),
            422 => Refusal::invalid_params(message),
            _ => Refusal::gateway(status, "a2a_http_error", message),
        }
    }

    /// 503 `a2a_store_unavailable`: the gateway's database cannot be reached (PostgreSQL down
    /// or unreachable); the peer was not called for what the store refused. Retry later, or
    /// on another replica.
    pub fn store_unavailable() -> Refusal {
        Refusal::gateway(
            503,
            "a2a_store_unavailable",
            "The gateway's store cannot be reached; retry later",
        )
    }

    /// A failed store call: [`Refusal::store_unavailable`] when the database cannot be
    /// reached, else an internal error saying `e` (prefixed by `what` when not empty).
    pub fn store(what: &str, e: &crate::store::StoreError) -> Refusal {
        match (e.is_unavailable(), what) {
            (true, _) => Refusal::store_unavailable(),
            (false, "") => Refusal::internal(&e.to_string()),
            (false, w) => Refusal::internal(&format!("{w}: {e}")),
        }
    }

    /// Internal failure.
    pub fn internal(detail: &str) -> Refusal {
        Refusal::gateway(
            500,
            "a2a_internal_error",
            format!("Internal gateway error: {detail}"),
        )
    }
}
