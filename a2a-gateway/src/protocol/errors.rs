//! The gateway's refusal model and its wire forms.
//!
//! One [`Refusal`] is rendered in the caller's version and binding:
//! - JSON-RPC 0.3 (or no version): `error.data` is an object `{type, code, trace_id, ...}`;
//! - JSON-RPC 1.0: `error.data` is a list with one `google.rpc.ErrorInfo`, `domain` =
//!   [`GATEWAY_DOMAIN`] for the gateway's own decisions and `a2a-protocol.org` for errors the
//!   A2A specification or JSON-RPC defines;
//! - HTTP+JSON 1.0 and card requests: a `google.rpc.Status` body with the refusal's HTTP status.

use a2a_types::error::ErrorKind;
use serde_json::{Map, Value};

/// `domain` of ErrorInfo for decisions the gateway made.
pub const GATEWAY_DOMAIN: &str = crate::config::DEFAULT_ERROR_DOMAIN;
/// `domain` of ErrorInfo for errors the A2A specification defines.
pub const SPEC_DOMAIN: &str = "a2a-protocol.org";

tokio::task_local! {
    /// The `error_domain` setting while a request is served (`crate::edge::headers` sets it
    /// when it is not [`GATEWAY_DOMAIN`]).
    static DOMAIN: std::sync::Arc<str>;
}

/// Runs `f` with `domain` as the gateway's `ErrorInfo.domain`.
pub fn with_domain<F: std::future::Future>(
    domain: std::sync::Arc<str>,
    f: F,
) -> impl std::future::Future<Output = F::Output> {
    DOMAIN.scope(domain, f)
}

/// Runs `f` (a body's poll) with `domain` as the gateway's `ErrorInfo.domain`.
pub fn sync_with_domain<R>(domain: std::sync::Arc<str>, f: impl FnOnce() -> R) -> R {
    DOMAIN.sync_scope(domain, f)
}

/// The gateway's `ErrorInfo.domain` now: the request's `error_domain`, else [`GATEWAY_DOMAIN`].
pub fn gateway_domain() -> std::borrow::Cow<'static, str> {
    DOMAIN
        .try_with(|d| std::borrow::Cow::Owned(d.to_string()))
        .unwrap_or(std::borrow::Cow::Borrowed(GATEWAY_DOMAIN))
}

// The version and binding vocabulary is a2a-types' own, shared by every crate.
pub use a2a_types::version::{Binding, Version};

/// Who decided a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The gateway (policy, keys, limits, peer reachability ...): JSON-RPC -32000 unless noted.
    Gateway,
    /// An error the A2A specification or JSON-RPC defines.
    Spec,
}

/// A refusal, rendered in the caller's form.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// JSON-RPC code (always a number).
    pub rpc_code: i64,
    /// The gateway's code, such as `a2a_scope_denied`.
    pub code: String,
    /// ErrorInfo `reason`.
    pub reason: String,
    /// Gateway decision or specification error.
    pub origin: Origin,
    /// The refusal's own HTTP status (used for REST, cards, 401, and in `refusal` status mode).
    pub status: u16,
    /// Human-readable message.
    pub message: String,
    /// 0.3 `data.type`.
    pub type_name: String,
    /// Extra members (0.3 `data`, 1.0 ErrorInfo `metadata` as strings).
    pub extra: Map<String, Value>,
    /// The request field an invalid-params refusal is about (`message.parts[1]`), sent to gRPC
    /// callers as a `google.rpc.BadRequest` violation.
    pub field: Option<String>,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.rpc_code, self.message)
    }
}

/// The gateway is shutting down: the final event of a stream, the answer of a waiting call.
pub fn shutting_down() -> Refusal {
    Refusal::gateway(
        503,
        "a2a_shutting_down",
        "The gateway is shutting down; retry against another instance or later".to_owned(),
    )
}

/// The specification's ErrorInfo reason of a JSON-RPC code (from [`ErrorKind`]), `None` for a
/// code the specification does not name.
///
/// Two reasons keep the gateway's spelling (`PARSE_ERROR`, `INTERNAL_ERROR`, as DVARA writes them)
/// where `a2a-types` says `JSON_PARSE` and `INTERNAL`; the specification names neither.
pub fn spec_reason(code: i64) -> Option<&'static str> {
    match ErrorKind::from_code(code) {
        ErrorKind::Other(_) => None,
        ErrorKind::JsonParse => Some("PARSE_ERROR"),
        ErrorKind::Internal => Some("INTERNAL_ERROR"),
        k => Some(k.reason()),
    }
}

/// The error's type name in 0.3 `error.data.type` (the 0.3 name where 0.3 has one).
pub(crate) fn spec_type(code: i64) -> Option<&'static str> {
    match ErrorKind::from_code(code) {
        ErrorKind::Other(_) => None,
        k => Some(k.name_v03().unwrap_or(k.name_v1())),
    }
}

pub(crate) fn spec_default(code: i64) -> (u16, &'static str) {
    match code {
        -32001 => (404, "Task not found"),
        -32002 => (400, "Task cannot be canceled"),
        -32003 => (400, "Push Notification is not supported"),
        -32004 => (400, "This operation is not supported"),
        -32005 => (400, "Incompatible content types"),
        -32006 => (502, "Invalid agent response"),
        -32007 => (400, "Extended Agent Card is not configured"),
        -32008 => (400, "Extension support is required"),
        -32009 => (400, "Version not supported"),
        -32700 => (400, "Invalid JSON payload"),
        -32600 => (400, "Request payload validation error"),
        -32601 => (404, "Method not found"),
        -32602 => (400, "Invalid parameters"),
        -32603 => (500, "Internal error"),
        _ => (502, "The agent answered with an error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn version_refusal_forms_match_the_dvara_api() {
        let r = Refusal::version_not_supported("0.5", &["0.3", "1.0"]);
        let v03 = r.jsonrpc_response(Version::V03, &Value::Null, "t1");
        assert_eq!(v03["error"]["code"], -32009);
        assert_eq!(v03["error"]["data"]["type"], "VersionNotSupportedError");
        assert_eq!(
            v03["error"]["data"]["supportedVersions"],
            json!(["0.3", "1.0"])
        );
        assert_eq!(v03["error"]["data"]["trace_id"], "t1");
        let v10 = r.jsonrpc_response(Version::V1, &Value::Null, "t1");
        let info = &v10["error"]["data"][0];
        assert_eq!(info["domain"], SPEC_DOMAIN);
        assert_eq!(info["reason"], "VERSION_NOT_SUPPORTED");
        assert_eq!(info["metadata"]["supportedVersions"], "0.3,1.0");
        assert_eq!(info["metadata"]["traceId"], "t1");
    }

    #[test]
    fn spec_tables_come_from_the_types() {
        assert_eq!(spec_reason(-32009), Some("VERSION_NOT_SUPPORTED"));
        assert_eq!(spec_reason(-32700), Some("PARSE_ERROR"));
        assert_eq!(spec_reason(-32603), Some("INTERNAL_ERROR"));
        assert_eq!(spec_reason(-32000), None);
        assert_eq!(
            spec_type(-32007),
            Some("AuthenticatedExtendedCardNotConfiguredError")
        );
        assert_eq!(spec_type(-32009), Some("VersionNotSupportedError"));
        assert_eq!(spec_type(-32700), Some("JSONParseError"));
        assert_eq!(spec_type(-31999), None);
    }

    /// The trust codes in both versions' forms.
    #[test]
    fn card_signature_refusal_forms() {
        let r = Refusal::card_signature_invalid("invalid: key \"k1\"")
            .with("signatureTrust", json!("invalid"));
        let v03 = r.jsonrpc_response(Version::V03, &Value::Null, "t");
        assert_eq!(v03["error"]["code"], -32000);
        assert_eq!(v03["error"]["data"]["code"], "a2a_card_signature_invalid");
        assert_eq!(v03["error"]["data"]["signatureTrust"], "invalid");
        let v10 = r.jsonrpc_error(Version::V1, "t");
        assert_eq!(v10["data"][0]["reason"], "A2A_CARD_SIGNATURE_INVALID");
        assert_eq!(v10["data"][0]["domain"], GATEWAY_DOMAIN);
        assert_eq!(v10["data"][0]["metadata"]["signatureTrust"], "invalid");
        assert_eq!(r.status_body("t")["error"]["code"], 502);
    }

    #[test]
    fn extension_refusals_in_both_versions() {
        let na = Refusal::extension_not_allowed("urn:x");
        let v03 = na.jsonrpc_error(Version::V03, "t");
        assert_eq!(v03["code"], -32000);
        assert_eq!(v03["data"]["code"], "a2a_extension_not_allowed");
        assert_eq!(v03["data"]["extension"], "urn:x");
        let v10 = na.jsonrpc_error(Version::V1, "t");
        assert_eq!(v10["data"][0]["domain"], GATEWAY_DOMAIN);
        assert_eq!(v10["data"][0]["reason"], "A2A_EXTENSION_NOT_ALLOWED");
        assert_eq!(na.status_body("t")["error"]["code"], 403);
        let sr = Refusal::extension_support_required("urn:x");
        let v03 = sr.jsonrpc_error(Version::V03, "t");
        assert_eq!(v03["code"], -32008);
        assert_eq!(v03["data"]["type"], "ExtensionSupportRequiredError");
        assert_eq!(v03["data"]["code"], "a2a_extension_support_required");
        let v10 = sr.jsonrpc_error(Version::V1, "t");
        assert_eq!(v10["code"], -32008);
        assert_eq!(v10["data"][0]["domain"], SPEC_DOMAIN);
        assert_eq!(v10["data"][0]["reason"], "EXTENSION_SUPPORT_REQUIRED");
        assert_eq!(v10["data"][0]["metadata"]["extension"], "urn:x");
        let body = sr.status_body("t");
        assert_eq!(body["error"]["code"], 400);
        assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
    }

    /// An unreachable store: 503 in every form, UNAVAILABLE over gRPC; other store errors
    /// stay internal errors.
    #[test]
    fn store_refusal_forms() {
        let r = Refusal::store_unavailable();
        let v10 = r.jsonrpc_error(Version::V1, "t");
        assert_eq!(v10["code"], -32000);
        assert_eq!(v10["data"][0]["reason"], "A2A_STORE_UNAVAILABLE");
        assert_eq!(v10["data"][0]["metadata"]["code"], "a2a_store_unavailable");
        let v03 = r.jsonrpc_error(Version::V03, "t");
        assert_eq!(v03["data"]["code"], "a2a_store_unavailable");
        let body = r.status_body("t");
        assert_eq!(body["error"]["code"], 503);
        assert_eq!(body["error"]["status"], "UNAVAILABLE");
        assert_eq!(r.grpc_status("t").code(), tonic::Code::Unavailable);
        let other = Refusal::store("send records", &crate::store::StoreError::Poisoned);
        assert_eq!(other.code, "a2a_internal_error");
        assert_eq!(other.status, 500);
        assert!(
            other
                .message
                .contains("send records: database lock poisoned")
        );
    }

    #[test]
    fn gateway_decisions_use_gateway_domain() {
        let r = Refusal::scope_denied("a2a:send");
        let v = r.jsonrpc_error(Version::V1, "t");
        assert_eq!(v["code"], -32000);
        assert_eq!(v["data"][0]["domain"], GATEWAY_DOMAIN);
        assert_eq!(v["data"][0]["reason"], "A2A_SCOPE_DENIED");
        let up = Refusal::upstream_error(-32001, None);
        assert_eq!(
            up.jsonrpc_error(Version::V1, "t")["data"][0]["reason"],
            "TASK_NOT_FOUND"
        );
        assert_eq!(up.status_body("t")["error"]["code"], 404);
    }
}
