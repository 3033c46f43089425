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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ErrorStatusMode};

    #[test]
    fn the_dvara_values_are_read_from_toml_and_ours_are_the_defaults() {
        let d = Config::default();
        assert_eq!(
            (d.peer_grpc, d.card_bindings, d.stream_refusal_status),
            (PeerGrpc::Call, CardBindings::All, ErrorStatusMode::Refusal)
        );
        assert_eq!(d.error_domain, DEFAULT_ERROR_DOMAIN);
        assert!(!d.dvara_headers);
        let c = Config::from_toml_str(
            "peer_grpc = \"refuse\"\ncard_bindings = \"jsonrpc\"\nstream_refusal_status = \"ok\"\n\
             error_domain = \"dvarahq.com\"\ndvara_headers = true\n",
        )
        .unwrap();
        assert_eq!(
            (c.peer_grpc, c.card_bindings, c.stream_refusal_status),
            (PeerGrpc::Refuse, CardBindings::Jsonrpc, ErrorStatusMode::Ok)
        );
        assert_eq!(c.error_domain, DVARA_ERROR_DOMAIN);
        assert!(c.dvara_headers);
        assert!(Config::from_toml_str("peer_grpc = \"sometimes\"").is_err());
    }
}
