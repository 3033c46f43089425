//! Webhook secrets in push configs: a caller is told that a token or credentials are set,
//! never their value (issue 39). Both versions' forms: 1.0 `TaskPushNotificationConfig`
//! (`token`, `authentication.credentials`) and 0.3 `TaskPushNotificationConfig` (the same
//! members under `pushNotificationConfig`), alone, in a list, or under `configs`.

use serde_json::Value;

/// What a set token or credentials value reads as in an answer: a string, so the config stays
/// valid under both versions' schemas (an unset one stays absent).
pub const REDACTED: &str = "[REDACTED]";

/// Replaces every push config's `token` and `authentication.credentials` in `v` (an answer
/// of a push config operation, or a send's `configuration`) with [`REDACTED`].
pub fn hide_push_secrets(v: &mut Value) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(hide_push_secrets),
        Value::Object(o) => {
            if let Some(t) = o.get_mut("token")
                && t.as_str().is_some_and(|s| !s.is_empty())
            {
                *t = Value::String(REDACTED.into());
            }
            if let Some(c) = o
                .get_mut("authentication")
                .and_then(Value::as_object_mut)
                .and_then(|a| a.get_mut("credentials"))
                && c.as_str().is_some_and(|s| !s.is_empty())
            {
                *c = Value::String(REDACTED.into());
            }
            for (k, x) in o.iter_mut() {
                if k != "authentication" {
                    hide_push_secrets(x);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_versions_and_lists() {
        let mut v1 = json!({"configs": [{"id": "c", "taskId": "t", "url": "https://x",
            "token": "tok", "authentication": {"scheme": "Bearer", "credentials": "cred"}}],
            "nextPageToken": "n"});
        hide_push_secrets(&mut v1);
        assert_eq!(v1["configs"][0]["token"], REDACTED);
        assert_eq!(v1["configs"][0]["authentication"]["credentials"], REDACTED);
        assert_eq!(v1["configs"][0]["authentication"]["scheme"], "Bearer");
        assert_eq!(v1["nextPageToken"], "n");
        let mut v03 = json!([{"taskId": "t", "pushNotificationConfig": {"url": "https://x",
            "token": "tok", "authentication": {"schemes": ["Basic"], "credentials": "c"}}}]);
        hide_push_secrets(&mut v03);
        let c = &v03[0]["pushNotificationConfig"];
        assert_eq!(c["token"], REDACTED);
        assert_eq!(c["authentication"]["credentials"], REDACTED);
        let mut unset = json!({"url": "https://x"});
        hide_push_secrets(&mut unset);
        assert_eq!(unset, json!({"url": "https://x"}));
    }
}
