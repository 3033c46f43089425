//! Calling 1.0 gRPC peers (`lf.a2a.v1.A2AService`) through the client's gRPC transport
//! ([`a2a_client::transport::grpc`]: the protobuf conversion, rpc table and `google.rpc.Status`
//! reading live there and in `a2a_types::grpc`, once).
//!
//! - Selection: gRPC is used only when the card offers no JSON-RPC or HTTP+JSON entry the gateway
//!   speaks ([`crate::peer::select_from`]).
//! - Address: the interface url is `host:port`, `http://host:port` or `https://host:port`. The
//!   gateway's rules apply ([`check_url`]): the registered endpoint's host (the port may differ:
//!   gRPC is usually served on a port of its own) and the SSRF policy; `https` (TLS, the
//!   certificate checked against the host name, trusting the platform's roots and
//!   `peer_ca_file`) is callable in production, plaintext `http` (h2c) only in development mode.
//!   The host is resolved with the same checks and the call connects only to the checked
//!   addresses ([`GrpcTransport::pinned`]; SNI and the certificate still use the host name), so a
//!   name that changes cannot redirect it.
//! - Metadata: what the HTTP bindings send as headers (the registered credential as a bearer
//!   token, `traceparent`, the hop count, the governance chain, `a2a-extensions`).
//! - Limits: unary calls end after `peer_timeout_secs`; a message larger than the answer limit
//!   (unary) or the stream limit (streams) is refused; streams go through the same relay as SSE
//!   events ([`PeerCall::relay`]), with its stall timer, byte limit, governance and kill switch.
//! - Errors: the peer's `google.rpc.Status` (ErrorInfo reason, else the status code) becomes the
//!   caller's A2A error as a JSON-RPC peer's error does ([`Refusal::upstream_error`]).

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use a2a_client::ClientError;
use a2a_client::transport::grpc::GrpcTransport;
use a2a_client::transport::{HttpCore, Transport, V1Request};

use crate::outbound::PeerCall;
use crate::protocol::answer::Answer;
use crate::protocol::ops::GatewayOp;
use crate::protocol::ops::Operation;
use crate::{outbound::relay::Liveness, outbound::relay::PeerEvent};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

impl PeerCall<'_> {
    /// peer call over gRPC: `op` with its 1.0 params (the chosen entry's tenant included).
    pub(crate) async fn grpc(&self, op: Operation, params: Value) -> Result<Answer, Refusal> {
        let request = V1Request::parse(op.name(Version::V1), Some(params))
            .map_err(|e| Refusal::invalid_params(&e.to_string()))?;
        let limit = if op.is_streaming() {
            self.max_stream
        } else {
            self.max_resp
        };
        let transport = self.grpc_transport(limit).await?;
        let timeout = Duration::from_secs(self.st.config().peer_timeout_secs.max(1));
        if !op.is_streaming() {
            let result = tokio::select! {
                _ = self.st.shutdown.cancelled() => return Err(crate::protocol::errors::shutting_down()),
                r = transport.call(request) => r,
            };
            let result = result.map_err(|e| self.grpc_refusal(e, limit))?;
            return self.answer(op, Version::V1, result.to_value());
        }
        let opened = tokio::select! {
            _ = self.st.shutdown.cancelled() => return Err(crate::protocol::errors::shutting_down()),
            r = tokio::time::timeout(timeout, transport.stream(request)) => r,
        };
        let events = opened
            .map_err(|_| Refusal::peer_timeout(self.st.config().peer_timeout_secs))?
            .map_err(|e| self.grpc_refusal(e, limit))?;
        let life = Liveness::new();
        let seen = life.clone();
        let refusal = GrpcErrors {
            agent_id: self.agent.agent_id.clone(),
            peer_timeout_secs: self.st.config().peer_timeout_secs,
        };
        let events = events.map(move |item| {
            seen.touch();
            match item {
                Ok(ev) => {
                    let v = serde_json::to_value(&ev).unwrap_or(Value::Null);
                    PeerEvent {
                        id: String::new(),
                        len: v.to_string().len() as u64,
                        payload: Ok(Some(v)),
                    }
                }
                Err(e) => PeerEvent {
                    id: String::new(),
                    len: 0,
                    payload: Err(refusal.of(e, limit)),
                },
            }
        });
        Ok(Answer::Stream(self.relay(Box::pin(events), life)))
    }

    /// The client's gRPC transport for this hop: the checked address, the hop's metadata, the
    /// gateway's timeout and `limit` on each message.
    async fn grpc_transport(&self, limit: u64) -> Result<GrpcTransport, Refusal> {
        let addrs =
            crate::peer::grpc::checked_addresses(&self.chosen.url, self.st.config().dev_mode)
                .await?;
        // The same headers as the HTTP bindings' requests (built, never sent).
        let built = self
            .request(
                reqwest::Method::POST,
                self.chosen.url.clone(),
                "application/grpc",
            )
            .build()
            .map_err(|e| Refusal::internal(&format!("gRPC metadata: {e}")))?;
        let mut core = HttpCore::new(self.st.peers().http.clone());
        for (k, v) in built.headers() {
            if !matches!(
                k.as_str(),
                "content-type" | "accept" | "a2a-version" | "last-event-id"
            ) {
                core.headers.append(k.clone(), v.clone());
            }
        }
        core.timeout = Some(Duration::from_secs(
            self.st.config().peer_timeout_secs.max(1),
        ));
        core.stream_idle_timeout = None; // the relay's stall timer
        core.max_response_bytes = usize::try_from(limit).unwrap_or(usize::MAX);
        core.extra_roots = self.st.peers().peer_roots.clone();
        let mut iface = a2a_client::SelectedInterface::direct(
            self.chosen.url.clone(),
            a2a_client::Binding::Grpc,
            a2a_client::Version::V1,
        );
        iface.tenant = self.chosen.tenant.clone();
        GrpcTransport::pinned(core, iface, addrs)
            .map_err(|e| Refusal::peer_url_refused(&e.to_string()))
    }

    fn grpc_refusal(&self, e: ClientError, limit: u64) -> Refusal {
        GrpcErrors {
            agent_id: self.agent.agent_id.clone(),
            peer_timeout_secs: self.st.config().peer_timeout_secs,
        }
        .of(e, limit)
    }
}

/// What turns a gRPC call's error into the gateway's refusal (owned: streams outlive the hop).
struct GrpcErrors {
    agent_id: String,
    peer_timeout_secs: u64,
}

impl GrpcErrors {
    fn of(&self, e: ClientError, limit: u64) -> Refusal {
        let ClientError::A2a(a) = e else {
            return Refusal::upstream_invalid_response(&e.to_string());
        };
        if a.local {
            return if a.message.contains("timed out") {
                Refusal::peer_timeout(self.peer_timeout_secs)
            } else {
                Refusal::peer_unreachable(&a.message)
            };
        }
        if a.message.contains("message length too large") {
            return Refusal::response_too_large(limit);
        }
        if a.reason.as_deref() == Some("VERSION_NOT_SUPPORTED") {
            return Refusal::peer_version_not_supported(&self.agent_id, Version::V1.as_str());
        }
        // No A2A ErrorInfo and UNAVAILABLE / UNKNOWN: the connection, not the agent, failed.
        // Its text is the peer's (or the transport's) and is not passed on: a peer's words
        // reach a caller only through governance (`crate::outbound::peer_error`).
        if a.reason.is_none() && is_transport_failure(&a.message) {
            tracing::info!(agent = %self.agent_id, "gRPC peer transport failure: {}", a.message);
            return Refusal::peer_unreachable(
                "the peer's gRPC status reports a transport failure (no A2A ErrorInfo)",
            );
        }
        let code = a.code.unwrap_or_else(|| a.kind.code());
        Refusal::upstream_error(code, a.reason.as_deref())
    }
}

/// Whether a status without ErrorInfo reports a connection failure (tonic's wording).
fn is_transport_failure(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "transport error",
        "connect",
        "connection",
        "broken pipe",
        "dns",
    ]
    .iter()
    .any(|n| m.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// A refused connection and a timeout are the gateway's refusals, not the peer's errors.
    #[tokio::test]
    async fn errors_become_the_gateway_refusals() {
        let errors = GrpcErrors {
            agent_id: "g".into(),
            peer_timeout_secs: 7,
        };
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let iface = a2a_client::SelectedInterface::direct(
            u(&format!("http://127.0.0.1:{closed}/")),
            a2a_client::Binding::Grpc,
            a2a_client::Version::V1,
        );
        let t = GrpcTransport::new(HttpCore::new(reqwest::Client::new()), iface).unwrap();
        let req = V1Request::parse("GetTask", Some(serde_json::json!({"id": "t"}))).unwrap();
        let e = t.call(req).await.unwrap_err();
        let r = errors.of(e, 100);
        assert_eq!(r.code, "a2a_peer_unreachable", "{}", r.message);

        let timeout = a2a_client::A2aError::local(
            a2a_types::error::ErrorKind::Unavailable,
            "gRPC call timed out after 7s",
        );
        assert_eq!(errors.of(timeout.into(), 100).code, "a2a_peer_timeout");
        // A status the peer sent without an A2A ErrorInfo: its text is not passed on.
        let peer_said = a2a_client::A2aError {
            local: false,
            reason: None,
            ..a2a_client::A2aError::local(
                a2a_types::error::ErrorKind::Unavailable,
                "connection reset; write to ann.lee@example.org",
            )
        };
        let r = errors.of(peer_said.into(), 100);
        assert_eq!(r.code, "a2a_peer_unreachable");
        assert!(!r.message.contains("ann.lee"), "{}", r.message);
        // The peer's own statuses: tests/grpc_peer.rs (NOT_FOUND, TASK_NOT_CANCELABLE).
    }
}
