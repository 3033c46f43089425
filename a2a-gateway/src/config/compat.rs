//! The settings that give DVARA users what the DVARA API does where the gateway goes further
//! (docs/settings-map.md, "DVARA `a2a.*` settings"): each default is ours (the specification's
//! behaviour), the other value the DVARA API's.

use serde::{Deserialize, Serialize};

/// Whether gRPC peers are called (`peer_grpc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PeerGrpc {
    /// A peer whose card offers only gRPC entries is called over gRPC.
    #[default]
    Call,
    /// gRPC entries are passed over ("gRPC is not supported"), as the DVARA API does: a
    /// gRPC-only peer gets 502 `a2a_peer_protocol_unsupported`.
    Refuse,
}

/// Which bindings the governed card lists (`card_bindings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CardBindings {
    /// Every binding the gateway serves (JSON-RPC, HTTP+JSON, gRPC when served).
    #[default]
    All,
    /// JSON-RPC only, 1.0 then 0.3, as the DVARA API's card does.
    Jsonrpc,
}

/// Domain of the `ErrorInfo` of the gateway's own refusals, by default.
pub const DEFAULT_ERROR_DOMAIN: &str = "a2a-rs.dev";

/// The DVARA API's domain (`error_domain = "dvarahq.com"`).
pub const DVARA_ERROR_DOMAIN: &str = "dvarahq.com";
