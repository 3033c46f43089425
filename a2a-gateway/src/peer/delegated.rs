//! Delegated authorization: the end user's credential a caller hands the gateway in
//! `X-A2A-Delegated-Authorization` (DVARA: `X-Dvara-Delegated-Authorization`, read as ours at
//! the edge, `crate::edge::headers`), checked there once, then passed to the peer on every call
//! of the request (hop calls and card fetches) and made part of the peer card's cache key.

use std::future::Future;
use std::sync::Arc;

/// Our header.
pub const HEADER: &str = "x-a2a-delegated-authorization";
/// The DVARA API's header (sent to peers as well with `dvara_headers`).
pub const DVARA_HEADER: &str = "x-dvara-delegated-authorization";
/// Longest value accepted.
pub const MAX_LEN: usize = 8192;

tokio::task_local! {
    static DELEGATED: Option<Arc<str>>;
}

/// Runs a request with its checked delegated authorization reachable from its peer calls.
pub fn scope<F: Future>(value: Option<Arc<str>>, f: F) -> impl Future<Output = F::Output> {
    DELEGATED.scope(value, f)
}

/// The request's delegated authorization, if it sent one.
pub fn current() -> Option<Arc<str>> {
    DELEGATED.try_with(Clone::clone).ok().flatten()
}

/// Checks a delegated authorization value: `<scheme> <credentials>` as an `Authorization`
/// header is written (RFC 9110 §11.4: the scheme a token, then a space, then the credentials),
/// visible ASCII only, at most [`MAX_LEN`] bytes. The error names what is wrong.
pub fn check(value: &[u8]) -> Result<String, String> {
    if value.is_empty() {
        return Err("it is empty".to_owned());
    }
    if value.len() > MAX_LEN {
        return Err(format!("it is longer than {MAX_LEN} bytes"));
    }
    let text = std::str::from_utf8(value)
        .ok()
        .filter(|t| t.bytes().all(|b| b == b' ' || b.is_ascii_graphic()))
        .ok_or_else(|| "it holds characters other than visible ASCII".to_owned())?;
    let Some((scheme, credentials)) = text.split_once(' ') else {
        return Err("it is not `<scheme> <credentials>`".to_owned());
    };
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if scheme.is_empty() || !scheme.bytes().all(tchar) {
        return Err("its scheme is not a token".to_owned());
    }
    if credentials.trim().is_empty() {
        return Err("it has no credentials after the scheme".to_owned());
    }
    Ok(text.to_owned())
}

/// Adds the request's delegated authorization to a peer request (ours, and DVARA's name too
/// with `dvara_headers`).
pub fn outbound(mut req: reqwest::RequestBuilder, dvara: bool) -> reqwest::RequestBuilder {
    let Some(v) = current() else {
        return req;
    };
    let Ok(mut value) = reqwest::header::HeaderValue::from_str(&v) else {
        return req;
    };
    value.set_sensitive(true);
    if dvara {
        req = req.header(DVARA_HEADER, value.clone());
    }
    req.header(HEADER, value)
}

/// The card cache's partition of the request: a digest of its delegated authorization (cards
/// fetched with different credentials are kept apart), `None` without one.
pub fn cache_partition() -> Option<String> {
    current().map(|v| {
        let d = crate::keys::hash(&v);
        d[..16].iter().map(|b| format!("{b:02x}")).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn values_are_checked() {
        assert_eq!(check(b"Bearer abc.def").unwrap(), "Bearer abc.def");
        assert!(check(b"Digest a=b, c=d").is_ok());
        for (bad, why) in [
            (&b""[..], "empty"),
            (&b"abc"[..], "scheme"),
            (&b"Bearer "[..], "no credentials"),
            (&b"B(r) x"[..], "token"),
            (&b"Bearer \x01"[..], "visible ASCII"),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        assert!(check(&vec![b'a'; 9000]).unwrap_err().contains("longer"));
    }
}
