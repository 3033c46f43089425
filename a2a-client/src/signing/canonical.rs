//! The bytes an Agent Card signature covers, per card version.
//!
//! A 1.0 card (S1 §8.4.1): `signatures` removed, fields at their default removed unless the
//! proto marks them REQUIRED or `optional` (the presence rules of S1 §5.7, from the table
//! below), then RFC 8785 (JCS). The official a2a-sdk 1.x also removes every empty string, list
//! and object, REQUIRED or not (its `_clean_empty`); that second form is accepted and signed too
//! when it differs, so both kinds of verifier accept a card.
//!
//! A 0.3 card: the 0.3 specification gives the `signatures` member (S0 §5.5.6) but no
//! canonical form. The forms in use are the official a2a-sdk 0.3's (`canonicalize_agent_card`:
//! model defaults, `null`s and empty values removed, unknown members dropped by its model, keys
//! sorted, ASCII-only JSON) and JCS over the card with `null`s and empty values removed.

use serde_json::{Map, Value};

/// One way to turn a card into the bytes its signature covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// 1.0: presence rules, then JCS (the specification's form).
    V1Spec,
    /// 1.0: presence rules, empty values removed, then JCS (the a2a-sdk 1.x form).
    V1Sdk,
    /// 0.3: the a2a-sdk 0.3 form (defaults, nulls and empties removed, sorted ASCII JSON).
    V03Sdk,
    /// 0.3: nulls and empties removed, then JCS.
    V03Jcs,
}

/// Which message of the 1.0 card a JSON object is, for the presence rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    Card,
    Interface,
    Provider,
    Capabilities,
    Extension,
    Skill,
    Scheme,
    ApiKey,
    HttpAuth,
    OAuth2,
    Oidc,
    Mtls,
    Flows,
    AuthCode,
    ClientCred,
    Implicit,
    Password,
    DeviceCode,
    Requirement,
    StringList,
}

/// What a member of a message holds.
enum Child {
    /// A plain value (scalar or list of scalars).
    Plain,
    /// A message (has presence: kept even when empty).
    Msg(Msg),
    /// A list of messages.
    List(Msg),
    /// A map of messages (by key).
    Map(Msg),
    /// A map of scalars, or a `google.protobuf.Struct` (kept as written).
    Opaque,
}

/// Members kept at their default value: REQUIRED and `optional` fields.
fn kept(m: Msg) -> &'static [&'static str] {
    match m {
        Msg::Card => &[
            "name",
            "description",
            "supportedInterfaces",
            "version",
            "documentationUrl",
            "capabilities",
            "defaultInputModes",
            "defaultOutputModes",
            "skills",
            "iconUrl",
        ],
        Msg::Interface => &["url", "protocolBinding", "protocolVersion"],
        Msg::Provider => &["url", "organization"],
        Msg::Capabilities => &["streaming", "pushNotifications", "extendedAgentCard"],
        Msg::Skill => &["id", "name", "description", "tags"],
        Msg::ApiKey => &["location", "name"],
        Msg::HttpAuth => &["scheme"],
        Msg::OAuth2 => &["flows"],
        Msg::Oidc => &["openIdConnectUrl"],
        Msg::AuthCode => &["authorizationUrl", "tokenUrl", "scopes"],
        Msg::ClientCred => &["tokenUrl", "scopes"],
        Msg::DeviceCode => &["deviceAuthorizationUrl", "tokenUrl", "scopes"],
        _ => &[],
    }
}

fn child(m: Msg, key: &str) -> Child {
    match (m, key) {
        (Msg::Card, "supportedInterfaces") => Child::List(Msg::Interface),
        (Msg::Card, "provider") => Child::Msg(Msg::Provider),
        (Msg::Card, "capabilities") => Child::Msg(Msg::Capabilities),
        (Msg::Card, "securitySchemes") => Child::Map(Msg::Scheme),
        (Msg::Card | Msg::Skill, "securityRequirements") => Child::List(Msg::Requirement),
        (Msg::Card, "skills") => Child::List(Msg::Skill),
        (Msg::Capabilities, "extensions") => Child::List(Msg::Extension),
        (Msg::Extension, "params") => Child::Opaque,
        (Msg::Scheme, "apiKeySecurityScheme") => Child::Msg(Msg::ApiKey),
        (Msg::Scheme, "httpAuthSecurityScheme") => Child::Msg(Msg::HttpAuth),
        (Msg::Scheme, "oauth2SecurityScheme") => Child::Msg(Msg::OAuth2),
        (Msg::Scheme, "openIdConnectSecurityScheme") => Child::Msg(Msg::Oidc),
        (Msg::Scheme, "mtlsSecurityScheme") => Child::Msg(Msg::Mtls),
        (Msg::OAuth2, "flows") => Child::Msg(Msg::Flows),
        (Msg::Flows, "authorizationCode") => Child::Msg(Msg::AuthCode),
        (Msg::Flows, "clientCredentials") => Child::Msg(Msg::ClientCred),
        (Msg::Flows, "implicit") => Child::Msg(Msg::Implicit),
        (Msg::Flows, "password") => Child::Msg(Msg::Password),
        (Msg::Flows, "deviceCode") => Child::Msg(Msg::DeviceCode),
        (Msg::Requirement, "schemes") => Child::Map(Msg::StringList),
        (_, "scopes") => Child::Opaque,
        _ => Child::Plain,
    }
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

/// The presence rules over one message.
fn presence(m: Msg, obj: &Map<String, Value>) -> Map<String, Value> {
    let keep = kept(m);
    let mut out = Map::new();
    for (k, v) in obj {
        if v.is_null() {
            continue;
        }
        let v = match (child(m, k), v) {
            (Child::Msg(c), Value::Object(o)) => Value::Object(presence(c, o)),
            (Child::List(c), Value::Array(a)) => Value::Array(
                a.iter()
                    .map(|e| match e {
                        Value::Object(o) => Value::Object(presence(c, o)),
                        other => other.clone(),
                    })
                    .collect(),
            ),
            (Child::Map(c), Value::Object(o)) => Value::Object(
                o.iter()
                    .map(|(mk, mv)| {
                        let mv = match mv {
                            Value::Object(x) => Value::Object(presence(c, x)),
                            other => other.clone(),
                        };
                        (mk.clone(), mv)
                    })
                    .collect(),
            ),
            (_, other) => other.clone(),
        };
        let empty_map = matches!(child(m, k), Child::Map(_) | Child::Opaque)
            && v.as_object().is_some_and(Map::is_empty);
        if (is_default(&v) || empty_map) && !keep.contains(&k.as_str()) {
            continue;
        }
        out.insert(k.clone(), v);
    }
    out
}

/// Removes empty strings, lists and objects, recursively (`None` when `v` itself is empty).
fn clean_empty(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(a) => {
            let out: Vec<Value> = a.iter().filter_map(clean_empty).collect();
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Value::Object(o) => {
            let out: Map<String, Value> = o
                .iter()
                .filter_map(|(k, v)| clean_empty(v).map(|v| (k.clone(), v)))
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        other => Some(other.clone()),
    }
}

/// The card without its `signatures` member.
fn unsigned(card: &Value) -> Map<String, Value> {
    let mut m = card.as_object().cloned().unwrap_or_default();
    m.remove("signatures");
    m
}

/// The 0.3 security scheme `type` values, which the a2a-sdk 0.3 model treats as defaults.
const SCHEME_TYPES_03: &[&str] = &["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"];

/// The 0.3 members the a2a-sdk 0.3 model knows (others are dropped by it).
const CARD_MEMBERS_03: &[&str] = &[
    "additionalInterfaces",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "description",
    "documentationUrl",
    "iconUrl",
    "name",
    "preferredTransport",
    "protocolVersion",
    "provider",
    "security",
    "securitySchemes",
    "skills",
    "supportsAuthenticatedExtendedCard",
    "url",
    "version",
];

fn sdk03_model(card: &Value) -> Value {
    let mut m = unsigned(card);
    m.retain(|k, _| CARD_MEMBERS_03.contains(&k.as_str()));
    if m.get("preferredTransport").and_then(Value::as_str) == Some("JSONRPC") {
        m.remove("preferredTransport");
    }
    if m.get("protocolVersion").and_then(Value::as_str) == Some("0.3.0") {
        m.remove("protocolVersion");
    }
    if let Some(Value::Object(schemes)) = m.get_mut("securitySchemes") {
        for s in schemes.values_mut() {
            if let Some(o) = s.as_object_mut()
                && o.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| SCHEME_TYPES_03.contains(&t))
            {
                o.remove("type");
            }
        }
    }
    Value::Object(m)
}

/// Python's `json.dumps(v, separators=(',', ':'), sort_keys=True)` (ASCII only).
fn python_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort_by(|a, b| a.chars().cmp(b.chars()));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                python_str(k, out);
                out.push(':');
                python_json(&o[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                python_json(e, out);
            }
            out.push(']');
        }
        Value::String(s) => python_str(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn python_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

fn jcs(v: &Value) -> Result<Vec<u8>, String> {
    serde_json_canonicalizer::to_vec(v).map_err(|e| format!("cannot canonicalize the card: {e}"))
}

/// The bytes `form` makes of `card` (any `signatures` member is left out).
pub fn payload(card: &Value, form: Form) -> Result<Vec<u8>, String> {
    if !card.is_object() {
        return Err("the card is not a JSON object".to_owned());
    }
    match form {
        Form::V1Spec => jcs(&Value::Object(presence(Msg::Card, &unsigned(card)))),
        Form::V1Sdk => {
            let p = Value::Object(presence(Msg::Card, &unsigned(card)));
            jcs(&clean_empty(&p).unwrap_or_else(|| Value::Object(Map::new())))
        }
        Form::V03Sdk => {
            let c = clean_empty(&sdk03_model(card)).unwrap_or_else(|| Value::Object(Map::new()));
            let mut s = String::new();
            python_json(&c, &mut s);
            Ok(s.into_bytes())
        }
        Form::V03Jcs => {
            let c = clean_empty(&Value::Object(unsigned(card)))
                .unwrap_or_else(|| Value::Object(Map::new()));
            jcs(&c)
        }
    }
}

/// The forms of a card in `v1` (1.0) or 0.3, the preferred one first.
pub fn forms(v1: bool) -> &'static [Form] {
    if v1 {
        &[Form::V1Spec, Form::V1Sdk]
    } else {
        &[Form::V03Sdk, Form::V03Jcs]
    }
}

/// The distinct payloads of a card in its version's forms, the preferred one first.
pub fn payloads(card: &Value, v1: bool) -> Result<Vec<Vec<u8>>, String> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for f in forms(v1) {
        let p = payload(card, *f)?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_specification_example() {
        let card = json!({"name": "Example Agent", "description": "",
            "capabilities": {"streaming": false, "pushNotifications": false, "extensions": []},
            "skills": [], "signatures": [{"protected": "x", "signature": "y"}]});
        assert_eq!(
            String::from_utf8(payload(&card, Form::V1Spec).unwrap()).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
        assert_eq!(
            String::from_utf8(payload(&card, Form::V1Sdk).unwrap()).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}"#
        );
    }

    #[test]
    fn presence_of_nested_members() {
        let card = json!({"name": "a", "securitySchemes": {"k": {"httpAuthSecurityScheme":
            {"scheme": "bearer", "description": ""}}},
            "securityRequirements": [{"schemes": {"k": {"list": []}}}],
            "capabilities": {"extensions": [{"uri": "u", "required": false, "params": {"a": ""}}]}});
        let p = String::from_utf8(payload(&card, Form::V1Spec).unwrap()).unwrap();
        assert_eq!(
            p,
            r#"{"capabilities":{"extensions":[{"params":{"a":""},"uri":"u"}]},"name":"a","securityRequirements":[{"schemes":{"k":{}}}],"securitySchemes":{"k":{"httpAuthSecurityScheme":{"scheme":"bearer"}}}}"#
        );
    }

    #[test]
    fn sdk03_form_is_python_json() {
        let card = json!({"name": "é", "url": "u", "preferredTransport": "JSONRPC",
            "protocolVersion": "0.3.0", "x-extra": 1, "skills": [],
            "securitySchemes": {"k": {"type": "http", "scheme": "bearer"}},
            "capabilities": {"streaming": false}});
        assert_eq!(
            String::from_utf8(payload(&card, Form::V03Sdk).unwrap()).unwrap(),
            r#"{"capabilities":{"streaming":false},"name":"\u00e9","securitySchemes":{"k":{"scheme":"bearer"}},"url":"u"}"#
        );
        assert_eq!(
            String::from_utf8(payload(&card, Form::V03Jcs).unwrap()).unwrap(),
            r#"{"capabilities":{"streaming":false},"name":"é","preferredTransport":"JSONRPC","protocolVersion":"0.3.0","securitySchemes":{"k":{"scheme":"bearer","type":"http"}},"url":"u","x-extra":1}"#
        );
    }
}
