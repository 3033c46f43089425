//! The narrow waist: [`GatewayState`], what every route and service of a running gateway
//! shares. It holds the services below it (store, governance, trust, peers) and nothing else.

use std::sync::Arc;

use crate::config::Config;
use crate::governance::Governance;
use crate::governance::step::CardSigner;
use crate::metrics::Metrics;
use crate::store::Store;

/// Shared state of a running gateway.
pub struct GatewayState {
    /// Configuration.
    pub config: Config,
    /// Registry and audit store.
    pub store: Store,
    /// HTTP client for peers (checked resolver, no redirects, no proxy, `peer_ca_file` roots).
    pub http: reqwest::Client,
    /// The hops' peer calls (`crate::peer::http`: the same resolver, roots and no redirects).
    pub(crate) peer_http: crate::peer::http::PeerHttp,
    /// Extra roots trusted for peers (`peer_ca_file`), for `https` gRPC calls.
    pub peer_roots: a2a_client::tls::ExtraRoots,
    /// Peer cards.
    pub cards: a2a_client::discovery::CardResolver,
    /// Static peer address checks kept per registration and card (`crate::peer::checks`).
    pub(crate) peer_checks: crate::peer::checks::PeerChecks,
    /// Metrics registry.
    pub metrics: Metrics,
    /// The governance pipeline (policy, PII, loops, session kill).
    pub governance: Arc<Governance>,
    /// Signs the governed card.
    pub signer: Arc<dyn CardSigner>,
    /// Peer card trust: key sets of peers, verdicts, the sealing key of own signing keys.
    pub trust: crate::trust::TrustState,
    /// Cancelled when the shutdown grace period ends: open streams end with an
    /// `a2a_shutting_down` event and waiting peer calls are answered with it.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// Cancelled when shutdown begins, before the listener stops: `/readyz` answers 503.
    pub(crate) draining: tokio_util::sync::CancellationToken,
    pub(crate) page_key: aws_lc_rs::hmac::Key,
    /// Relayed streams of peers that number no events, kept for resumes (see `crate::tasks::replay`).
    pub(crate) replay: Arc<crate::tasks::replay::Buffers>,
    /// Ended tasks as last read from their peers, shown again by listings (`crate::tasks::terminal`).
    pub(crate) terminal: crate::tasks::terminal::TerminalTasks,
    /// When each governed card last changed (its `Last-Modified`, `crate::peer::modified`).
    pub(crate) card_dates: crate::peer::modified::CardDates,
}
