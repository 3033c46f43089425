//! The configuration's governance settings a reload may change while hops run: the steps read
//! them here on every hop ([`Knobs`]), [`super::Governance::set_settings`] writes them.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use super::Settings;
use super::policy::PolicyDecision;

/// The live governance settings (see the module documentation).
#[derive(Debug, Default)]
pub struct Knobs {
    max_depth: AtomicUsize,
    max_scanned_bytes: AtomicUsize,
    policy_default: AtomicU8,
}

fn code(d: PolicyDecision) -> u8 {
    match d {
        PolicyDecision::Allow => 0,
        PolicyDecision::Deny => 1,
        PolicyDecision::Approve => 2,
        PolicyDecision::Redact => 3,
    }
}

impl Knobs {
    /// The settings' values.
    pub fn new(settings: &Settings) -> Knobs {
        let k = Knobs::default();
        k.set(settings);
        k
    }

    /// Takes the settings' values (the delegation key is not among them: it needs a restart).
    pub fn set(&self, settings: &Settings) {
        self.max_depth
            .store(settings.max_delegation_depth, Ordering::Relaxed);
        self.max_scanned_bytes
            .store(settings.max_scanned_bytes, Ordering::Relaxed);
        self.policy_default
            .store(code(settings.policy_default), Ordering::Relaxed);
    }

    /// Longest delegation chain (agents, the target included).
    pub fn max_depth(&self) -> usize {
        self.max_depth.load(Ordering::Relaxed)
    }

    /// Bytes of text the PII step scans in one request at most.
    pub fn max_scanned_bytes(&self) -> usize {
        self.max_scanned_bytes.load(Ordering::Relaxed)
    }

    /// Decision without a policy (or without a matching rule and document default).
    pub fn policy_default(&self) -> PolicyDecision {
        match self.policy_default.load(Ordering::Relaxed) {
            0 => PolicyDecision::Allow,
            2 => PolicyDecision::Approve,
            3 => PolicyDecision::Redact,
            _ => PolicyDecision::Deny,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decision_reads_back() {
        for d in [
            PolicyDecision::Allow,
            PolicyDecision::Deny,
            PolicyDecision::Approve,
            PolicyDecision::Redact,
        ] {
            let s = Settings {
                policy_default: d,
                max_delegation_depth: 3,
                delegation_key: vec![],
                max_scanned_bytes: 10,
            };
            let k = Knobs::new(&s);
            assert_eq!(
                (k.policy_default(), k.max_depth(), k.max_scanned_bytes()),
                (d, 3, 10)
            );
        }
    }
}
