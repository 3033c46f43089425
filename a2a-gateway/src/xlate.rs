//! Version translation at the gateway's edge (0.3 <-> 1.0), on JSON value trees.
//!
//! This is the gateway's own translation table until `a2a-translate` is usable from here (it did
//! not compile in the founding session when this was written); it covers what the gateway
//! proxies: messages and parts, tasks, stream events, send configuration, task ids and push
//! configuration, and Agent Cards. Anything the target version cannot carry is refused with its
//! JSON path, never dropped.

use serde_json::{Map, Value, json};

use crate::errors::{Refusal, Version};
use crate::ops::Operation;

/// Why an answer could not be translated.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerError {
    /// The answer does not follow its version (-32006 `a2a_upstream_invalid_response`).
    Invalid(String),
    /// It cannot be carried in the caller's version (`a2a_upstream_untranslatable`).
    Untranslatable(String),
}

type R<T> = Result<T, String>;

const STATES: [(&str, &str); 9] = [
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("canceled", "TASK_STATE_CANCELED"),
    ("failed", "TASK_STATE_FAILED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
    ("unknown", "TASK_STATE_UNSPECIFIED"),
];

fn obj<'a>(v: &'a Value, path: &str) -> R<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| format!("{path}: must be an object"))
}

fn check_members(m: &Map<String, Value>, allowed: &[&str], path: &str) -> R<()> {
    for k in m.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(format!("{path}: unknown member {k}"));
        }
    }
    Ok(())
}

/// Validates the parts and role of a message in its own version (-32602 with the path).
pub fn validate_message(msg: &Value, version: Version, path: &str) -> R<()> {
    let m = obj(msg, path)?;
    let common = [
        "messageId",
        "contextId",
        "taskId",
        "referenceTaskIds",
        "extensions",
        "metadata",
        "role",
        "parts",
    ];
    let mut allowed: Vec<&str> = common.to_vec();
    if version == Version::V03 {
        allowed.push("kind");
    }
    check_members(m, &allowed, path)?;
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let ok = match version {
        Version::V03 => matches!(role, "user" | "agent"),
        Version::V10 => matches!(role, "ROLE_USER" | "ROLE_AGENT"),
    };
    if !ok {
        return Err(format!("{path}.role: invalid value {role:?}"));
    }
    let parts = m
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{path}.parts: must be a list"))?;
    for (i, p) in parts.iter().enumerate() {
        let pp = format!("{path}.parts[{i}]");
        let pm = obj(p, &pp)?;
        match version {
            Version::V03 => {
                let kind = pm.get("kind").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "text" => check_members(pm, &["kind", "text", "metadata"], &pp)?,
                    "file" => check_members(pm, &["kind", "file", "metadata"], &pp)?,
                    "data" => check_members(pm, &["kind", "data", "metadata"], &pp)?,
                    _ => return Err(format!("{pp}.kind: invalid value {kind:?}")),
                }
            }
            Version::V10 => {
                check_members(
                    pm,
                    &[
                        "text",
                        "raw",
                        "url",
                        "data",
                        "mediaType",
                        "filename",
                        "metadata",
                    ],
                    &pp,
                )?;
                let n = ["text", "raw", "url", "data"]
                    .iter()
                    .filter(|k| pm.contains_key(**k))
                    .count();
                if n != 1 {
                    return Err(format!(
                        "{pp}: exactly one of text, raw, url, data is required"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn part_to_v1(p: &Value, path: &str) -> R<Value> {
    let pm = obj(p, path)?;
    let mut out = Map::new();
    match pm.get("kind").and_then(Value::as_str) {
        Some("text") => {
            out.insert("text".into(), pm.get("text").cloned().unwrap_or(json!("")));
        }
        Some("data") => {
            out.insert("data".into(), pm.get("data").cloned().unwrap_or(json!({})));
        }
        Some("file") => {
            let f = obj(
                pm.get("file").unwrap_or(&Value::Null),
                &format!("{path}.file"),
            )?;
            if let Some(b) = f.get("bytes") {
                out.insert("raw".into(), b.clone());
            } else if let Some(u) = f.get("uri") {
                out.insert("url".into(), u.clone());
            } else {
                return Err(format!("{path}.file: bytes or uri is required"));
            }
            if let Some(mt) = f.get("mimeType") {
                out.insert("mediaType".into(), mt.clone());
            }
            if let Some(n) = f.get("name") {
                out.insert("filename".into(), n.clone());
            }
        }
        other => return Err(format!("{path}.kind: invalid value {other:?}")),
    }
    if let Some(md) = pm.get("metadata") {
        out.insert("metadata".into(), md.clone());
    }
    Ok(Value::Object(out))
}

fn part_to_v03(p: &Value, path: &str) -> R<Value> {
    let pm = obj(p, path)?;
    let mut out = Map::new();
    if let Some(t) = pm.get("text") {
        for k in ["mediaType", "filename"] {
            if pm.contains_key(k) {
                return Err(format!("{path}.{k}: A2A 0.3 has no {k} on a text part"));
            }
        }
        out.insert("kind".into(), json!("text"));
        out.insert("text".into(), t.clone());
    } else if let Some(d) = pm.get("data") {
        for k in ["mediaType", "filename"] {
            if pm.contains_key(k) {
                return Err(format!("{path}.{k}: A2A 0.3 has no {k} on a data part"));
            }
        }
        if !d.is_object() {
            return Err(format!("{path}.data: A2A 0.3 data parts must be objects"));
        }
        out.insert("kind".into(), json!("data"));
        out.insert("data".into(), d.clone());
    } else {
        let mut f = Map::new();
        if let Some(r) = pm.get("raw") {
            f.insert("bytes".into(), r.clone());
        } else if let Some(u) = pm.get("url") {
            f.insert("uri".into(), u.clone());
        } else {
            return Err(format!(
                "{path}: exactly one of text, raw, url, data is required"
            ));
        }
        if let Some(mt) = pm.get("mediaType") {
            f.insert("mimeType".into(), mt.clone());
        }
        if let Some(n) = pm.get("filename") {
            f.insert("name".into(), n.clone());
        }
        out.insert("kind".into(), json!("file"));
        out.insert("file".into(), Value::Object(f));
    }
    if let Some(md) = pm.get("metadata") {
        out.insert("metadata".into(), md.clone());
    }
    Ok(Value::Object(out))
}

fn parts(list: Option<&Value>, to: Version, path: &str) -> R<Value> {
    let Some(list) = list else {
        return Ok(json!([]));
    };
    let arr = list
        .as_array()
        .ok_or_else(|| format!("{path}: must be a list"))?;
    let mut out = Vec::new();
    for (i, p) in arr.iter().enumerate() {
        let pp = format!("{path}[{i}]");
        out.push(match to {
            Version::V10 => part_to_v1(p, &pp)?,
            Version::V03 => part_to_v03(p, &pp)?,
        });
    }
    Ok(Value::Array(out))
}

/// Translates a message.
pub fn message(m: &Value, to: Version, path: &str) -> R<Value> {
    let mut out = obj(m, path)?.clone();
    let role = out
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let new_role = match (to, role.as_str()) {
        (Version::V10, "user") => "ROLE_USER",
        (Version::V10, "agent") => "ROLE_AGENT",
        (Version::V03, "ROLE_USER") => "user",
        (Version::V03, "ROLE_AGENT") => "agent",
        _ => return Err(format!("{path}.role: invalid value {role:?}")),
    };
    out.insert("role".into(), json!(new_role));
    let p = parts(out.get("parts"), to, &format!("{path}.parts"))?;
    out.insert("parts".into(), p);
    match to {
        Version::V10 => {
            out.remove("kind");
        }
        Version::V03 => {
            out.insert("kind".into(), json!("message"));
        }
    }
    Ok(Value::Object(out))
}

fn state(s: &str, to: Version, path: &str) -> R<&'static str> {
    STATES
        .iter()
        .find_map(|(a, b)| match to {
            Version::V10 if *a == s => Some(*b),
            Version::V03 if *b == s => Some(*a),
            _ => None,
        })
        .ok_or_else(|| format!("{path}: invalid task state {s:?}"))
}

fn status(s: &Value, to: Version, path: &str) -> R<Value> {
    let mut out = obj(s, path)?.clone();
    let st = out
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    out.insert(
        "state".into(),
        json!(state(&st, to, &format!("{path}.state"))?),
    );
    if let Some(m) = out.get("message").cloned()
        && !m.is_null()
    {
        out.insert(
            "message".into(),
            message(&m, to, &format!("{path}.message"))?,
        );
    }
    Ok(Value::Object(out))
}

fn artifact(a: &Value, to: Version, path: &str) -> R<Value> {
    let mut out = obj(a, path)?.clone();
    let p = parts(out.get("parts"), to, &format!("{path}.parts"))?;
    out.insert("parts".into(), p);
    Ok(Value::Object(out))
}

/// Translates a task.
pub fn task(t: &Value, to: Version, path: &str) -> R<Value> {
    let mut out = obj(t, path)?.clone();
    if !out.get("id").is_some_and(Value::is_string) {
        return Err(format!("{path}.id: required string"));
    }
    if !out.get("status").is_some_and(Value::is_object) {
        return Err(format!("{path}.status: required object"));
    }
    if let Some(s) = out.get("status").cloned() {
        out.insert("status".into(), status(&s, to, &format!("{path}.status"))?);
    }
    if let Some(Value::Array(arts)) = out.get("artifacts").cloned() {
        let mut v = Vec::new();
        for (i, a) in arts.iter().enumerate() {
            v.push(artifact(a, to, &format!("{path}.artifacts[{i}]"))?);
        }
        out.insert("artifacts".into(), Value::Array(v));
    }
    if let Some(Value::Array(h)) = out.get("history").cloned() {
        let mut v = Vec::new();
        for (i, m) in h.iter().enumerate() {
            v.push(message(m, to, &format!("{path}.history[{i}]"))?);
        }
        out.insert("history".into(), Value::Array(v));
    }
    match to {
        Version::V10 => {
            out.remove("kind");
        }
        Version::V03 => {
            out.insert("kind".into(), json!("task"));
        }
    }
    Ok(Value::Object(out))
}

/// Checks a task in its own version: id, status and a state of that version.
pub fn validate_task(t: &Value, v: Version, path: &str) -> R<()> {
    let m = obj(t, path)?;
    if !m.get("id").is_some_and(Value::is_string) {
        return Err(format!("{path}.id: required string"));
    }
    let st = m
        .get("status")
        .and_then(|s| s.get("state"))
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{path}.status.state: required"))?;
    let known = STATES.iter().any(|(a, b)| match v {
        Version::V03 => *a == st,
        Version::V10 => *b == st,
    });
    if !known {
        return Err(format!("{path}.status.state: invalid value {st:?}"));
    }
    Ok(())
}

fn is_final(state10: &str) -> bool {
    matches!(
        state10,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_REJECTED"
            | "TASK_STATE_INPUT_REQUIRED"
            | "TASK_STATE_AUTH_REQUIRED"
    )
}

/// Translates a stream event (or a send result, which has the same shapes minus updates).
pub fn event(ev: &Value, from: Version, to: Version) -> Result<Value, AnswerError> {
    let inv = AnswerError::Invalid;
    match from {
        Version::V03 => {
            let kind = ev.get("kind").and_then(Value::as_str).unwrap_or("");
            let v1 = match kind {
                "task" => json!({"task": task(ev, Version::V10, "result").map_err(inv)?}),
                "message" => json!({"message": message(ev, Version::V10, "result").map_err(inv)?}),
                "status-update" => {
                    let mut m = obj(ev, "result").map_err(inv)?.clone();
                    m.remove("kind");
                    m.remove("final");
                    let s = m.get("status").cloned().unwrap_or(Value::Null);
                    m.insert(
                        "status".into(),
                        status(&s, Version::V10, "result.status").map_err(inv)?,
                    );
                    json!({"statusUpdate": m})
                }
                "artifact-update" => {
                    let mut m = obj(ev, "result").map_err(inv)?.clone();
                    m.remove("kind");
                    let a = m.get("artifact").cloned().unwrap_or(Value::Null);
                    m.insert(
                        "artifact".into(),
                        artifact(&a, Version::V10, "result.artifact").map_err(inv)?,
                    );
                    json!({"artifactUpdate": m})
                }
                other => return Err(inv(format!("result.kind: invalid value {other:?}"))),
            };
            if to == Version::V10 {
                Ok(v1)
            } else {
                Ok(ev.clone())
            }
        }
        Version::V10 => {
            if to == Version::V10 {
                return Ok(ev.clone());
            }
            let m = obj(ev, "result").map_err(inv)?;
            if m.len() != 1 {
                return Err(inv("result: exactly one of task, message, statusUpdate, artifactUpdate is required".into()));
            }
            let (k, v) = m.iter().next().ok_or_else(|| inv("result: empty".into()))?;
            let ut = AnswerError::Untranslatable;
            match k.as_str() {
                "task" => task(v, Version::V03, "result.task").map_err(ut),
                "message" => message(v, Version::V03, "result.message").map_err(ut),
                "statusUpdate" => {
                    let mut o = obj(v, "result.statusUpdate").map_err(inv)?.clone();
                    let s = o.get("status").cloned().unwrap_or(Value::Null);
                    let st10 = s
                        .get("state")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    o.insert(
                        "status".into(),
                        status(&s, Version::V03, "result.statusUpdate.status").map_err(ut)?,
                    );
                    o.insert("kind".into(), json!("status-update"));
                    o.insert("final".into(), json!(is_final(&st10)));
                    Ok(Value::Object(o))
                }
                "artifactUpdate" => {
                    let mut o = obj(v, "result.artifactUpdate").map_err(inv)?.clone();
                    let a = o.get("artifact").cloned().unwrap_or(Value::Null);
                    o.insert(
                        "artifact".into(),
                        artifact(&a, Version::V03, "result.artifactUpdate.artifact").map_err(ut)?,
                    );
                    o.insert("kind".into(), json!("artifact-update"));
                    Ok(Value::Object(o))
                }
                other => Err(inv(format!("result: unknown member {other}"))),
            }
        }
    }
}

fn push_cfg_03_to_v1(task_id: Option<&Value>, cfg: &Value, path: &str) -> R<Map<String, Value>> {
    let c = obj(cfg, path)?;
    let mut out = Map::new();
    if let Some(t) = task_id {
        out.insert("taskId".into(), t.clone());
    }
    for k in ["id", "url", "token"] {
        if let Some(v) = c.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if let Some(a) = c.get("authentication") {
        let schemes = a
            .get("schemes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if schemes.len() > 1 {
            return Err(format!(
                "{path}.authentication.schemes: A2A 1.0 carries a single scheme"
            ));
        }
        let mut am = Map::new();
        if let Some(s) = schemes.first() {
            am.insert("scheme".into(), s.clone());
        }
        if let Some(cr) = a.get("credentials") {
            am.insert("credentials".into(), cr.clone());
        }
        out.insert("authentication".into(), Value::Object(am));
    }
    Ok(out)
}

fn push_cfg_v1_to_03(cfg: &Value, path: &str) -> R<Value> {
    let c = obj(cfg, path)?;
    let mut inner = Map::new();
    for k in ["id", "url", "token"] {
        if let Some(v) = c.get(k) {
            inner.insert(k.into(), v.clone());
        }
    }
    if let Some(a) = c.get("authentication") {
        let mut am = Map::new();
        am.insert(
            "schemes".into(),
            json!(a.get("scheme").map(|s| vec![s.clone()]).unwrap_or_default()),
        );
        if let Some(cr) = a.get("credentials") {
            am.insert("credentials".into(), cr.clone());
        }
        inner.insert("authentication".into(), Value::Object(am));
    }
    Ok(
        json!({"taskId": c.get("taskId").cloned().unwrap_or(Value::Null), "pushNotificationConfig": inner}),
    )
}

fn reject_extra(m: &Map<String, Value>, allowed: &[&str], path: &str) -> R<()> {
    check_members(m, allowed, path)
}

/// Translates request `params` of `op` from the caller's version to the peer's.
/// Errors: -32602 for what the caller's version does not define, -32004 for what the peer's
/// version cannot carry.
pub fn request(
    op: Operation,
    from: Version,
    to: Version,
    params: &Value,
) -> Result<Value, Refusal> {
    let p = params
        .as_object()
        .ok_or_else(|| Refusal::invalid_params("params: must be an object"))?;
    // Validation in the caller's own version.
    if matches!(op, Operation::SendMessage | Operation::SendStreamingMessage) {
        let m = p
            .get("message")
            .ok_or_else(|| Refusal::invalid_params("params.message: required"))?;
        validate_message(m, from, "params.message").map_err(|e| Refusal::invalid_params(&e))?;
    }
    if from == to {
        return Ok(params.clone());
    }
    let un = |e: String| Refusal::untranslatable(&e);
    let bad = |e: String| Refusal::invalid_params(&e);
    let mut out = Map::new();
    match (op, to) {
        (Operation::ListTasks, Version::V03) => {
            return Err(Refusal::untranslatable(
                "ListTasks: A2A 0.3 has no JSON-RPC method for it",
            ));
        }
        (Operation::SendMessage | Operation::SendStreamingMessage, _) => {
            let m = message(&p["message"], to, "params.message").map_err(un)?;
            out.insert("message".into(), m);
            if let Some(md) = p.get("metadata") {
                out.insert("metadata".into(), md.clone());
            }
            if let Some(t) = p.get("tenant")
                && to == Version::V03
            {
                let _ = t; // the tenant belongs to the gateway's own interface; not forwarded
            }
            if let Some(cfg) = p.get("configuration") {
                let c = obj(cfg, "params.configuration").map_err(bad)?;
                let mut oc = Map::new();
                for k in ["acceptedOutputModes", "historyLength"] {
                    if let Some(v) = c.get(k) {
                        oc.insert(k.into(), v.clone());
                    }
                }
                match to {
                    Version::V10 => {
                        reject_extra(
                            c,
                            &[
                                "acceptedOutputModes",
                                "historyLength",
                                "blocking",
                                "pushNotificationConfig",
                            ],
                            "params.configuration",
                        )
                        .map_err(bad)?;
                        if let Some(b) = c.get("blocking").and_then(Value::as_bool) {
                            oc.insert("returnImmediately".into(), json!(!b));
                        }
                        if let Some(pc) = c.get("pushNotificationConfig") {
                            let v = push_cfg_03_to_v1(
                                None,
                                pc,
                                "params.configuration.pushNotificationConfig",
                            )
                            .map_err(un)?;
                            oc.insert("taskPushNotificationConfig".into(), Value::Object(v));
                        }
                    }
                    Version::V03 => {
                        reject_extra(
                            c,
                            &[
                                "acceptedOutputModes",
                                "historyLength",
                                "returnImmediately",
                                "taskPushNotificationConfig",
                            ],
                            "params.configuration",
                        )
                        .map_err(bad)?;
                        if let Some(b) = c.get("returnImmediately").and_then(Value::as_bool) {
                            oc.insert("blocking".into(), json!(!b));
                        }
                        if let Some(pc) = c.get("taskPushNotificationConfig") {
                            let v = push_cfg_v1_to_03(
                                pc,
                                "params.configuration.taskPushNotificationConfig",
                            )
                            .map_err(un)?;
                            oc.insert(
                                "pushNotificationConfig".into(),
                                v["pushNotificationConfig"].clone(),
                            );
                        }
                    }
                }
                out.insert("configuration".into(), Value::Object(oc));
            }
        }
        (Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask, _) => {
            for (k, v) in p {
                match k.as_str() {
                    "id" | "historyLength" => {
                        out.insert(k.clone(), v.clone());
                    }
                    "metadata" if op == Operation::CancelTask => {
                        out.insert(k.clone(), v.clone());
                    }
                    "metadata" if to == Version::V10 => {
                        return Err(un(format!(
                            "params.metadata: A2A 1.0 {} has no metadata",
                            op.name_10()
                        )));
                    }
                    "tenant" if to == Version::V03 => {}
                    other => return Err(bad(format!("params: unknown member {other}"))),
                }
            }
        }
        (Operation::SetPushConfig, Version::V10) => {
            let cfg = p
                .get("pushNotificationConfig")
                .ok_or_else(|| bad("params.pushNotificationConfig: required".into()))?;
            out = push_cfg_03_to_v1(p.get("taskId"), cfg, "params.pushNotificationConfig")
                .map_err(un)?;
        }
        (Operation::SetPushConfig, Version::V03) => {
            return push_cfg_v1_to_03(params, "params").map_err(un);
        }
        (Operation::GetPushConfig | Operation::DeletePushConfig, Version::V10) => {
            if let Some(t) = p.get("id") {
                out.insert("taskId".into(), t.clone());
            }
            if let Some(c) = p.get("pushNotificationConfigId") {
                out.insert("id".into(), c.clone());
            }
        }
        (Operation::GetPushConfig | Operation::DeletePushConfig, Version::V03) => {
            if let Some(t) = p.get("taskId") {
                out.insert("id".into(), t.clone());
            }
            if let Some(c) = p.get("id") {
                out.insert("pushNotificationConfigId".into(), c.clone());
            }
        }
        (Operation::ListPushConfigs, Version::V10) => {
            if let Some(t) = p.get("id") {
                out.insert("taskId".into(), t.clone());
            }
        }
        (Operation::ListPushConfigs, Version::V03) => {
            if let Some(t) = p.get("taskId") {
                out.insert("id".into(), t.clone());
            }
        }
        (Operation::ListTasks, Version::V10) => return Ok(params.clone()),
    }
    Ok(Value::Object(out))
}

/// Translates a unary result of `op` from the peer's version to the caller's.
pub fn result(
    op: Operation,
    from: Version,
    to: Version,
    res: &Value,
) -> Result<Value, AnswerError> {
    let inv = AnswerError::Invalid;
    let ut = AnswerError::Untranslatable;
    match op {
        Operation::SendMessage => {
            if from == to {
                check_send_result(res, from).map_err(inv)?;
                return Ok(res.clone());
            }
            event(res, from, to)
        }
        Operation::GetTask | Operation::CancelTask => {
            // Read in the peer's own version first: a shape it does not define is unreadable.
            validate_task(res, from, "result").map_err(inv)?;
            if from == to {
                return Ok(res.clone());
            }
            task(res, to, "result").map_err(|e| if from == Version::V03 { inv(e) } else { ut(e) })
        }
        Operation::SetPushConfig | Operation::GetPushConfig => {
            if from == to {
                return Ok(res.clone());
            }
            match to {
                Version::V10 => {
                    let cfg = res
                        .get("pushNotificationConfig")
                        .ok_or_else(|| inv("result.pushNotificationConfig: required".into()))?;
                    push_cfg_03_to_v1(res.get("taskId"), cfg, "result.pushNotificationConfig")
                        .map(Value::Object)
                        .map_err(ut)
                }
                Version::V03 => push_cfg_v1_to_03(res, "result").map_err(ut),
            }
        }
        Operation::ListPushConfigs => {
            if from == to {
                return Ok(res.clone());
            }
            match to {
                Version::V10 => {
                    let arr = res
                        .as_array()
                        .ok_or_else(|| inv("result: must be a list".into()))?;
                    let mut configs = Vec::new();
                    for (i, c) in arr.iter().enumerate() {
                        let path = format!("result[{i}]");
                        let cfg = c.get("pushNotificationConfig").ok_or_else(|| {
                            inv(format!("{path}.pushNotificationConfig: required"))
                        })?;
                        configs.push(Value::Object(
                            push_cfg_03_to_v1(c.get("taskId"), cfg, &path).map_err(ut)?,
                        ));
                    }
                    Ok(json!({"configs": configs, "nextPageToken": ""}))
                }
                Version::V03 => {
                    let arr = res
                        .get("configs")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let mut out = Vec::new();
                    for (i, c) in arr.iter().enumerate() {
                        out.push(
                            push_cfg_v1_to_03(c, &format!("result.configs[{i}]")).map_err(ut)?,
                        );
                    }
                    Ok(Value::Array(out))
                }
            }
        }
        Operation::DeletePushConfig => Ok(match to {
            Version::V03 => Value::Null,
            Version::V10 => json!({}),
        }),
        Operation::ListTasks => Ok(res.clone()),
        Operation::SendStreamingMessage | Operation::SubscribeToTask => event(res, from, to),
    }
}

fn check_send_result(res: &Value, v: Version) -> R<()> {
    let m = obj(res, "result")?;
    match v {
        Version::V10 => {
            if m.len() == 1 && (m.contains_key("task") || m.contains_key("message")) {
                Ok(())
            } else {
                Err("result: exactly one of task, message is required".into())
            }
        }
        Version::V03 => match m.get("kind").and_then(Value::as_str) {
            Some("task" | "message") => Ok(()),
            other => Err(format!("result.kind: invalid value {other:?}")),
        },
    }
}

/// Translates a 0.3 security scheme into its 1.0 shape.
fn scheme_to_v1(s: &Value) -> Option<Value> {
    let t = s.get("type").and_then(Value::as_str)?;
    let desc = s.get("description").cloned();
    let mut inner = Map::new();
    let name = match t {
        "apiKey" => {
            inner.insert(
                "location".into(),
                s.get("in").cloned().unwrap_or(json!("header")),
            );
            inner.insert("name".into(), s.get("name").cloned().unwrap_or(json!("")));
            "apiKeySecurityScheme"
        }
        "http" => {
            inner.insert(
                "scheme".into(),
                s.get("scheme").cloned().unwrap_or(json!("bearer")),
            );
            if let Some(b) = s.get("bearerFormat") {
                inner.insert("bearerFormat".into(), b.clone());
            }
            "httpAuthSecurityScheme"
        }
        "oauth2" => {
            inner.insert("flows".into(), s.get("flows").cloned().unwrap_or(json!({})));
            if let Some(u) = s.get("oauth2MetadataUrl") {
                inner.insert("oauth2MetadataUrl".into(), u.clone());
            }
            "oauth2SecurityScheme"
        }
        "openIdConnect" => {
            inner.insert(
                "openIdConnectUrl".into(),
                s.get("openIdConnectUrl").cloned().unwrap_or(json!("")),
            );
            "openIdConnectSecurityScheme"
        }
        "mutualTLS" => "mtlsSecurityScheme",
        _ => return None,
    };
    if let Some(d) = desc {
        inner.insert("description".into(), d);
    }
    Some(json!({ name: inner }))
}

/// Translates a 1.0 security scheme into its 0.3 shape, or says why it has none.
fn scheme_to_v03(s: &Value) -> Result<Value, String> {
    let m = s.as_object().ok_or("not an object")?;
    let (k, inner) = m.iter().next().ok_or("empty scheme")?;
    let mut out = Map::new();
    match k.as_str() {
        "apiKeySecurityScheme" => {
            out.insert("type".into(), json!("apiKey"));
            out.insert(
                "in".into(),
                inner.get("location").cloned().unwrap_or(json!("header")),
            );
            out.insert(
                "name".into(),
                inner.get("name").cloned().unwrap_or(json!("")),
            );
        }
        "httpAuthSecurityScheme" => {
            out.insert("type".into(), json!("http"));
            out.insert(
                "scheme".into(),
                inner.get("scheme").cloned().unwrap_or(json!("bearer")),
            );
            if let Some(b) = inner.get("bearerFormat") {
                out.insert("bearerFormat".into(), b.clone());
            }
        }
        "oauth2SecurityScheme" => {
            let flows = inner.get("flows").cloned().unwrap_or(json!({}));
            if flows.get("deviceCode").is_some() {
                return Err("the OAuth 2.0 device code flow has no A2A 0.3 form".into());
            }
            if flows
                .get("authorizationCode")
                .and_then(|a| a.get("pkceRequired"))
                .is_some()
            {
                return Err("pkceRequired has no A2A 0.3 form".into());
            }
            out.insert("type".into(), json!("oauth2"));
            out.insert("flows".into(), flows);
            if let Some(u) = inner.get("oauth2MetadataUrl") {
                out.insert("oauth2MetadataUrl".into(), u.clone());
            }
        }
        "openIdConnectSecurityScheme" => {
            out.insert("type".into(), json!("openIdConnect"));
            out.insert(
                "openIdConnectUrl".into(),
                inner.get("openIdConnectUrl").cloned().unwrap_or(json!("")),
            );
        }
        "mtlsSecurityScheme" => {
            out.insert("type".into(), json!("mutualTLS"));
        }
        other => return Err(format!("scheme kind {other} has no A2A 0.3 form")),
    }
    if let Some(d) = inner.get("description") {
        out.insert("description".into(), d.clone());
    }
    Ok(Value::Object(out))
}

fn reqs_to_v1(reqs: &Value) -> Value {
    let arr = reqs.as_array().cloned().unwrap_or_default();
    Value::Array(
        arr.iter()
            .map(|r| {
                let mut schemes = Map::new();
                if let Some(m) = r.as_object() {
                    for (k, v) in m {
                        schemes.insert(k.clone(), json!({"list": v}));
                    }
                }
                json!({"schemes": schemes})
            })
            .collect(),
    )
}

fn reqs_to_v03(reqs: &Value, omitted: &[String]) -> Value {
    let arr = reqs.as_array().cloned().unwrap_or_default();
    Value::Array(
        arr.iter()
            .filter_map(|r| {
                let schemes = r.get("schemes")?.as_object()?;
                if schemes.keys().any(|k| omitted.contains(k)) {
                    return None;
                }
                let mut out = Map::new();
                for (k, v) in schemes {
                    out.insert(k.clone(), v.get("list").cloned().unwrap_or(json!([])));
                }
                Some(Value::Object(out))
            })
            .collect(),
    )
}

/// Reads a peer card (either version) into the 1.0 shape the gateway works in.
pub fn card_to_v1(card: &Value) -> Value {
    if card.get("supportedInterfaces").is_some() {
        return card.clone();
    }
    let mut out = card.as_object().cloned().unwrap_or_default();
    for k in [
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
        "security",
    ] {
        out.remove(k);
    }
    if let Some(Value::Object(schemes)) = card.get("securitySchemes") {
        let mut ns = Map::new();
        for (k, v) in schemes {
            if let Some(s) = scheme_to_v1(v) {
                ns.insert(k.clone(), s);
            }
        }
        out.insert("securitySchemes".into(), Value::Object(ns));
    }
    if let Some(sec) = card.get("security") {
        out.insert("securityRequirements".into(), reqs_to_v1(sec));
    }
    let mut caps = card
        .get("capabilities")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    caps.remove("stateTransitionHistory");
    if let Some(x) = out.remove("supportsAuthenticatedExtendedCard") {
        caps.insert("extendedAgentCard".into(), x);
    }
    out.insert("capabilities".into(), Value::Object(caps));
    if let Some(Value::Array(skills)) = card.get("skills") {
        let s: Vec<Value> = skills
            .iter()
            .map(|sk| {
                let mut m = sk.as_object().cloned().unwrap_or_default();
                if let Some(sec) = m.remove("security") {
                    m.insert("securityRequirements".into(), reqs_to_v1(&sec));
                }
                Value::Object(m)
            })
            .collect();
        out.insert("skills".into(), Value::Array(s));
    }
    Value::Object(out)
}

/// Writes a 1.0 card in the 0.3 shape. Returns the card and the schemes left out, with reasons.
pub fn card_v1_to_v03(card: &Value) -> (Value, Vec<Value>) {
    let mut out = card.as_object().cloned().unwrap_or_default();
    out.remove("supportedInterfaces");
    out.remove("signatures");
    let mut omitted = Vec::new();
    let mut omitted_names = Vec::new();
    if let Some(Value::Object(schemes)) = card.get("securitySchemes") {
        let mut ns = Map::new();
        for (k, v) in schemes {
            match scheme_to_v03(v) {
                Ok(s) => {
                    ns.insert(k.clone(), s);
                }
                Err(why) => {
                    omitted.push(json!({"scheme": k, "reason": why}));
                    omitted_names.push(k.clone());
                }
            }
        }
        out.insert("securitySchemes".into(), Value::Object(ns));
    }
    if let Some(r) = out.remove("securityRequirements") {
        out.insert("security".into(), reqs_to_v03(&r, &omitted_names));
    }
    let mut caps = card
        .get("capabilities")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let ext = caps.remove("extendedAgentCard").unwrap_or(json!(false));
    out.insert("supportsAuthenticatedExtendedCard".into(), ext);
    out.insert("capabilities".into(), Value::Object(caps));
    if let Some(Value::Array(skills)) = card.get("skills") {
        let s: Vec<Value> = skills
            .iter()
            .map(|sk| {
                let mut m = sk.as_object().cloned().unwrap_or_default();
                if let Some(r) = m.remove("securityRequirements") {
                    m.insert("security".into(), reqs_to_v03(&r, &omitted_names));
                }
                Value::Object(m)
            })
            .collect();
        out.insert("skills".into(), Value::Array(s));
    }
    (Value::Object(out), omitted)
}

/// Total characters of text across a message (either version): text parts, and every string
/// inside data parts is not counted (the seed's limit is on text).
pub fn message_text_chars(params: &Value) -> usize {
    params
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .map(|t| t.chars().count())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trip() {
        let m03 = json!({"kind":"message","messageId":"m","role":"user","parts":[
            {"kind":"text","text":"hi"},{"kind":"data","data":{"a":1}},
            {"kind":"file","file":{"uri":"https://x/y","mimeType":"text/plain","name":"y"}}]});
        let m1 = message(&m03, Version::V10, "m").unwrap();
        assert_eq!(m1["role"], "ROLE_USER");
        assert_eq!(m1["parts"][0], json!({"text":"hi"}));
        assert_eq!(
            m1["parts"][2],
            json!({"url":"https://x/y","mediaType":"text/plain","filename":"y"})
        );
        assert_eq!(message(&m1, Version::V03, "m").unwrap(), m03);
    }

    #[test]
    fn refusals_carry_paths() {
        let p = json!({"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"},{"image":{}}]}});
        let e = request(Operation::SendMessage, Version::V10, Version::V10, &p).unwrap_err();
        assert_eq!(e.rpc_code, -32602);
        assert!(
            e.message
                .contains("params.message.parts[1]: unknown member image"),
            "{}",
            e.message
        );
        let p = json!({"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","filename":"f"}]}});
        let e = request(Operation::SendMessage, Version::V10, Version::V03, &p).unwrap_err();
        assert_eq!(
            (e.rpc_code, e.code.as_str()),
            (-32004, "a2a_untranslatable")
        );
        let e = request(Operation::ListTasks, Version::V10, Version::V03, &json!({})).unwrap_err();
        assert_eq!(e.rpc_code, -32004);
    }

    #[test]
    fn status_update_gets_final() {
        let ev = json!({"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}});
        let v = event(&ev, Version::V10, Version::V03).unwrap();
        assert_eq!(v["kind"], "status-update");
        assert_eq!(v["final"], true);
        assert_eq!(v["status"]["state"], "completed");
        assert_eq!(event(&v, Version::V03, Version::V10).unwrap(), ev);
    }

    #[test]
    fn card_schemes_without_03_form_are_listed() {
        let c = json!({"name":"x","securitySchemes":{
            "dc":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"tokenUrl":"https://t"}}}},
            "b":{"httpAuthSecurityScheme":{"scheme":"bearer"}}},
            "securityRequirements":[{"schemes":{"dc":{"list":[]}}},{"schemes":{"b":{}}}]});
        let (c03, omitted) = card_v1_to_v03(&c);
        assert_eq!(
            c03["securitySchemes"]["b"],
            json!({"type":"http","scheme":"bearer"})
        );
        assert!(c03["securitySchemes"].get("dc").is_none());
        assert_eq!(omitted[0]["scheme"], "dc");
        assert_eq!(c03["security"], json!([{"b":[]}]));
    }
}
