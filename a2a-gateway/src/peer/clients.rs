//! The clients of a gateway's calls to peers, built from its configuration as one value: a
//! reload that changes `peer_ca_file` builds a new one and the next call uses it (calls in
//! flight finish on the old one).

use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;

/// Peer call clients (see the module documentation).
pub struct PeerClients {
    /// HTTP client for peers (checked resolver, no redirects, no proxy, `peer_ca_file` roots).
    pub http: reqwest::Client,
    /// The hops' peer calls (`crate::peer::http`: the same resolver, roots and no redirects).
    pub(crate) peer_http: crate::peer::http::PeerHttp,
    /// Extra roots trusted for peers (`peer_ca_file`), for `https` gRPC calls.
    pub peer_roots: a2a_client::tls::ExtraRoots,
    /// Peer cards.
    pub cards: a2a_client::discovery::CardResolver,
}

impl PeerClients {
    /// The clients `config` asks for (`dev_mode`, `peer_ca_file`); an unreadable or invalid CA
    /// file is an error naming it.
    pub fn build(config: &Config) -> Result<PeerClients, String> {
        let peer_roots = super::trusted_roots(config)?;
        let mut http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(super::CheckedResolver {
                allow_loopback: config.dev_mode,
            }))
            .connect_timeout(Duration::from_secs(10));
        for cert in peer_roots.iter() {
            http = http.add_root_certificate(
                reqwest::Certificate::from_der(cert).map_err(|e| format!("peer_ca_file: {e}"))?,
            );
        }
        let http = http
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(PeerClients {
            peer_http: crate::peer::http::PeerHttp::new(config.dev_mode, &peer_roots)?,
            peer_roots,
            cards: super::card_resolver(http.clone()),
            http,
        })
    }
}
