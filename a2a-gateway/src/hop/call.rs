//! One caller's hop in flight: its trace id, negotiated version, JSON-RPC id, hop count and the
//! audit record that [`crate::edge::record`] completes once the hop is decided.

use crate::governance::loops::HOPS_HEADER;
use std::time::Instant;

use axum::http::HeaderMap;

use a2a_types::envelope::RawId;

use crate::ids::id_hex;
use crate::protocol::ops::{GatewayOp, Operation};
use crate::{protocol::errors::Binding, protocol::errors::Version};
use crate::{store::AuditRecord, store::IntentRef};

pub(crate) struct Call {
    pub(crate) trace_id: String,
    pub(crate) started: Instant,
    pub(crate) audit: AuditRecord,
    pub(crate) version: Version,
    pub(crate) id: RawId,
    pub(crate) a2a_json_only: bool,
    pub(crate) hops: u32,
    /// The caller's binding.
    pub(crate) binding: Binding,
    /// The delegation chain header the request arrived with (verified in the pipeline).
    pub(crate) chain: Option<String>,
    /// The hop's intent record, once written (its completion names it).
    pub(crate) intent: Option<IntentRef>,
    /// The version push notifications reach the caller in, when it differs from `version`: a
    /// 0.3 HTTP+JSON caller runs the pipeline in 1.0 terms (`crate::edge::rest03`).
    pub(crate) push_as: Option<Version>,
    /// Extension URIs the caller asked for (`A2A-Extensions`, `X-A2A-Extensions`).
    pub(crate) ext_requested: Vec<String>,
    /// Extensions the peer activated, for the answer's header (`crate::governance::extensions`).
    pub(crate) ext_activated: Option<Vec<String>>,
    /// The hop's exported span (`a2a_agent::otel`), continuing the caller's `traceparent`;
    /// `Span::none()` when traces are off.
    pub(crate) span: tracing::Span,
    /// The hop's "edge" step span, from the request's arrival until the operation is known.
    edge: tracing::Span,
    /// How long the hop's peer call took (`crate::outbound::PeerCall::peer_time`), for the
    /// metrics' split of peer time and gateway overhead.
    pub(crate) peer: Option<std::time::Duration>,
    /// The target is an agent of the caller's workspace: only then does it get an `agent`
    /// label in the metrics (a path naming no agent cannot take a label of the cap).
    pub(crate) target_found: bool,
}

pub(crate) fn parse_traceparent(v: &str) -> Option<String> {
    let parts: Vec<&str> = v.trim().split('-').collect();
    if parts.len() >= 4
        && parts[0].len() == 2
        && parts[1].len() == 32
        && parts[1].bytes().all(|b| b.is_ascii_hexdigit())
        && parts[1] != "00000000000000000000000000000000"
        && parts[2].len() == 16
    {
        Some(parts[1].to_ascii_lowercase())
    } else {
        None
    }
}

impl Call {
    pub(crate) fn new(headers: &HeaderMap, binding: Binding) -> Call {
        // With traces exported, the trace id is the hop span's (the caller's when it sent a
        // valid traceparent); else the caller's, or a new one.
        let span = a2a_agent::otel::hop_span(headers);
        let trace_id = match a2a_agent::otel::trace_id(&span) {
            Some(t) => t,
            None => headers
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .and_then(parse_traceparent)
                .unwrap_or_else(|| id_hex(16)),
        };
        let edge = a2a_agent::otel::step(&span, "edge");
        let a2a_json_only = a2a_agent::edge::media::accepts_only_a2a_json(headers);
        Call {
            audit: AuditRecord {
                trace_id: trace_id.clone(),
                client_binding: Some(binding.as_str().to_owned()),
                decision: "refused".into(),
                ..AuditRecord::default()
            },
            trace_id,
            started: Instant::now(),
            version: Version::V03,
            id: RawId::null(),
            a2a_json_only,
            hops: headers
                .get(HOPS_HEADER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            intent: None,
            push_as: None,
            ext_requested: crate::governance::extensions::requested(headers),
            ext_activated: None,
            span,
            edge,
            peer: None,
            target_found: false,
            binding,
            chain: headers
                .get(crate::governance::loops::CHAIN_HEADER)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        }
    }

    pub(crate) fn traceparent(&self) -> String {
        ["00-", &self.trace_id, "-", &id_hex(8), "-01"].concat()
    }

    /// The `traceparent` of a peer call made under `step` (the hop's "peer call" span): that
    /// span's context when traces are exported, else [`Call::traceparent`].
    pub(crate) fn traceparent_of(&self, step: &tracing::Span) -> String {
        a2a_agent::otel::traceparent(step).unwrap_or_else(|| self.traceparent())
    }

    /// Records on the hop span the context id `v` (a request's params or an answer) names
    /// (traces only).
    pub(crate) fn note_context(&self, v: &serde_json::Value) {
        if self.span.is_none() {
            return;
        }
        for p in ["/message/contextId", "/contextId", "/task/contextId"] {
            if let Some(c) = v.pointer(p).and_then(serde_json::Value::as_str) {
                self.span.record("a2a.context_id", c);
                return;
            }
        }
    }

    /// A step span of the hop (`Span::none()` when traces are off).
    pub(crate) fn step(&self, name: &'static str) -> tracing::Span {
        a2a_agent::otel::step(&self.span, name)
    }

    /// The span the hop's steps run in, once the edge named the operation, the target and the
    /// workspace: the exported hop span (its "edge" step ends here), or without export the
    /// log span of before.
    pub(crate) fn hop_span(
        &mut self,
        op: Operation,
        agent: &str,
        workspace: &str,
    ) -> tracing::Span {
        if self.span.is_none() {
            return tracing::info_span!("a2a.hop", trace_id = %self.trace_id, operation = op.name_03(), target = %agent);
        }
        self.edge = tracing::Span::none();
        let s = &self.span;
        s.record("a2a.operation", op.name_10());
        s.record("a2a.agent", agent);
        s.record("a2a.workspace", workspace);
        s.record("a2a.caller.version", self.version.as_str());
        s.record("a2a.caller.binding", self.binding.as_str());
        if self.binding == Binding::Grpc {
            s.record("rpc.system", "grpc");
        }
        s.clone()
    }

    pub(crate) fn json_content_type(&self) -> &'static str {
        if self.a2a_json_only {
            "application/a2a+json"
        } else {
            "application/json"
        }
    }
}

impl Call {
    /// Writes the answer's extension headers (`crate::governance::extensions::answer_headers`).
    pub(crate) fn extension_headers(&self, h: &mut HeaderMap) {
        crate::governance::extensions::answer_headers(
            self.ext_activated.as_deref(),
            self.version,
            h,
        );
    }
}
