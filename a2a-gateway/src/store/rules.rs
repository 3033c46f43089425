//! What both registry backends check and decide the same way (`super::backend`): ids,
//! registrations and settings refused with the same [`StoreError`] kind and message, and a
//! presented key judged against its stored row.

use super::{Agent, KeyRejection, KeySource, Principal, StoreError, WorkspaceSettings, now};
use crate::keys;

/// workspace, hash, scopes, expires_at, revoked_at
pub(crate) type KeyRow = (String, Vec<u8>, String, Option<i64>, Option<i64>);

/// Judges a presented key against its stored row (`None`: unknown id): constant-time
/// comparison of SHA-256 digests, then revocation and expiry (both backends).
pub(crate) fn judge_key(
    presented: &str,
    key_id: &str,
    row: Option<KeyRow>,
    registry_version: Option<i64>,
) -> Result<Principal, KeyRejection> {
    // Hash even when the id is unknown, so timing does not tell ids apart.
    let digest = keys::hash(presented);
    let Some((workspace_id, stored, scopes, expires_at, revoked_at)) = row else {
        let _ = keys::digest_eq(&digest, &[0u8; 32]);
        return Err(KeyRejection::Invalid);
    };
    if !keys::digest_eq(&digest, &stored) {
        return Err(KeyRejection::Invalid);
    }
    if revoked_at.is_some() {
        return Err(KeyRejection::Revoked);
    }
    if let Some(exp) = expires_at
        && exp <= now()
    {
        return Err(KeyRejection::Expired);
    }
    Ok(Principal {
        key_id: key_id.to_owned(),
        workspace_id,
        scopes: keys::parse_scopes(&scopes).unwrap_or_default(),
        registry_version,
    })
}

/// The standing of a stored key row (`None`: no such key), as [`super::Store::key_standing`] answers.
pub(crate) fn standing(row: Option<&KeyRow>) -> Option<KeyRejection> {
    match row {
        None => Some(KeyRejection::Invalid),
        Some((_, _, _, _, Some(_))) => Some(KeyRejection::Revoked),
        Some((_, _, _, Some(exp), None)) if *exp <= now() => Some(KeyRejection::Expired),
        Some(_) => None,
    }
}

/// Refuses a workspace id that is not a non-empty run of ASCII letters, digits, `-_.`.
pub(crate) fn check_workspace_id(id: &str) -> Result<(), StoreError> {
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(StoreError::Invalid(format!(
            "workspace id {id:?} must be non-empty ASCII letters, digits, '-', '_' or '.'"
        )));
    }
    Ok(())
}

/// The refusal of a workspace id that is taken (both backends).
pub(crate) fn workspace_exists(id: &str) -> StoreError {
    StoreError::Invalid(format!("workspace {id} already exists"))
}

/// Checks a registration (id, endpoint, pinned key) and returns its skill list as stored.
pub(crate) fn check_agent(agent: &Agent) -> Result<Option<String>, StoreError> {
    if agent.agent_id.is_empty()
        || !agent
            .agent_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(StoreError::Invalid(format!(
            "agent id {:?} must be non-empty ASCII letters, digits, '-', '_' or '.'",
            agent.agent_id
        )));
    }
    url::Url::parse(&agent.endpoint)
        .map_err(|e| StoreError::Invalid(format!("endpoint {:?}: {e}", agent.endpoint)))?;
    if let Some(k) = agent.pinned_card_key.as_deref() {
        // The static form only (http allowed): each use checks the address again.
        KeySource::parse(k, true).map_err(StoreError::Invalid)?;
    }
    match &agent.skills {
        Some(s) => Ok(Some(
            serde_json::to_string(s).map_err(|e| StoreError::Invalid(e.to_string()))?,
        )),
        None => Ok(None),
    }
}

/// An agent from its stored columns (skills as stored JSON text).
pub(crate) fn agent_of(
    workspace_id: String,
    agent_id: String,
    endpoint: String,
    credential: Option<String>,
    skills: Option<String>,
    pinned_card_key: Option<String>,
) -> Agent {
    Agent {
        workspace_id,
        agent_id,
        endpoint,
        credential,
        skills: skills.and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok()),
        pinned_card_key,
    }
}

/// Checks settings and returns their stored JSON document.
pub(crate) fn settings_document(settings: &WorkspaceSettings) -> Result<String, StoreError> {
    for uri in &settings.extensions_allowed {
        if uri.trim().is_empty() || uri.contains(',') || uri.chars().any(char::is_whitespace) {
            return Err(StoreError::Invalid(format!(
                "extension URI {uri:?} must be non-empty, without spaces or commas"
            )));
        }
    }
    serde_json::to_string(settings).map_err(|e| StoreError::Invalid(format!("settings: {e}")))
}

/// Settings from their stored document (`None`: the defaults).
pub(crate) fn settings_of(
    workspace_id: &str,
    doc: Option<&str>,
) -> Result<WorkspaceSettings, StoreError> {
    match doc {
        Some(d) => serde_json::from_str(d)
            .map_err(|e| StoreError::Invalid(format!("stored settings of {workspace_id}: {e}"))),
        None => Ok(WorkspaceSettings::default()),
    }
}
