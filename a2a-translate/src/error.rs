//! The refusal type, card translation results and the JSON-RPC forms of a refusal.

use std::borrow::Cow;
use std::fmt;

use a2a_types::error::{A2aError, ErrorKind};
use serde_json::{Value, json};

use crate::path::Path;

/// JSON-RPC code used for untranslatable requests and answers (`UnsupportedOperationError`).
pub const UNTRANSLATABLE_CODE: i64 = -32004;
/// ErrorInfo `reason` for a request the target version cannot carry.
pub const REASON_UNTRANSLATABLE: &str = "a2a_untranslatable";
/// ErrorInfo `reason` for an upstream answer the caller's version cannot carry.
pub const REASON_UPSTREAM_UNTRANSLATABLE: &str = "a2a_upstream_untranslatable";
/// ErrorInfo `domain` of this crate's own reasons (not `a2a-protocol.org`, which owns the spec's).
pub const DOMAIN: &str = "a2a-rs";

/// A value the target version cannot carry: where it is and why.
///
/// `Display` gives `path: reason`, e.g.
/// `params.message.parts[0].filename: A2A 0.3 text parts carry no filename`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untranslatable {
    /// JSON path of the offending member, relative to the translated document
    /// (`params.` / `result.` prefixes are added by the request and result entry points).
    pub path: String,
    /// Why the target cannot carry it.
    pub reason: Cow<'static, str>,
}

impl std::error::Error for Untranslatable {}

impl fmt::Display for Untranslatable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.path, self.reason)
        }
    }
}

/// Whether a refusal concerns the caller's own request or an answer coming back from upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The caller's request cannot be sent on: reason `a2a_untranslatable`.
    Request,
    /// The upstream answer cannot be delivered to the caller: reason `a2a_upstream_untranslatable`.
    Answer,
}

impl Side {
    fn reason(self) -> &'static str {
        match self {
            Side::Request => REASON_UNTRANSLATABLE,
            Side::Answer => REASON_UPSTREAM_UNTRANSLATABLE,
        }
    }
}

impl Untranslatable {
    /// A refusal at `path`.
    pub fn new(path: impl Into<String>, reason: impl Into<Cow<'static, str>>) -> Self {
        Untranslatable {
            path: path.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn at(path: &Path<'_>, reason: impl Into<Cow<'static, str>>) -> Self {
        Untranslatable {
            path: path.to_string(),
            reason: reason.into(),
        }
    }

    /// Prefixes the path (`prefix.path`), used by the envelope entry points.
    pub fn under(mut self, prefix: &str) -> Self {
        self.path = if self.path.is_empty() {
            prefix.to_owned()
        } else if self.path.starts_with('[') {
            format!("{prefix}{}", self.path)
        } else {
            format!("{prefix}.{}", self.path)
        };
        self
    }

    /// The JSON-RPC `error` object for a **1.0** caller: code -32004 with an `ErrorInfo`
    /// (`reason` `a2a_untranslatable` or `a2a_upstream_untranslatable`, `metadata.path`).
    pub fn jsonrpc_error_v1(&self, side: Side) -> Value {
        json!({
            "code": UNTRANSLATABLE_CODE,
            "message": self.to_string(),
            "data": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": side.reason(),
                "domain": DOMAIN,
                "metadata": {"path": self.path, "detail": self.reason},
            }],
        })
    }

    /// The refusal as an [`A2aError`] (`UnsupportedOperationError`, -32004), for servers that
    /// answer through the `a2a-types` error model (JSON-RPC of either version and the 1.0 REST
    /// body): its A2A `ErrorInfo` (reason `UNSUPPORTED_OPERATION`) carries `metadata.path` and
    /// `metadata.detail`, followed by this crate's own `ErrorInfo` (reason `a2a_untranslatable`
    /// or `a2a_upstream_untranslatable`, domain `a2a-rs`); a 0.3 caller gets
    /// `data: {"reason", "path", "detail"}`.
    pub fn to_a2a_error(&self, side: Side) -> A2aError {
        let mut e = A2aError::new(ErrorKind::UnsupportedOperation, self.to_string())
            .with_metadata("path", self.path.clone())
            .with_metadata("detail", self.reason.clone());
        e.extra_details.push(json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": side.reason(),
            "domain": DOMAIN,
            "metadata": {"path": self.path, "detail": self.reason},
        }));
        e.data_v03 =
            Some(json!({"reason": side.reason(), "path": self.path, "detail": self.reason}));
        e
    }

    /// The JSON-RPC `error` object for a **0.3** caller: code -32004 with
    /// `data: {"reason", "path", "detail"}`.
    pub fn jsonrpc_error_v03(&self, side: Side) -> Value {
        json!({
            "code": UNTRANSLATABLE_CODE,
            "message": self.to_string(),
            "data": {"reason": side.reason(), "path": self.path, "detail": self.reason},
        })
    }
}

/// Something left out of a translated agent card, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omission {
    /// JSON path in the **source** card.
    pub path: String,
    /// Why the target card cannot carry it.
    pub reason: Cow<'static, str>,
}

impl fmt::Display for Omission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

/// A translated agent card with what had to be left out.
///
/// A card is a discovery document: parts a client of the target version could not use
/// (interfaces of another version, security schemes without a target form, and the security
/// requirements naming them) are left out and listed rather than refusing the whole card.
#[derive(Debug, Clone, PartialEq)]
pub struct CardTranslation<C> {
    /// The translated card.
    pub card: C,
    /// What was left out (paths in the source card).
    pub omitted: Vec<Omission>,
    /// True when the source card was signed: translated cards cannot verify, so the
    /// signatures were dropped.
    pub signatures_dropped: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_error_forms() {
        let e = Untranslatable::new(
            "message.parts[0].filename",
            "A2A 0.3 text parts carry no filename",
        )
        .under("params");
        assert_eq!(
            e.to_string(),
            "params.message.parts[0].filename: A2A 0.3 text parts carry no filename"
        );
        let v1 = e.jsonrpc_error_v1(Side::Request);
        assert_eq!(v1["code"], -32004);
        assert_eq!(v1["data"][0]["reason"], "a2a_untranslatable");
        assert_eq!(
            v1["data"][0]["metadata"]["path"],
            "params.message.parts[0].filename"
        );
        let v03 = e.jsonrpc_error_v03(Side::Answer);
        assert_eq!(v03["data"]["reason"], "a2a_upstream_untranslatable");
        let a = e.to_a2a_error(Side::Request);
        let j1 = a.to_jsonrpc_v1();
        assert_eq!(j1.code, -32004);
        let d = j1.data.unwrap();
        assert_eq!(d[0]["reason"], "UNSUPPORTED_OPERATION");
        assert_eq!(d[0]["metadata"]["path"], "params.message.parts[0].filename");
        assert_eq!(d[1]["reason"], "a2a_untranslatable");
        assert_eq!(
            a.to_jsonrpc_v03().data.unwrap()["reason"],
            "a2a_untranslatable"
        );
        assert_eq!(a.http_status(), 400);
        assert_eq!(Untranslatable::new("", "x").under("result").path, "result");
        assert_eq!(
            Untranslatable::new("[2].a", "x").under("result").path,
            "result[2].a"
        );
    }
}
