//! The request's headers read once, at the outermost edge, into the one form every check uses:
//! - DVARA's `x-dvara-*` names are our `x-a2a-*` ones: each is renamed before any handler reads
//!   the request (both names with different values: 400 `a2a_header_conflict`);
//! - the delegated authorization (`X-A2A-Delegated-Authorization`) is checked (400
//!   `a2a_delegated_authorization_invalid`) and made reachable from the request's peer calls
//!   ([`crate::peer::delegated`]);
//! - the `error_domain` setting is the `ErrorInfo.domain` of the gateway's refusals, for the
//!   handler and for the events of a streamed body;
//! - with `dvara_headers`, the answer's own `x-a2a-*` headers are also written under their
//!   `x-dvara-*` names.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName};
use axum::middleware::Next;
use axum::response::Response;
use http_body::Body as HttpBody;

use crate::peer::delegated;
use crate::protocol::errors::{GATEWAY_DOMAIN, Refusal, sync_with_domain, with_domain};
use crate::state::GatewayState;

/// The prefix of DVARA's header names.
const DVARA: &str = "x-dvara-";
/// The prefix of ours.
const OURS: &str = "x-a2a-";
/// Our answer headers that DVARA names `x-dvara-*` (`dvara_headers`).
const ANSWER_HEADERS: [&str; 1] = [crate::trust::TRUST_HEADER];

/// The middleware (see the module documentation).
pub async fn normalize(
    State(st): State<Arc<GatewayState>>,
    mut req: Request,
    next: Next,
) -> Response {
    let (domain, dvara) = {
        let c = st.config();
        let domain =
            (c.error_domain != GATEWAY_DOMAIN).then(|| Arc::<str>::from(c.error_domain.as_str()));
        (domain, c.dvara_headers)
    };
    let read = rename_aliases(req.headers_mut()).and_then(|()| delegated_of(req.headers()));
    let value = match read {
        Ok(v) => v,
        Err(r) => {
            let (parts, _) = req.into_parts();
            let render = || crate::edge::wire::edge_refusal_parts(st.config().serve_v1, &parts, &r);
            return match domain {
                Some(d) => sync_with_domain(d, render),
                None => render(),
            };
        }
    };
    let run = delegated::scope(value, next.run(req));
    let mut resp = match &domain {
        Some(d) => with_domain(d.clone(), run).await,
        None => run.await,
    };
    if let Some(d) = domain {
        resp = resp.map(|b| {
            Body::new(Scoped {
                inner: b,
                domain: d,
            })
        });
    }
    if dvara {
        copy_to_dvara(resp.headers_mut());
    }
    resp
}

/// Renames every `x-dvara-*` request header to its `x-a2a-*` name.
fn rename_aliases(h: &mut HeaderMap) -> Result<(), Refusal> {
    let aliases: Vec<HeaderName> = h
        .keys()
        .filter(|k| k.as_str().starts_with(DVARA))
        .cloned()
        .collect();
    for alias in aliases {
        let ours = format!("{OURS}{}", &alias.as_str()[DVARA.len()..]);
        let Ok(ours) = HeaderName::try_from(ours) else {
            continue;
        };
        let given: Vec<_> = h.get_all(&alias).iter().cloned().collect();
        let mine: Vec<_> = h.get_all(&ours).iter().cloned().collect();
        if !mine.is_empty() && mine != given {
            return Err(Refusal::gateway(
                400,
                "a2a_header_conflict",
                format!("{alias} and {ours} name the same header with different values; send one"),
            ));
        }
        h.remove(&alias);
        if mine.is_empty() {
            for v in given {
                h.append(ours.clone(), v);
            }
        }
    }
    Ok(())
}

/// The checked delegated authorization of a request (one value at most).
fn delegated_of(h: &HeaderMap) -> Result<Option<Arc<str>>, Refusal> {
    let mut values = h.get_all(delegated::HEADER).iter();
    let Some(v) = values.next() else {
        return Ok(None);
    };
    let invalid = |why: &str| {
        Refusal::gateway(
            400,
            "a2a_delegated_authorization_invalid",
            format!(
                "X-A2A-Delegated-Authorization (or X-Dvara-Delegated-Authorization) is refused: {why}"
            ),
        )
    };
    if values.next().is_some() {
        return Err(invalid("it is given more than once"));
    }
    delegated::check(v.as_bytes())
        .map(|t| Some(Arc::from(t)))
        .map_err(|why| invalid(&why))
}

/// Writes each of [`ANSWER_HEADERS`] under its `x-dvara-*` name too.
fn copy_to_dvara(h: &mut HeaderMap) {
    for name in ANSWER_HEADERS {
        let Some(v) = h.get(name).cloned() else {
            continue;
        };
        let alias = format!("{DVARA}{}", &name[OURS.len()..]);
        if let Ok(alias) = HeaderName::try_from(alias) {
            h.insert(alias, v);
        }
    }
}

/// A body polled with the request's error domain (a stream's error events are written then).
struct Scoped {
    inner: Body,
    domain: Arc<str>,
}

impl HttpBody for Scoped {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let domain = this.domain.clone();
        sync_with_domain(domain, || Pin::new(&mut this.inner).poll_frame(cx))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn aliases_are_renamed_and_conflicts_refused() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-dvara-delegated-authorization",
            HeaderValue::from_static("Bearer u"),
        );
        h.insert("x-dvara-gateway-hops", HeaderValue::from_static("2"));
        rename_aliases(&mut h).unwrap();
        assert_eq!(h.get(delegated::HEADER).unwrap(), "Bearer u");
        assert_eq!(h.get("x-a2a-gateway-hops").unwrap(), "2");
        assert!(h.get("x-dvara-gateway-hops").is_none());
        // The same value under both names is one header.
        h.insert("x-dvara-gateway-hops", HeaderValue::from_static("2"));
        rename_aliases(&mut h).unwrap();
        assert_eq!(h.get_all("x-a2a-gateway-hops").iter().count(), 1);
        h.insert("x-dvara-gateway-hops", HeaderValue::from_static("3"));
        assert_eq!(
            rename_aliases(&mut h).unwrap_err().code,
            "a2a_header_conflict"
        );
    }

    #[test]
    fn answer_headers_are_copied() {
        let mut h = HeaderMap::new();
        h.insert(
            crate::trust::TRUST_HEADER,
            HeaderValue::from_static("verified"),
        );
        copy_to_dvara(&mut h);
        assert_eq!(h.get("x-dvara-signature-trust").unwrap(), "verified");
    }
}
