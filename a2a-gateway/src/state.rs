//! The narrow waist: [`GatewayState`], what every route and service of a running gateway
//! shares. It holds the services below it (store, governance, trust, peers) and nothing else.

use std::sync::Arc;

use crate::config::Config;
use crate::governance::Governance;
use crate::governance::step::CardSigner;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::store::backend::{Audit, Holds, Records, Registry, Shared};

/// Shared state of a running gateway.
pub struct GatewayState {
    /// Configuration, replaced whole by a reload (`crate::reload`): read it with
    /// [`GatewayState::config`].
    pub(crate) settings: arc_swap::ArcSwap<Config>,
    /// The SQLite store of what has no backend trait yet: trust keys, the intent journal (and
    /// whatever the backends below keep on the SQLite file). With `database = "postgres://…"`
    /// ([`crate::app::Gateway::on_postgres`]) an empty in-memory store nothing keeps data in.
    pub store: Store,
    /// Workspaces, agents, keys, workspace settings and push callbacks, on the backend chosen
    /// at start ([`crate::store::backend`]).
    pub registry: Registry,
    /// Task ownership, task records and idempotent sends, on the backend chosen at start.
    pub records: Records,
    /// The audit log and the admin audit, on the backend chosen at start.
    pub audit: Audit,
    /// Approvals (held requests) and session kills, on the backend chosen at start.
    pub holds: Holds,
    /// Secrets (the page-token key), console sessions and trust keys, on the backend chosen
    /// at start (on PostgreSQL shared by replicas).
    pub shared: Shared,
    /// The clients of peer calls (HTTP, gRPC roots, cards), rebuilt by a reload that changes
    /// `peer_ca_file`: read them with [`GatewayState::peers`].
    pub(crate) peer_clients: arc_swap::ArcSwap<crate::peer::clients::PeerClients>,
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

impl GatewayState {
    /// The configuration now (a snapshot: a reload does not change it under the caller).
    pub fn config(&self) -> arc_swap::Guard<Arc<Config>> {
        self.settings.load()
    }

    /// The peer call clients now.
    pub fn peers(&self) -> arc_swap::Guard<Arc<crate::peer::clients::PeerClients>> {
        self.peer_clients.load()
    }
}
