//! The refusals of governance, one constructor each (policy, PII, approval, delegation chains,
//! session kill, extensions): the rest of [`Refusal`]'s constructors are in `refusals.rs`.

use serde_json::json;

use crate::{protocol::errors::Refusal, protocol::errors::spec_type};

impl Refusal {
    /// 403: a workspace policy rule (or the default-deny switch) refused the hop; the peer was
    /// not called. `rule` is the deciding rule's id (`default` for the default decision).
    pub fn policy_denied(rule: &str) -> Refusal {
        Refusal::gateway(403, "a2a_policy_denied", "Hop denied by A2A policy")
            .with("rule", json!(rule))
    }

    /// 403: content carries PII of a type the workspace blocks (named, never the PII itself).
    pub fn pii_blocked(kind: &str) -> Refusal {
        Refusal::gateway(
            403,
            "a2a_pii_blocked",
            format!("Content refused: it carries {kind} data, which this workspace blocks"),
        )
        .with("piiType", json!(kind))
    }

    /// 403: a textual raw part (`text/*`, JSON, XML, YAML) is not base64 or not UTF-8, so the
    /// workspace's PII rules cannot be checked on it.
    pub fn pii_unreadable() -> Refusal {
        Refusal::gateway(
            403,
            "a2a_pii_blocked",
            "Content refused: a text part is not valid base64 or not UTF-8, so it cannot be \
             checked for PII",
        )
        .with("piiType", json!("UNREADABLE"))
    }

    /// 409: the hop waits for a person's approval (nothing was sent to the peer).
    pub fn approval_pending(approval_id: &str) -> Refusal {
        Refusal::gateway(
            409,
            "a2a_approval_pending",
            format!("The hop waits for approval {approval_id}"),
        )
        .with("approvalId", json!(approval_id))
    }

    /// 409: the hop needs approval, but only a send (SendMessage, SendStreamingMessage) can be
    /// held for one (other operations are refused with the same code).
    pub fn approval_not_holdable(operation: &str) -> Refusal {
        Refusal::gateway(
            409,
            "a2a_approval_pending",
            format!("{operation} needs approval; only message sends can be held for it"),
        )
    }

    /// 403: a person denied the hop.
    pub fn approval_denied(approval_id: &str) -> Refusal {
        Refusal::gateway(
            403,
            "a2a_approval_denied",
            format!("Approval {approval_id} was denied"),
        )
        .with("approvalId", json!(approval_id))
    }

    /// 410: nobody decided the approval in time.
    pub fn approval_expired(approval_id: &str) -> Refusal {
        Refusal::gateway(
            410,
            "a2a_approval_expired",
            format!("Approval {approval_id} expired before anyone decided it"),
        )
        .with("approvalId", json!(approval_id))
    }

    /// 508: the target agent is already in the hop's delegation chain.
    pub fn loop_detected(target: &str, depth: usize) -> Refusal {
        Refusal::gateway(
            508,
            "a2a_loop_detected",
            format!("Delegation loop: agent {target} is already in this hop's chain"),
        )
        .with("depth", json!(depth))
    }

    /// 403: the delegation chain would be longer than the gateway allows.
    pub fn delegation_depth_exceeded(depth: usize, max: usize) -> Refusal {
        Refusal::gateway(
            403,
            "a2a_delegation_depth_exceeded",
            format!("Delegation depth {depth} exceeds the maximum of {max}"),
        )
        .with("depth", json!(depth))
        .with("maxDepth", json!(max))
    }

    /// 400: the delegation chain header is malformed or its signature does not verify (a peer
    /// changed or shortened it).
    pub fn delegation_chain_invalid(detail: &str) -> Refusal {
        Refusal::gateway(
            400,
            "a2a_delegation_chain_invalid",
            format!("Delegation chain refused: {detail}"),
        )
    }

    /// 410: an operator killed the session (context or task).
    pub fn session_killed(kind: &str, id: &str) -> Refusal {
        Refusal::gateway(
            410,
            "a2a_session_killed",
            format!("The {kind} {id} was stopped by an operator"),
        )
    }

    /// 403: the caller's workspace does not allow an extension the peer's card marks as
    /// required; the peer was not called (the DVARA API's table).
    pub fn extension_not_allowed(uri: &str) -> Refusal {
        Refusal::gateway(
            403,
            "a2a_extension_not_allowed",
            format!("The agent requires extension {uri}, which this workspace does not allow"),
        )
        .with("extension", json!(uri))
    }

    /// -32008 (400): the peer's card requires an extension the workspace allows and the
    /// caller did not ask for in `A2A-Extensions`.
    pub fn extension_support_required(uri: &str) -> Refusal {
        Refusal::spec(
            400,
            -32008,
            "a2a_extension_support_required",
            "EXTENSION_SUPPORT_REQUIRED",
            spec_type(-32008).unwrap_or("ExtensionSupportRequiredError"),
            format!("The agent requires extension {uri}: send it in A2A-Extensions and try again"),
        )
        .with("extension", json!(uri))
    }
}
