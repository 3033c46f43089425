//! Interface selection over a table of cards: expected choice or error text.

use a2a_client::select::{Binding, CardInterfaces, Speaks, Version, select};
use serde_json::json;

fn card(v: serde_json::Value) -> CardInterfaces {
    CardInterfaces::from_json(v.to_string().as_bytes()).unwrap()
}

fn iface(url: &str, binding: &str, version: &str) -> serde_json::Value {
    json!({"url": url, "protocolBinding": binding, "protocolVersion": version})
}

/// (name, card, what the caller speaks, expected (url, binding, version, tenant) or error substrings)
type Case = (&'static str, serde_json::Value, Speaks, Expected);

/// The selected (url, binding, version, tenant), or substrings of the error.
type Expected = Result<(&'static str, Binding, Version, Option<&'static str>), Vec<&'static str>>;

fn cases() -> Vec<Case> {
    use Binding::*;
    use Version::*;
    vec![
        (
            "first supported entry wins: JSON-RPC before HTTP+JSON",
            json!({"supportedInterfaces": [
                iface("http://a/rpc", "JSONRPC", "1.0"),
                iface("http://a/rest", "HTTP+JSON", "1.0"),
            ]}),
            Speaks::all(),
            Ok(("http://a/rpc", JsonRpc, V1, None)),
        ),
        (
            "first supported entry wins: HTTP+JSON before JSON-RPC",
            json!({"supportedInterfaces": [
                iface("http://a/rest", "HTTP+JSON", "1.0"),
                iface("http://a/rpc", "JSONRPC", "1.0"),
            ]}),
            Speaks::all(),
            Ok(("http://a/rest", HttpJson, V1, None)),
        ),
        (
            "gRPC first is taken (host:port is plaintext HTTP/2)",
            json!({"supportedInterfaces": [
                iface("a:443", "GRPC", "1.0"),
                iface("http://a/rest", "HTTP+JSON", "1.0"),
            ]}),
            Speaks::all(),
            Ok(("http://a:443/", Grpc, V1, None)),
        ),
        (
            "gRPC 0.3 is passed over (the 0.3 gRPC service is not spoken)",
            json!({"supportedInterfaces": [
                iface("a:443", "GRPC", "0.3"),
                iface("http://a/rest", "HTTP+JSON", "1.0"),
            ]}),
            Speaks::all(),
            Ok(("http://a/rest", HttpJson, V1, None)),
        ),
        (
            "gRPC not forced: skipped",
            json!({"supportedInterfaces": [
                iface("a:443", "GRPC", "1.0"),
                iface("http://a/rest", "HTTP+JSON", "1.0"),
            ]}),
            Speaks::only(Some(HttpJson), None),
            Ok(("http://a/rest", HttpJson, V1, None)),
        ),
        (
            "card order beats version: 0.3 entry listed first is taken",
            json!({"supportedInterfaces": [
                iface("http://a/v03", "JSONRPC", "0.3"),
                iface("http://a/v1", "JSONRPC", "1.0"),
            ]}),
            Speaks::all(),
            Ok(("http://a/v03", JsonRpc, V03, None)),
        ),
        (
            "forced version 1.0 skips the 0.3 entry",
            json!({"supportedInterfaces": [
                iface("http://a/v03", "JSONRPC", "0.3"),
                iface("http://a/v1", "JSONRPC", "1.0"),
            ]}),
            Speaks::only(None, Some(V1)),
            Ok(("http://a/v1", JsonRpc, V1, None)),
        ),
        (
            "forced binding HTTP+JSON",
            json!({"supportedInterfaces": [
                iface("http://a/rpc", "JSONRPC", "1.0"),
                iface("http://a/rest03", "HTTP+JSON", "0.3"),
                iface("http://a/rest", "HTTP+JSON", "1.0"),
            ]}),
            Speaks::only(Some(HttpJson), None),
            Ok(("http://a/rest03", HttpJson, V03, None)),
        ),
        (
            "tenant is copied from the chosen entry",
            json!({"supportedInterfaces": [
                {"url": "http://a/x", "protocolBinding": "GRPC", "protocolVersion": "0.3", "tenant": "wrong"},
                {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "acme"},
            ]}),
            Speaks::all(),
            Ok(("http://a/rest", HttpJson, V1, Some("acme"))),
        ),
        (
            "empty tenant means none",
            json!({"supportedInterfaces": [
                {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": ""},
            ]}),
            Speaks::all(),
            Ok(("http://a/rest", HttpJson, V1, None)),
        ),
        (
            "patch version and later 1.x minor are 1.0",
            json!({"supportedInterfaces": [
                iface("http://a/x", "JSONRPC", "1.0.1"),
            ]}),
            Speaks::only(None, Some(V1)),
            Ok(("http://a/x", JsonRpc, V1, None)),
        ),
        (
            "lowercase binding names are accepted",
            json!({"supportedInterfaces": [iface("http://a/x", "jsonrpc", "1.0")]}),
            Speaks::all(),
            Ok(("http://a/x", JsonRpc, V1, None)),
        ),
        (
            "unknown version skipped",
            json!({"supportedInterfaces": [
                iface("http://a/v2", "JSONRPC", "2.0"),
                iface("http://a/v1", "JSONRPC", "1.0"),
            ]}),
            Speaks::all(),
            Ok(("http://a/v1", JsonRpc, V1, None)),
        ),
        (
            "0.3 card: url + preferredTransport",
            json!({"protocolVersion": "0.3.0", "url": "http://a/rpc", "preferredTransport": "JSONRPC",
                   "additionalInterfaces": [{"url": "http://a/rest", "transport": "HTTP+JSON"}]}),
            Speaks::all(),
            Ok(("http://a/rpc", JsonRpc, V03, None)),
        ),
        (
            "0.3 card: preferredTransport defaults to JSONRPC",
            json!({"protocolVersion": "0.3.0", "url": "http://a/rpc"}),
            Speaks::all(),
            Ok(("http://a/rpc", JsonRpc, V03, None)),
        ),
        (
            "0.3 card: preferred gRPC falls back to additionalInterfaces",
            json!({"protocolVersion": "0.3.0", "url": "a:50051", "preferredTransport": "GRPC",
                   "additionalInterfaces": [
                       {"url": "a:50051", "transport": "GRPC"},
                       {"url": "http://a/rest", "transport": "HTTP+JSON"},
                       {"url": "http://a/rpc", "transport": "JSONRPC"}]}),
            Speaks::all(),
            Ok(("http://a/rest", HttpJson, V03, None)),
        ),
        (
            "0.3 card: forced JSON-RPC picks the additional JSON-RPC entry",
            json!({"protocolVersion": "0.3.0", "url": "http://a/rest", "preferredTransport": "HTTP+JSON",
                   "additionalInterfaces": [{"url": "http://a/rpc", "transport": "JSONRPC"}]}),
            Speaks::only(Some(JsonRpc), None),
            Ok(("http://a/rpc", JsonRpc, V03, None)),
        ),
        (
            "0.3 card without protocolVersion is 0.3",
            json!({"url": "http://a/rpc"}),
            Speaks::all(),
            Ok(("http://a/rpc", JsonRpc, V03, None)),
        ),
        (
            "supportedInterfaces wins over legacy members",
            json!({"url": "http://a/legacy", "protocolVersion": "0.3.0",
                   "supportedInterfaces": [iface("http://a/new", "HTTP+JSON", "1.0")]}),
            Speaks::all(),
            Ok(("http://a/new", HttpJson, V1, None)),
        ),
        (
            "nothing usable: gRPC 0.3 only",
            json!({"supportedInterfaces": [iface("a:443", "GRPC", "0.3")]}),
            Speaks::all(),
            Err(vec![
                "no usable interface",
                "supportedInterfaces[0]: GRPC 0.3 at \"a:443\" -> GRPC 0.3 is not among the requested",
            ]),
        ),
        (
            "nothing usable: every reason listed",
            json!({"supportedInterfaces": [
                iface("a:443", "GRPC", "1.0"),
                iface("http://a/v2", "JSONRPC", "2.0"),
                iface("http://a/v1", "JSONRPC", "1.0"),
                {"url": "http://a/t", "protocolBinding": "urn:custom", "protocolVersion": "1.0", "tenant": "t1"},
                iface("not a url", "HTTP+JSON", "1.0"),
                iface("http://a/v1", "JSONRPC", "1.0"),
            ]}),
            Speaks::only(Some(HttpJson), None),
            Err(vec![
                "client speaks HTTP+JSON 1.0, HTTP+JSON 0.3",
                "supportedInterfaces[0]: GRPC 1.0 at \"a:443\" -> binding \"GRPC\" is not spoken",
                "supportedInterfaces[1]: JSONRPC 2.0 at \"http://a/v2\" -> protocol version \"2.0\" is not supported",
                "supportedInterfaces[2]: JSONRPC 1.0 at \"http://a/v1\" -> JSONRPC 1.0 is not among the requested",
                "supportedInterfaces[3]: urn:custom 1.0 at \"http://a/t\" tenant \"t1\" -> binding \"urn:custom\"",
                "supportedInterfaces[4]: HTTP+JSON 1.0 at \"not a url\" -> unusable url",
                "supportedInterfaces[5]: JSONRPC 1.0 at \"http://a/v1\" -> duplicate of an earlier entry",
            ]),
        ),
        (
            "nothing usable: 0.2 card",
            json!({"protocolVersion": "0.2.9", "url": "http://a/rpc", "preferredTransport": "JSONRPC"}),
            Speaks::all(),
            Err(vec![
                "url: JSONRPC 0.2.9 at \"http://a/rpc\" -> protocol version \"0.2.9\" is not supported",
            ]),
        ),
        (
            "nothing usable: 0.3 card, client forced to 1.0",
            json!({"protocolVersion": "0.3.0", "url": "http://a/rpc",
                   "additionalInterfaces": [{"url": "http://a/rest", "transport": "HTTP+JSON"}]}),
            Speaks::only(None, Some(V1)),
            Err(vec![
                "url: JSONRPC 0.3.0 at \"http://a/rpc\" -> JSONRPC 0.3 is not among the requested",
                "additionalInterfaces[0]: HTTP+JSON 0.3.0 at \"http://a/rest\" -> HTTP+JSON 0.3 is not among",
            ]),
        ),
        (
            "nothing usable: empty card",
            json!({"name": "x"}),
            Speaks::all(),
            Err(vec!["the card offers no interface"]),
        ),
        (
            "nothing usable: ftp url",
            json!({"supportedInterfaces": [iface("ftp://a/x", "JSONRPC", "1.0")]}),
            Speaks::all(),
            Err(vec!["unusable url: scheme \"ftp\" is not http or https"]),
        ),
    ]
}

/// The outcome of the cases that change when the client does not speak gRPC (built without the
/// `grpc` feature, `Speaks::all()` has no gRPC): the gRPC entry is passed over as not spoken.
fn without_grpc(name: &str) -> Option<Expected> {
    use Binding::*;
    use Version::*;
    match name {
        "gRPC first is taken (host:port is plaintext HTTP/2)" => {
            Some(Ok(("http://a/rest", HttpJson, V1, None)))
        }
        "nothing usable: gRPC 0.3 only" => Some(Err(vec![
            "no usable interface",
            "supportedInterfaces[0]: GRPC 0.3 at \"a:443\" -> binding \"GRPC\" is not spoken",
        ])),
        _ => None,
    }
}

#[test]
fn selection_table() {
    let mut failures = Vec::new();
    for (name, json, speaks, expected) in cases() {
        let expected = match without_grpc(name) {
            Some(other) if !cfg!(feature = "grpc") => other,
            _ => expected,
        };
        let got = select(&card(json), &speaks);
        match (&got, &expected) {
            (Ok(sel), Ok((url, binding, version, tenant))) => {
                if sel.url.as_str() != *url
                    || &sel.binding != binding
                    || sel.version != *version
                    || sel.tenant.as_deref() != *tenant
                {
                    failures.push(format!("{name}: got {sel:?}"));
                }
            }
            (Err(err), Err(needles)) => {
                let text = err.to_string();
                for needle in needles {
                    if !text.contains(needle) {
                        failures.push(format!("{name}: error lacks {needle:?}:\n{text}"));
                    }
                }
            }
            (got, _) => failures.push(format!("{name}: got {got:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_lists_every_offer() {
    let c = card(json!({"supportedInterfaces": [
        iface("a:1", "GRPC", "0.3"),
        iface("a:2", "GRPC", "0.3"),
        iface("a:3", "urn:custom", "1.0"),
    ]}));
    let err = select(&c, &Speaks::all()).unwrap_err();
    assert_eq!(err.passed_over.len(), 3);
    assert_eq!(err.to_string().lines().count(), 4);
}

#[test]
fn typed_offers_keep_declared_values() {
    let c = card(json!({"supportedInterfaces": [
        {"url": "http://a/x", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "t"},
    ]}));
    let sel = select(&c, &Speaks::all()).unwrap();
    let offer = sel.offer.unwrap();
    assert_eq!(offer.source, "supportedInterfaces[0]");
    assert_eq!(offer.tenant.as_deref(), Some("t"));
}
