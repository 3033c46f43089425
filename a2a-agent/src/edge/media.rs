//! Media types at the HTTP edge: the request's `Content-Type` and the answer's content type.

use a2a_types::version::{APPLICATION_A2A_JSON, APPLICATION_JSON, is_json_media_type};

/// A request body's `Content-Type`: `Ok` for `application/json` and `application/a2a+json`
/// (any parameters); `Err(None)` when there is none, `Err(Some(ct))` for any other type. What a
/// missing type means is the binding's choice (the agent accepts it, the gateway refuses it).
pub fn check_content_type(headers: &http::HeaderMap) -> Result<(), Option<String>> {
    match headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("?"))
    {
        None => Err(None),
        Some(ct) if is_json_media_type(ct) => Ok(()),
        Some(ct) => Err(Some(ct.to_owned())),
    }
}

/// The `Accept` value an answer refusing a media type carries.
pub const ACCEPTED_TYPES: &str = "application/json, application/a2a+json";

/// True when the caller's `Accept` lists `application/a2a+json` and neither `application/json`
/// nor a wildcard that covers it.
pub fn accepts_only_a2a_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(|a| {
            let types: Vec<&str> = a
                .split(',')
                .map(|t| t.split(';').next().unwrap_or("").trim())
                .collect();
            types.contains(&APPLICATION_A2A_JSON)
                && !types
                    .iter()
                    .any(|t| *t == APPLICATION_JSON || *t == "*/*" || *t == "application/*")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        let mut h = http::HeaderMap::new();
        assert_eq!(check_content_type(&h), Err(None));
        h.insert(
            "content-type",
            "Application/JSON; charset=utf-8".parse().unwrap(),
        );
        assert_eq!(check_content_type(&h), Ok(()));
        h.insert("content-type", "text/plain".parse().unwrap());
        assert_eq!(check_content_type(&h), Err(Some("text/plain".into())));
        h.insert("accept", "application/a2a+json".parse().unwrap());
        assert!(accepts_only_a2a_json(&h));
        h.insert("accept", "application/a2a+json, */*".parse().unwrap());
        assert!(!accepts_only_a2a_json(&h));
    }
}
