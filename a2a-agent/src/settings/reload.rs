//! What a configuration reload (SIGHUP) changes, for both binaries: the settings read again
//! are compared with those read before, member by member (the top-level TOML keys of the
//! binary's settings type), and split into those the binary applies live and those that keep
//! their running value until a restart ([`Reloaded`], logged as one line).
//!
//! Each binary names its live settings (a predicate over the key and its two values); the
//! comparison, the report and the merge of the applied members into the running settings are
//! here, once.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// What a reload did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// Settings that changed and now apply.
    pub applied: Vec<String>,
    /// Settings that changed but keep their running value until a restart.
    pub restart: Vec<String>,
}

impl std::fmt::Display for Reloaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        write!(
            f,
            "applied: {}; need a restart: {}",
            list(&self.applied),
            list(&self.restart)
        )
    }
}

/// The top-level members of `c` serialized (its TOML keys).
pub fn members<T: Serialize>(c: &T) -> Result<Map<String, Value>, String> {
    match serde_json::to_value(c) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("settings are not a table".into()),
        Err(e) => Err(format!("settings not read: {e}")),
    }
}

/// The members that differ between `before` and `after`, split by `live(key, before, after)`
/// (`before` is `Null` for a member missing there).
pub fn diff<T: Serialize>(
    before: &T,
    after: &T,
    live: &dyn Fn(&str, &Value, &Value) -> bool,
) -> Result<Reloaded, String> {
    let (b, a) = (members(before)?, members(after)?);
    let mut out = Reloaded::default();
    for (k, v) in &a {
        let old = b.get(k).unwrap_or(&Value::Null);
        if old == v {
            continue;
        }
        if live(k, old, v) {
            out.applied.push(k.clone());
        } else {
            out.restart.push(k.clone());
        }
    }
    Ok(out)
}

/// What a reload to `after` does: the live settings changed since the last read (`before`),
/// and every setting changed since the start (`boot`) that needs a restart, reported at each
/// reload until the restart (and never applied meanwhile).
pub fn plan<T: Serialize>(
    boot: &T,
    before: &T,
    after: &T,
    live: &dyn Fn(&str, &Value, &Value) -> bool,
) -> Result<Reloaded, String> {
    let restart = diff(boot, after, live)?.restart;
    let applied = diff(before, after, live)?
        .applied
        .into_iter()
        .filter(|k| !restart.contains(k))
        .collect();
    Ok(Reloaded { applied, restart })
}

/// `running` with the members named in `keys` taken from `after` (the settings a reload
/// applies); every other member keeps its running value.
pub fn merge<T: Serialize + DeserializeOwned>(
    running: &T,
    after: &T,
    keys: &[String],
) -> Result<T, String> {
    let mut out = members(running)?;
    let wanted = members(after)?;
    for k in keys {
        if let Some(v) = wanted.get(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(Value::Object(out)).map_err(|e| format!("settings not applied: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
    struct S {
        a: u32,
        b: u32,
        port: u16,
    }

    fn live(k: &str, _: &Value, _: &Value) -> bool {
        k != "port"
    }

    #[test]
    fn changes_split_and_restart_stays_reported() {
        let boot = S::default();
        let first = S {
            port: 1,
            a: 2,
            ..S::default()
        };
        let d = diff(&boot, &first, &live).unwrap();
        assert_eq!(
            (d.applied, d.restart),
            (vec!["a".into()], vec!["port".into()])
        );
        let second = S {
            b: 3,
            ..first.clone()
        };
        let p = plan(&boot, &first, &second, &live).unwrap();
        assert_eq!(p.applied, vec!["b".to_owned()]);
        assert_eq!(p.restart, vec!["port".to_owned()]);
        assert_eq!(
            p.to_string(),
            "applied: b; need a restart: port",
            "the one-line report"
        );
        assert_eq!(
            Reloaded::default().to_string(),
            "applied: none; need a restart: none"
        );
        // Only the applied members are taken.
        let m = merge(&boot, &second, &p.applied).unwrap();
        assert_eq!(
            m,
            S {
                b: 3,
                ..S::default()
            }
        );
    }
}
