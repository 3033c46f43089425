//! The governance pipeline (issue 14): ordered [`Step`]s that every caller request, peer
//! answer, stream event and push notification passes in its A2A 1.0 form.
//!
//! Order (see `docs/gateway/governance.md`): session kill → delegation chain (loops, depth)
//! → PII → policy. Each step records its decision in the hop's [`Evidence`], which the audit
//! record keeps (never the content). Per-workspace settings (policies and PII rules from
//! [`store::GovDocs`], kills from the approvals' and kills' store,
//! [`crate::store::backend::Holds`]) go through an in-memory [`Cache`] (one read per workspace
//! until an admin write invalidates it), so a workspace without governance costs no database
//! read.
//!
//! Modules: [`policy`] (CEL documents), `policy_step`, `pii_step`, [`loops`] (signed
//! delegation chains), [`kill`] (session kill), [`key_watch`] (streams of revoked or expired
//! keys end), [`approval`] and [`approval_view`] (held hops, kept by
//! [`crate::store::backend::HoldStore`]; what an approver sees), [`store`]
//! (the settings' storage trait).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::pii::PiiRules;
use crate::protocol::errors::Refusal;
use crate::store::backend::{GovDocStore, GovDocs, HoldStore, Holds};
use crate::{
    governance::step::Evidence, governance::step::Hop, governance::step::Step,
    governance::step::StreamStep,
};

pub mod approval;
pub mod approval_view;
pub mod demo;
pub mod extensions;
pub mod key_watch;
pub mod kill;
pub mod knobs;
pub mod loops;
mod pii_step;
pub mod policy;
mod policy_names;
mod policy_step;
pub mod step;
pub mod store;

pub use pii_step::PiiStep;
pub use policy_step::PolicyStep;

use policy::{Policy, PolicyDecision};

/// How long a cached workspace entry is trusted on SQLite: admin API writes invalidate it at
/// once; writes by another process on the same database (the `admin` CLI) are seen within this
/// time. On PostgreSQL an entry is trusted while the registry epoch it was read at stands.
pub const CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// A workspace's governance settings, as cached.
pub struct Entry {
    loaded: std::time::Instant,
    /// The version it was read at (PostgreSQL: the registry epoch; `None` on SQLite).
    epoch: Option<i64>,
    /// The compiled policy.
    pub policy: Option<Arc<Policy>>,
    /// PII rules (`None`: PII scanning off).
    pub pii: Option<PiiRules>,
    /// Killed `(kind, id)` pairs.
    pub kills: HashSet<(String, String)>,
}

/// Per-workspace settings read once from the stores and kept until an admin write.
///
/// Policies and PII rules come from the [`GovDocs`], kills from the [`Holds`]. The hop loads
/// a workspace's entry ([`Cache::load`], async) before its steps run; the steps read it with
/// [`Cache::get`] (sync). On SQLite `get` reads the file itself when it must (every read
/// completes on the calling thread); PostgreSQL is only read by `load`, when the registry
/// epoch moved past the entry's (a change on any replica moves it, by notification).
pub struct Cache {
    docs: GovDocs,
    holds: Holds,
    map: RwLock<HashMap<String, Arc<Entry>>>,
}

impl Cache {
    /// A cache over `docs` (policies, PII rules) and `holds` (kills).
    pub fn new(docs: GovDocs, holds: Holds) -> Cache {
        Cache {
            docs,
            holds,
            map: RwLock::default(),
        }
    }

    /// The policies and PII rules behind the cache.
    pub fn store(&self) -> &GovDocs {
        &self.docs
    }

    /// The workspace's entry when it is still fresh at version `epoch` (see [`Entry`]).
    fn fresh(&self, workspace: &str, epoch: Option<i64>) -> Option<Arc<Entry>> {
        let m = self.map.read().ok()?;
        let e = m.get(workspace)?;
        let fresh = match epoch {
            Some(v) => e.epoch == Some(v),
            None => e.epoch.is_none() && e.loaded.elapsed() < CACHE_TTL,
        };
        fresh.then(|| e.clone())
    }

    /// Whether every read completes on the calling thread (the SQLite backends).
    fn in_place(&self) -> bool {
        matches!(self.holds, Holds::Sqlite(_)) && matches!(self.docs, GovDocs::Sqlite(_))
    }

    /// The workspace's settings (loaded on first use). Without a fresh entry and with a store
    /// that cannot be read in place, the last entry loaded, or none: governance that cannot be
    /// read denies (see [`Cache::load`], which the hop awaits first).
    pub fn get(&self, workspace: &str) -> Arc<Entry> {
        if self.in_place() {
            // Every read of the SQLite backends completes on this thread.
            if let Some(e) = futures::FutureExt::now_or_never(self.load(workspace)) {
                return e;
            }
        }
        if let Ok(m) = self.map.read()
            && let Some(e) = m.get(workspace)
        {
            return e.clone();
        }
        tracing::error!(workspace, "governance read before it was loaded: denied");
        Arc::new(Entry {
            loaded: std::time::Instant::now(),
            epoch: None,
            policy: deny_all(),
            pii: Some(block_all()),
            kills: HashSet::new(),
        })
    }

    /// Loads the workspace's settings unless its entry is fresh; returns it. A version that
    /// cannot be read (the database away) keeps the last entry (requests are refused by
    /// their other reads meanwhile).
    pub async fn load(&self, workspace: &str) -> Arc<Entry> {
        let epoch = match self.docs.epoch().await {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(workspace, "governance version not readable: {e}");
                if let Ok(m) = self.map.read()
                    && let Some(e) = m.get(workspace)
                {
                    return e.clone();
                }
                Some(-1)
            }
        };
        if let Some(e) = self.fresh(workspace, epoch) {
            return e;
        }
        let e = Arc::new(self.read(workspace, epoch).await);
        if let Ok(mut m) = self.map.write() {
            m.insert(workspace.to_owned(), e.clone());
        }
        e
    }

    async fn read(&self, workspace: &str, epoch: Option<i64>) -> Entry {
        // A document that no longer compiles (or a store that cannot be read) denies: governance
        // that cannot be read is not skipped.
        let policy = match self.docs.policy(workspace).await {
            Ok(Some(text)) => match Policy::from_json(&text) {
                Ok(p) => Some(Arc::new(p)),
                Err(e) => {
                    tracing::error!(workspace, "stored policy does not compile: {e}");
                    deny_all()
                }
            },
            Ok(None) => None,
            Err(e) => {
                tracing::error!(workspace, "policy not readable: {e}");
                deny_all()
            }
        };
        let pii = match self.docs.pii_rules(workspace).await {
            Ok(Some(text)) => match serde_json::from_str::<PiiRules>(&text) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::error!(workspace, "stored PII rules unreadable: {e}");
                    Some(block_all())
                }
            },
            Ok(None) => None,
            Err(e) => {
                tracing::error!(workspace, "PII rules not readable: {e}");
                Some(block_all())
            }
        };
        let kills = self
            .holds
            .kills(workspace)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|k| (k.kind, k.id))
            .collect();
        Entry {
            loaded: std::time::Instant::now(),
            epoch,
            policy,
            pii,
            kills,
        }
    }

    /// Forgets the workspace's settings (after an admin write).
    pub fn invalidate(&self, workspace: &str) {
        if let Ok(mut m) = self.map.write() {
            m.remove(workspace);
        }
    }
}

fn deny_all() -> Option<Arc<Policy>> {
    Policy::compile(policy::PolicyDoc {
        default: Some(PolicyDecision::Deny),
        rules: vec![],
    })
    .ok()
    .map(Arc::new)
}

fn block_all() -> PiiRules {
    PiiRules {
        default_action: crate::pii::PiiAction::Block,
        ..PiiRules::default()
    }
}

/// The gateway's governance: the steps, in order, and what they share.
pub struct Governance {
    /// Per-workspace settings.
    pub cache: Arc<Cache>,
    /// The steps, in order.
    pub steps: Vec<Arc<dyn Step>>,
    /// Signs and verifies delegation chains.
    pub chain_key: loops::ChainKey,
    /// Open streams, for session kill.
    pub streams: kill::Streams,
    /// Open streams by key, ended when their key is revoked or expires.
    pub keys: Arc<key_watch::KeyStreams>,
    /// The settings a reload may change ([`Governance::set_settings`]).
    knobs: Arc<knobs::Knobs>,
}

/// The governance settings of the gateway's configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Decision without a policy (or without a matching rule and document default).
    pub policy_default: PolicyDecision,
    /// Longest delegation chain.
    pub max_delegation_depth: usize,
    /// HMAC key of delegation chains.
    pub delegation_key: Vec<u8>,
    /// Bytes of text the PII step scans in one request at most (`limits.max_scanned_bytes`).
    pub max_scanned_bytes: usize,
}

impl Governance {
    /// The gateway's steps (kill, loops, PII, policy) over `docs` (policies, PII rules) and
    /// `holds` (kills).
    pub fn new(docs: GovDocs, holds: Holds, settings: &Settings) -> Governance {
        let cache = Arc::new(Cache::new(docs, holds));
        let knobs = Arc::new(knobs::Knobs::new(settings));
        let steps: Vec<Arc<dyn Step>> = vec![
            Arc::new(kill::KillStep {
                cache: cache.clone(),
            }),
            Arc::new(loops::LoopStep {
                knobs: knobs.clone(),
            }),
            Arc::new(PiiStep {
                cache: cache.clone(),
                knobs: knobs.clone(),
            }),
            Arc::new(PolicyStep {
                cache: cache.clone(),
                knobs: knobs.clone(),
            }),
        ];
        Governance {
            cache,
            steps,
            chain_key: loops::ChainKey::new(&settings.delegation_key),
            streams: kill::Streams::default(),
            keys: Arc::default(),
            knobs,
        }
    }

    /// Takes the configuration's new governance settings (a reload): the next hop's steps use
    /// them. The delegation key is not changed (it needs a restart).
    pub fn set_settings(&self, settings: &Settings) {
        self.knobs.set(settings);
    }

    /// Adds a step after the gateway's own (before serving).
    pub fn with_step(mut self, step: Arc<dyn Step>) -> Governance {
        self.steps.push(step);
        self
    }

    /// The session kill a request of `workspace` (either version's form: the message's
    /// `contextId`/`taskId`, or a task's `id`) runs into now, plus any of `more_contexts`.
    pub fn killed(
        &self,
        workspace: &str,
        params: &Value,
        more_contexts: &[&str],
    ) -> Option<Refusal> {
        let entry = self.cache.get(workspace);
        let (mut contexts, tasks) = kill::ids_of(params);
        contexts.extend(more_contexts.iter().map(|c| (*c).to_owned()));
        for (kind, ids) in [("context", contexts), ("task", tasks)] {
            for id in ids {
                if entry.kills.contains(&(kind.to_owned(), id.clone())) {
                    return Some(Refusal::session_killed(kind, &id));
                }
            }
        }
        None
    }

    /// Whether any step has work for this hop.
    pub fn active(&self, hop: &Hop) -> bool {
        self.steps.iter().any(|s| s.active(hop))
    }

    /// request steps over the request in its 1.0 form (the pipeline makes it once, see
    /// `crate::hop::forms`); a step may edit it (redaction), and stops the others by refusing.
    pub fn request(&self, hop: &Hop, p10: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        for s in self.steps.iter().filter(|s| s.active(hop)) {
            s.request(hop, p10, ev)?;
        }
        Ok(())
    }

    /// answer steps over a unary result already in 1.0 form.
    pub fn answer(&self, hop: &Hop, res: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        for s in self.steps.iter().filter(|s| s.active(hop)) {
            s.answer(hop, res, ev)?;
        }
        Ok(())
    }

    /// error steps over a peer's error (what of it reaches the caller, see [`Step::error`]).
    pub fn error(&self, hop: &Hop, err: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        for s in self.steps.iter().filter(|s| s.active(hop)) {
            s.error(hop, err, ev)?;
        }
        Ok(())
    }

    /// card steps over the governed card a caller reads, less the gateway's own members
    /// ([`GATEWAY_CARD_MEMBERS`]: its interfaces and URLs are not the peer's content).
    pub fn card(&self, hop: &Hop, card: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let own: Vec<(String, Value)> = card
            .as_object_mut()
            .map(|o| {
                GATEWAY_CARD_MEMBERS
                    .iter()
                    .filter_map(|k| o.remove(*k).map(|v| ((*k).to_owned(), v)))
                    .collect()
            })
            .unwrap_or_default();
        let r = self
            .steps
            .iter()
            .filter(|s| s.active(hop))
            .try_for_each(|s| s.card(hop, card, ev));
        if let Some(o) = card.as_object_mut() {
            o.extend(own);
        }
        r
    }

    /// push config steps over a peer's push config answer, less the caller's own values (see
    /// [`Step::push_config`]).
    pub fn push_config(
        &self,
        hop: &Hop,
        answer: &mut Value,
        ev: &mut Evidence,
    ) -> Result<(), Refusal> {
        for s in self.steps.iter().filter(|s| s.active(hop)) {
            s.push_config(hop, answer, ev)?;
        }
        Ok(())
    }

    /// The steps' states for one stream (empty when none looks at streams).
    pub fn stream(&self, hop: &Hop) -> Vec<Box<dyn StreamStep>> {
        self.steps
            .iter()
            .filter(|s| s.active(hop))
            .filter_map(|s| s.stream(hop))
            .collect()
    }

    /// push steps over a notification in 1.0 form.
    pub fn push(&self, hop: &Hop, payload: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        for s in self.steps.iter().filter(|s| s.active(hop)) {
            s.push(hop, payload, ev)?;
        }
        Ok(())
    }
}

/// The members of a governed card the gateway writes itself (its interfaces, URLs, transport,
/// versions and the requirement of its key): not the peer's content, so not what the card
/// steps read.
pub const GATEWAY_CARD_MEMBERS: [&str; 7] = [
    "supportedInterfaces",
    "url",
    "additionalInterfaces",
    "preferredTransport",
    "protocolVersion",
    "securityRequirements",
    "security",
];

/// One hop's governance, carried by the peer call: the hop, its evidence so far, and the
/// outbound chain header.
pub struct HopGov {
    /// What the steps see.
    pub hop: Hop,
    /// Whether any step is active (else answers and events are not read into 1.0 for it).
    pub active: bool,
    /// Evidence so far.
    pub evidence: std::sync::Mutex<Evidence>,
    /// The chain header sent to the peer.
    pub chain_header: String,
}

// Beside the governance it configures, so that config.rs needs nothing above it.
impl crate::config::Config {
    /// The governance settings of this configuration.
    pub fn governance(&self) -> Settings {
        use crate::config::PolicyDefault;
        use policy::PolicyDecision;
        Settings {
            policy_default: match self.policy_default {
                PolicyDefault::Allow => PolicyDecision::Allow,
                PolicyDefault::Deny => PolicyDecision::Deny,
            },
            max_delegation_depth: self.max_delegation_depth,
            delegation_key: match &self.delegation_key {
                Some(k) if !k.is_empty() => k.as_bytes().to_vec(),
                _ => crate::ids::random_hex(32).into_bytes(),
            },
            max_scanned_bytes: self.limits.max_scanned_bytes,
        }
    }
}
