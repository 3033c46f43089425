//! The caller edge: version negotiation and content type checks of a request, and rendering a
//! refusal in the caller's binding and version (JSON-RPC, HTTP+JSON `google.rpc.Status`, the
//! card's forms), including the 408/503 refusals of the shared listener ([`a2a_agent::listen`])
//! and the `a2a_shutting_down` refusal that ends open streams and waiting calls at shutdown.

pub mod ard;
pub(crate) mod card;
pub(crate) mod grpc;
pub(crate) mod headers;
pub(crate) mod jsonrpc;
pub(crate) mod probes;
pub(crate) mod record;
pub(crate) mod refusal;
pub(crate) mod rest;
pub(crate) mod rest03;
pub mod wire;

use axum::http::HeaderMap;

use crate::{protocol::errors::Refusal, protocol::errors::Version};

// Kept at their previous path for one release.
pub use crate::protocol::errors::shutting_down;

// Kept at its previous path (the listener's refusals are rendered with the other edge forms).
pub use wire::edge_refusal;

/// The `A2A-Version` a request names ([`a2a_agent::edge::requested`]: the header, else the query
/// parameter; `None` means 0.3).
pub(crate) fn requested_version(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    a2a_agent::edge::requested(headers, query)
}

/// Negotiates a requested version against the versions an entry `serves` (the one rule of
/// [`a2a_types::version::negotiate`]: none or empty = 0.3, patch ignored). A refusal comes with
/// the version whose error form it must use (0.x -> 0.3, anything else -> 1.0).
///
/// The refusal lists `advertised` as the supported versions (`None`: `serves`).
pub(crate) fn negotiate_on(
    requested: Option<&str>,
    serves: &[Version],
    advertised: Option<&[&str]>,
) -> Result<Version, (Refusal, Version)> {
    match a2a_agent::edge::negotiate(requested, serves) {
        Ok(v) => Ok(v),
        Err(u) => {
            let supported: Vec<String> = u.supported.iter().map(ToString::to_string).collect();
            let supported: Vec<&str> = match advertised {
                Some(a) => a.to_vec(),
                None => supported.iter().map(String::as_str).collect(),
            };
            let form = if u.legacy_form {
                Version::V03
            } else {
                Version::V1
            };
            Err((
                Refusal::version_not_supported(&u.requested, &supported),
                form,
            ))
        }
    }
}

/// Negotiates the version of a JSON-RPC request (0.3, and 1.0 when `serve_v1`).
pub fn negotiate(requested: Option<&str>, serve_v1: bool) -> Result<Version, (Refusal, Version)> {
    if serve_v1 {
        negotiate_on(requested, &[Version::V03, Version::V1], None)
    } else {
        negotiate_on(requested, &[Version::V03], None)
    }
}

/// A body's content type: `application/json` or `application/a2a+json`, else 415 (a missing
/// type included) ([`a2a_agent::edge::media`]).
pub(crate) fn content_type_ok(headers: &HeaderMap) -> Result<(), Refusal> {
    match a2a_agent::edge::media::check_content_type(headers) {
        Ok(()) => Ok(()),
        Err(None) => Err(Refusal::unsupported_media_type("(none)")),
        Err(Some(ct)) => Err(Refusal::unsupported_media_type(&ct)),
    }
}
