//! Agent cards, both directions (hazards H25-H33).

use std::collections::{BTreeMap, BTreeSet};

use a2a_types::{v1, v03};

use crate::error::{CardTranslation, Omission, Untranslatable};
use crate::path::Path;
use crate::policy::Policy;

mod security;

use security::{requirements_to_v1, requirements_to_v03, scheme_to_v1, scheme_to_v03};

type R<T> = Result<T, Untranslatable>;

struct Omit(Vec<Omission>);

impl Omit {
    fn push(&mut self, at: &Path<'_>, reason: impl Into<std::borrow::Cow<'static, str>>) {
        self.0.push(Omission {
            path: at.to_string(),
            reason: reason.into(),
        });
    }
}

/// `Major.Minor` of a version string (`"0.3.0"` -> `"0.3"`); other text is kept.
fn major_minor(v: &str) -> String {
    let mut it = v.splitn(3, '.');
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        _ => v.to_owned(),
    }
}

/// True for versions a 0.3 client speaks: `0.x` with `x >= 3` (the a2a-python rule: `[0.3, 1.0)`).
fn is_v03_family(v: &str) -> bool {
    let mut it = v.split('.');
    match (
        it.next().map(str::parse::<u32>),
        it.next().map(str::parse::<u32>),
    ) {
        (Some(Ok(0)), Some(Ok(minor))) => minor >= 3,
        _ => false,
    }
}

/// The 0.3 `protocolVersion` for an interface version: `"0.3"` -> `"0.3.0"` (T0 spelling).
fn v03_protocol_version(v: &str) -> String {
    match v.matches('.').count() {
        0 if v.is_empty() => "0.3.0".to_owned(),
        1 => format!("{v}.0"),
        _ => v.to_owned(),
    }
}

// ------------------------------------------------------------------------------- 1.0 -> 0.3

/// A 1.0 card as a 0.3 card.
///
/// Left out (and listed in [`CardTranslation::omitted`]): interfaces that are not A2A 0.3
/// (`protocolVersion` outside `[0.3, 1.0)`) or that need a `tenant`; security schemes without
/// a 0.3 form (`deviceCode` flow, `pkceRequired: true`, implicit/password flows lacking their
/// URL, unknown apiKey locations); every security requirement (card or skill) naming a
/// left-out scheme; extensions without a `uri`. Signatures are dropped
/// ([`CardTranslation::signatures_dropped`]).
///
/// Refused: no interface left, or requirements that would all be left out (the card would
/// claim the agent needs no authentication).
pub fn card_to_v03(c: v1::AgentCard, policy: Policy) -> R<CardTranslation<v03::AgentCard>> {
    let _ = policy;
    let root = Path::Root;
    let mut omit = Omit(Vec::new());

    // Interfaces (H25, H19).
    let ip = root.field("supportedInterfaces");
    let mut kept: Vec<v1::AgentInterface> = Vec::new();
    for (i, itf) in c.supported_interfaces.into_iter().enumerate() {
        let at = ip.index(i);
        if !(itf.protocol_version.is_empty() || is_v03_family(&itf.protocol_version)) {
            omit.push(&at, format!("speaks A2A {}, not 0.3", itf.protocol_version));
        } else if itf.tenant.as_deref().is_some_and(|t| !t.is_empty()) {
            omit.push(&at, "needs a tenant, which A2A 0.3 cannot send");
        } else {
            for k in itf.extra.keys() {
                let a = at.key(k);
                omit.push(
                    &a,
                    "unknown interface member; A2A 0.3 interfaces are {url, transport}",
                );
            }
            kept.push(itf);
        }
    }
    let mut kept = kept.into_iter();
    let Some(primary) = kept.next() else {
        return Err(Untranslatable::at(&ip, "no interface speaks A2A 0.3"));
    };
    let additional: Vec<v03::AgentInterface> = kept
        .map(|i| v03::AgentInterface {
            url: i.url,
            transport: i.protocol_binding,
        })
        .collect();

    // Capabilities (H26, H27).
    let cp = root.field("capabilities");
    let caps = c.capabilities;
    let extensions = extensions_to_v03(caps.extensions, &cp.field("extensions"), &mut omit);
    let capabilities = v03::AgentCapabilities {
        streaming: caps.streaming,
        push_notifications: caps.push_notifications,
        state_transition_history: None,
        extensions,
        extra: caps.extra,
    };

    // Security schemes (H28-H30).
    let sp = root.field("securitySchemes");
    let mut schemes = BTreeMap::new();
    let mut dropped: BTreeSet<String> = BTreeSet::new();
    for (name, s) in c.security_schemes {
        let at = sp.key(&name);
        match scheme_to_v03(s) {
            Ok(s) => {
                schemes.insert(name, s);
            }
            Err(reason) => {
                omit.push(&at, reason);
                dropped.insert(name);
            }
        }
    }

    // Requirements (H31).
    let security = requirements_to_v03(
        c.security_requirements,
        &dropped,
        &root.field("securityRequirements"),
        &mut omit,
    )?;
    let kp = root.field("skills");
    let mut skills = Vec::with_capacity(c.skills.len());
    for (i, s) in c.skills.into_iter().enumerate() {
        let at = kp.index(i);
        let security = requirements_to_v03(
            s.security_requirements,
            &dropped,
            &at.field("securityRequirements"),
            &mut omit,
        )?;
        skills.push(v03::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: non_empty(s.examples),
            input_modes: non_empty(s.input_modes),
            output_modes: non_empty(s.output_modes),
            security,
            extra: s.extra,
        });
    }

    let card = v03::AgentCard {
        protocol_version: v03_protocol_version(&primary.protocol_version),
        name: c.name,
        description: c.description,
        url: primary.url,
        preferred_transport: Some(primary.protocol_binding),
        additional_interfaces: non_empty(additional),
        icon_url: c.icon_url,
        provider: c.provider.map(|p| v03::AgentProvider {
            organization: p.organization,
            url: p.url,
        }),
        version: c.version,
        documentation_url: c.documentation_url,
        capabilities,
        security_schemes: if schemes.is_empty() {
            None
        } else {
            Some(schemes)
        },
        security,
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills,
        supports_authenticated_extended_card: caps.extended_agent_card,
        signatures: None,
        extra: c.extra,
    };
    Ok(CardTranslation {
        card,
        omitted: omit.0,
        signatures_dropped: !c.signatures.is_empty(),
    })
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() { None } else { Some(v) }
}

fn extensions_to_v03(
    exts: Vec<v1::AgentExtension>,
    at: &Path<'_>,
    omit: &mut Omit,
) -> Option<Vec<v03::AgentExtension>> {
    let mut out = Vec::with_capacity(exts.len());
    for (i, e) in exts.into_iter().enumerate() {
        match e.uri {
            Some(uri) => out.push(v03::AgentExtension {
                uri,
                description: e.description,
                required: e.required,
                params: e.params,
            }),
            None => omit.push(&at.index(i), "A2A 0.3 extensions require a uri"),
        }
    }
    non_empty(out)
}

/// A 0.3 card as a 1.0 card.
///
/// `url`/`preferredTransport` become the first `supportedInterfaces` entry and each
/// `additionalInterfaces` entry follows, all with the card's `protocolVersion` as
/// `Major.Minor`; `supportsAuthenticatedExtendedCard` becomes `capabilities.extendedAgentCard`.
/// Left out and listed: `stateTransitionHistory` (removed in 1.0), OAuth schemes with other
/// than exactly one flow (strict; SDK-compatible keeps the flow a2a-python keeps and lists the
/// others), and the requirements naming a left-out scheme. Signatures are dropped.
pub fn card_to_v1(c: v03::AgentCard, policy: Policy) -> R<CardTranslation<v1::AgentCard>> {
    let root = Path::Root;
    let mut omit = Omit(Vec::new());
    let version = major_minor(&c.protocol_version);
    let mut interfaces =
        Vec::with_capacity(1 + c.additional_interfaces.as_ref().map_or(0, Vec::len));
    interfaces.push(v1::AgentInterface {
        url: c.url,
        protocol_binding: c
            .preferred_transport
            .unwrap_or_else(|| v03::transport::JSONRPC.to_owned()),
        tenant: None,
        protocol_version: version.clone(),
        extra: Default::default(),
    });
    for i in c.additional_interfaces.unwrap_or_default() {
        interfaces.push(v1::AgentInterface {
            url: i.url,
            protocol_binding: i.transport,
            tenant: None,
            protocol_version: version.clone(),
            extra: Default::default(),
        });
    }

    let cp = root.field("capabilities");
    let caps = c.capabilities;
    if caps.state_transition_history.is_some() {
        omit.push(&cp.field("stateTransitionHistory"), "removed in A2A 1.0");
    }
    let capabilities = v1::AgentCapabilities {
        streaming: caps.streaming,
        push_notifications: caps.push_notifications,
        extensions: caps
            .extensions
            .unwrap_or_default()
            .into_iter()
            .map(|e| v1::AgentExtension {
                uri: Some(e.uri),
                description: e.description,
                required: e.required,
                params: e.params,
            })
            .collect(),
        extended_agent_card: c.supports_authenticated_extended_card,
        extra: caps.extra,
    };

    let sp = root.field("securitySchemes");
    let mut schemes = BTreeMap::new();
    let mut dropped = BTreeSet::new();
    for (name, s) in c.security_schemes.unwrap_or_default() {
        let at = sp.key(&name);
        match scheme_to_v1(s, policy, &at, &mut omit) {
            Ok(s) => {
                schemes.insert(name, s);
            }
            Err(reason) => {
                omit.push(&at, reason);
                dropped.insert(name);
            }
        }
    }
    let security_requirements = requirements_to_v1(
        c.security.unwrap_or_default(),
        &dropped,
        &root.field("securityRequirements"),
        &mut omit,
    )?;
    let kp = root.field("skills");
    let mut skills = Vec::with_capacity(c.skills.len());
    for (i, s) in c.skills.into_iter().enumerate() {
        let at = kp.index(i);
        skills.push(v1::AgentSkill {
            security_requirements: requirements_to_v1(
                s.security.unwrap_or_default(),
                &dropped,
                &at.field("securityRequirements"),
                &mut omit,
            )?,
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples.unwrap_or_default(),
            input_modes: s.input_modes.unwrap_or_default(),
            output_modes: s.output_modes.unwrap_or_default(),
            extra: s.extra,
        });
    }
    let signatures_dropped = c.signatures.as_ref().is_some_and(|s| !s.is_empty());
    let card = v1::AgentCard {
        name: c.name,
        description: c.description,
        supported_interfaces: interfaces,
        provider: c.provider.map(|p| v1::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: c.version,
        documentation_url: c.documentation_url,
        capabilities,
        security_schemes: schemes,
        security_requirements,
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills,
        signatures: Vec::new(),
        icon_url: c.icon_url,
        extra: c.extra,
    };
    Ok(CardTranslation {
        card,
        omitted: omit.0,
        signatures_dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(major_minor("0.3.0"), "0.3");
        assert_eq!(major_minor("1.0"), "1.0");
        assert!(is_v03_family("0.3") && is_v03_family("0.3.1") && is_v03_family("0.4"));
        assert!(!is_v03_family("1.0") && !is_v03_family("0.2") && !is_v03_family("x"));
        assert_eq!(v03_protocol_version("0.3"), "0.3.0");
        assert_eq!(v03_protocol_version(""), "0.3.0");
        assert_eq!(v03_protocol_version("0.3.1"), "0.3.1");
    }
}
