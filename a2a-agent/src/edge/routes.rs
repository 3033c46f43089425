//! The REST route tables of A2A 1.0 and 0.3 (HTTP+JSON), for the agent and the gateway: the
//! 1.0 paths (`message:send`, `tasks/{id}:cancel`, ...) optionally under `/{tenant}`, and the
//! 0.3 paths under `/v1`.
//!
//! Paths are parsed by hand rather than by a router: axum's matchit cannot express
//! `/tasks/{id}:cancel`, and a hand parser keeps `:send` and `:stream` apart by construction.

use crate::edge::version::Version;

/// A REST operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `message:send`.
    Send,
    /// `message:stream`.
    Stream,
    /// `GET tasks`.
    List,
    /// `tasks/{id}`.
    Get(String),
    /// `tasks/{id}:cancel`.
    Cancel(String),
    /// `tasks/{id}:subscribe`.
    Subscribe(String),
    /// Push config collection (`None`) or one config of a task.
    Push(String, Option<String>),
    /// `extendedAgentCard` (1.0) or `card` (0.3).
    ExtendedCard,
}

/// A parsed REST path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The operation.
    pub op: Op,
    /// The dialect: 0.3 (`/v1/...`, or no version named) or 1.0.
    pub version: Version,
    /// The `/{tenant}` prefix, if any.
    pub tenant: Option<String>,
}

/// A path segment, percent-decoded strictly (`+` stays a plus). The pipeline has refused paths
/// that do not decode ([`a2a_types::path::check_path`]), so the fallback is never taken.
fn decode(seg: &str) -> String {
    a2a_types::path::decode_segment(seg).unwrap_or_else(|_| seg.to_string())
}

/// The operation of the path segments after the base path (and tenant), still percent-encoded.
pub fn parse_op(segs: &[&str]) -> Option<Op> {
    parse_op_with(segs, decode)
}

/// [`parse_op`] for segments a router has already percent-decoded.
pub fn parse_decoded_op(segs: &[&str]) -> Option<Op> {
    parse_op_with(segs, str::to_owned)
}

fn parse_op_with(segs: &[&str], decode: fn(&str) -> String) -> Option<Op> {
    match segs {
        ["message:send"] => Some(Op::Send),
        ["message:stream"] => Some(Op::Stream),
        ["tasks"] => Some(Op::List),
        ["extendedAgentCard"] | ["card"] => Some(Op::ExtendedCard),
        ["tasks", rest] => {
            let (id, verb) = match rest.rsplit_once(':') {
                Some((id, verb)) => (id, Some(verb)),
                None => (*rest, None),
            };
            if id.is_empty() {
                return None;
            }
            let id = decode(id);
            match verb {
                None => Some(Op::Get(id)),
                Some("cancel") => Some(Op::Cancel(id)),
                Some("subscribe") => Some(Op::Subscribe(id)),
                Some(_) => None,
            }
        }
        ["tasks", t, "pushNotificationConfigs"] if !t.is_empty() => Some(Op::Push(decode(t), None)),
        ["tasks", t, "pushNotificationConfigs", c] if !t.is_empty() && !c.is_empty() => {
            Some(Op::Push(decode(t), Some(decode(c))))
        }
        _ => None,
    }
}

/// Parse `rel` (the path after the base path). `/v1/...` is 0.3 unless the caller asked for 1.0
/// (then `v1` is a tenant); any other leading segment before a known operation is a tenant.
/// A request that names no version is 0.3 on every path (S1 §3.6.2: empty = 0.3).
pub fn parse_route(rel: &str, explicit: Option<Version>) -> Option<Route> {
    let segs: Vec<&str> = rel.trim_start_matches('/').split('/').collect();
    if segs.first() == Some(&"v1") && explicit != Some(Version::V1) {
        let op = parse_op(&segs[1..])?;
        return Some(Route {
            op,
            version: Version::V03,
            tenant: None,
        });
    }
    if let Some(op) = parse_op(&segs) {
        return Some(Route {
            op,
            version: explicit.unwrap_or(Version::V03),
            tenant: None,
        });
    }
    if segs.len() > 1 {
        let op = parse_op(&segs[1..])?;
        return Some(Route {
            op,
            version: explicit.unwrap_or(Version::V03),
            tenant: Some(decode(segs[0])),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_routes() {
        let r = |p: &str| parse_route(p, None).map(|r| r.op);
        assert_eq!(r("/message:send"), Some(Op::Send));
        assert_eq!(r("/message:stream"), Some(Op::Stream));
        assert_eq!(r("/tasks/abc:cancel"), Some(Op::Cancel("abc".into())));
        assert_eq!(r("/tasks/abc:subscribe"), Some(Op::Subscribe("abc".into())));
        assert_eq!(r("/tasks/abc"), Some(Op::Get("abc".into())));
        assert_eq!(r("/tasks/abc:bogus"), None);
        assert_eq!(r("/acme/message:stream"), Some(Op::Stream));
        let t = parse_route("/acme/tasks/x:cancel", None).unwrap();
        assert_eq!(t.tenant.as_deref(), Some("acme"));
        let o = parse_route("/v1/message:send", None).unwrap();
        assert_eq!(o.version, Version::V03);
        let o = parse_route("/v1/message:send", Some(Version::V1)).unwrap();
        assert_eq!((o.version, o.tenant.as_deref()), (Version::V1, Some("v1")));
    }
}
