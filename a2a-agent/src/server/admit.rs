//! Admission: authentication, then extension negotiation, the checks every binding makes before
//! an operation (gRPC reads the same names from its metadata).

use http::HeaderMap;
use serde_json::Value;

use crate::auth::AuthRequest;
use crate::caller::CallerProfile;
use crate::edge::names;
use crate::error::{A2aError, ErrorKind};
use crate::state::App;

/// Authentication, then extension negotiation: the checks every binding makes (gRPC reads the
/// same names from its metadata).
pub(crate) async fn admit(
    app: &App,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<(CallerProfile, Vec<String>), A2aError> {
    let caller = app
        .authenticator
        .authenticate(&AuthRequest { headers, query })
        .await?;
    let extensions = app.negotiate_extensions(headers)?;
    Ok((caller, extensions))
}

fn header_list(h: &HeaderMap, name: &http::HeaderName) -> Vec<String> {
    h.get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

impl App {
    /// The extensions of the request's `A2A-Extensions` (and `X-A2A-Extensions`): each one
    /// declared by the card, every required one requested.
    fn negotiate_extensions(&self, headers: &HeaderMap) -> Result<Vec<String>, A2aError> {
        let mut requested = header_list(headers, &names::A2A_EXTENSIONS);
        for e in header_list(headers, &names::X_A2A_EXTENSIONS) {
            if !requested.contains(&e) {
                requested.push(e);
            }
        }
        let decls = self.card.extension_decls();
        let uri = |d: &Value| d.get("uri").and_then(Value::as_str).map(str::to_string);
        for r in &requested {
            if !decls
                .iter()
                .any(|d| d.get("uri").and_then(Value::as_str) == Some(r.as_str()))
            {
                return Err(A2aError::new(
                    ErrorKind::ExtensionSupportRequired,
                    format!("extension {r:?} is not supported by this agent"),
                )
                .with_meta("extension", r.clone()));
            }
        }
        for d in decls {
            if d.get("required").and_then(Value::as_bool) == Some(true)
                && let Some(u) = uri(d)
                && !requested.contains(&u)
            {
                return Err(A2aError::new(
                    ErrorKind::ExtensionSupportRequired,
                    format!(
                        "extension {u:?} is required by this agent; request it in A2A-Extensions"
                    ),
                )
                .with_meta("extension", u));
            }
        }
        Ok(requested)
    }
}
