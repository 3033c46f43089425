//! The settings convention both binaries share: durations written with units ([`Dur`]),
//! booleans as switches with `--no-…` forms ([`switches`]), and one alias table per binary
//! ([`Alias`]): the deprecated names of a setting (kept one release, with a warning) and the
//! names of the Camel guide and the DVARA API, read as written. The table is applied once where
//! the settings are read: on the TOML file ([`rename_table`]), the environment ([`rewrite_env`])
//! and the command line ([`rewrite_args`]). A configuration reload compares what was read
//! before and after ([`reload`]).

use std::fmt;

mod dur;
pub mod reload;
pub use dur::{Dur, millis, secs, whole_secs};

/// Who names a setting the alias table reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Our own former name: still read for one release, with a warning at start.
    Deprecated,
    /// The Camel guide's name (a route's parameter), read as written.
    Camel,
    /// The DVARA API's name (an operator setting), read as written.
    Dvara,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Deprecated => "deprecated setting",
            Origin::Camel => "the Camel guide's",
            Origin::Dvara => "the DVARA API's",
        })
    }
}

/// How an alias's value becomes ours.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    /// As given.
    Same,
    /// A number of milliseconds (or its digits as a string) becomes a duration (`"5000ms"`).
    Millis,
    /// A number of seconds (or its digits as a string) becomes a duration (`"30s"`).
    Secs,
    /// `true`/`false`, also as strings.
    Bool,
    /// An integer, also as a string of digits.
    Int,
    /// One of these values (compared without case, numbers by their digits) and ours for it;
    /// any other is refused naming the key.
    Map(&'static [(&'static str, &'static str)]),
    /// `true` becomes `["*"]` (any origin), `false` becomes `[]` (off).
    AnyOrigin,
    /// Accepted with one of these values and nothing to set: the text says why (logged at info).
    NoEffect(&'static [&'static str], &'static str),
    /// Accepted when empty (our default), refused otherwise with this text.
    EmptyOnly(&'static str),
    /// Refused with this text (the value cannot be honoured).
    Refuse(&'static str),
}

/// One row of an alias table: `name` (dotted for nested TOML tables; `*` matches one part) is
/// read as our `ours`.
#[derive(Debug, Clone, Copy)]
pub struct Alias {
    /// The name as the other side writes it (snake_case ours, camelCase Camel, dotted DVARA).
    pub name: &'static str,
    /// Our TOML key.
    pub ours: &'static str,
    /// Who names it.
    pub origin: Origin,
    /// How the value is read.
    pub value: Value,
}

impl Alias {
    /// Our former name `name` of `ours`, read for one release with a warning.
    pub const fn old(name: &'static str, ours: &'static str, value: Value) -> Alias {
        Alias {
            name,
            ours,
            origin: Origin::Deprecated,
            value,
        }
    }

    /// The other product's name `name` of our `ours`, read as written.
    pub const fn foreign(
        origin: Origin,
        name: &'static str,
        ours: &'static str,
        value: Value,
    ) -> Alias {
        Alias {
            name,
            ours,
            origin,
            value,
        }
    }
}

/// Something the alias pass noticed, logged once at start.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Note {
    /// A deprecated name was used (logged at warn).
    Deprecated(String),
    /// A foreign setting was accepted with nothing to set (logged at info).
    NoEffect(String),
}

/// Logs the notes (warn for deprecated names, info otherwise), once each.
pub fn log_notes(notes: &[Note]) {
    let mut seen = std::collections::HashSet::new();
    for n in notes {
        if !seen.insert(n) {
            continue;
        }
        match n {
            Note::Deprecated(t) => tracing::warn!("{t}"),
            Note::NoEffect(t) => tracing::info!("{t}"),
        }
    }
}

#[cfg(feature = "cli")]
fn matches(pattern: &str, key: &str) -> bool {
    let (p, k): (Vec<_>, Vec<_>) = (pattern.split('.').collect(), key.split('.').collect());
    p.len() == k.len() && p.iter().zip(&k).all(|(p, k)| *p == "*" || p == k)
}

#[cfg(feature = "cli")]
/// Nested tables under `roots` (`[a2a.protocol]`, `[camel.rest]`) as dotted keys at the top,
/// where quoted dotted keys (`"a2a.protocol.serve-v1"`) already are.
fn flatten(table: &mut toml::Table, roots: &[&str]) {
    fn walk(prefix: &str, v: toml::Value, out: &mut Vec<(String, toml::Value)>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    walk(&format!("{prefix}.{k}"), v, out);
                }
            }
            v => out.push((prefix.to_owned(), v)),
        }
    }
    for root in roots {
        if matches!(table.get(*root), Some(toml::Value::Table(_))) {
            let mut out = Vec::new();
            if let Some(v) = table.remove(*root) {
                walk(root, v, &mut out);
            }
            table.extend(out);
        }
    }
}

#[cfg(feature = "cli")]
/// The text of a scalar (`200`, `"JSONRPC"`, `true`).
fn text_of(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.trim().to_owned()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(feature = "cli")]
/// `alias`'s value as ours (`Ok(None)`: nothing to set).
fn convert(alias: &Alias, name: &str, v: toml::Value) -> Result<Option<toml::Value>, String> {
    let want = |what: &str| format!("`{name}` must be {what}, not {v}");
    let digits = |v: &toml::Value| -> Option<u64> {
        match v {
            toml::Value::Integer(i) => u64::try_from(*i).ok(),
            toml::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    };
    Ok(Some(match alias.value {
        Value::Same => v,
        Value::Millis | Value::Secs => {
            let unit = if matches!(alias.value, Value::Millis) {
                "ms"
            } else {
                "s"
            };
            match (digits(&v), &v) {
                (Some(n), _) => toml::Value::String(format!("{n}{unit}")),
                (None, toml::Value::String(s)) if s.parse::<Dur>().is_ok() => v,
                _ => return Err(want(&format!("a number of {unit} or a duration"))),
            }
        }
        Value::Int => match digits(&v) {
            Some(n) => toml::Value::Integer(i64::try_from(n).map_err(|_| want("smaller"))?),
            None => return Err(want("a whole number")),
        },
        Value::Bool => match text_of(&v).map(|t| t.to_ascii_lowercase()).as_deref() {
            Some("true") => toml::Value::Boolean(true),
            Some("false") => toml::Value::Boolean(false),
            _ => return Err(want("true or false")),
        },
        Value::Map(map) => {
            let given = text_of(&v).unwrap_or_default();
            match map.iter().find(|(k, _)| k.eq_ignore_ascii_case(&given)) {
                Some((_, ours)) => toml::Value::String((*ours).to_owned()),
                None => {
                    let known: Vec<&str> = map.iter().map(|(k, _)| *k).collect();
                    return Err(want(&format!("one of {}", known.join(", "))));
                }
            }
        }
        Value::AnyOrigin => match v {
            toml::Value::Boolean(true) => toml::Value::Array(vec!["*".into()]),
            toml::Value::Boolean(false) => toml::Value::Array(Vec::new()),
            _ => return Err(want("true or false")),
        },
        Value::NoEffect(values, _) => {
            let given = text_of(&v).unwrap_or_default();
            if values.iter().any(|k| k.eq_ignore_ascii_case(&given)) {
                return Ok(None);
            }
            return Err(want(&format!("one of {}", values.join(", "))));
        }
        Value::EmptyOnly(why) => match &v {
            toml::Value::Array(a) if a.is_empty() => return Ok(None),
            _ => return Err(format!("{} `{name}`: {why}", alias.origin)),
        },
        Value::Refuse(why) => return Err(format!("{} `{name}`: {why}", alias.origin)),
    }))
}

#[cfg(feature = "cli")]
/// Reads `table` (a parsed TOML file) through `aliases`: nested tables under `roots` become
/// dotted keys, then every key an alias names is renamed to ours with its value converted.
/// Fails, naming the key, on a value that cannot be honoured or a setting given twice.
pub fn rename_table(
    mut table: toml::Table,
    aliases: &[Alias],
    roots: &[&str],
) -> Result<(toml::Table, Vec<Note>), String> {
    flatten(&mut table, roots);
    let mut notes = Vec::new();
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let Some(alias) = aliases.iter().find(|a| matches(a.name, &key)) else {
            continue;
        };
        let Some(v) = table.remove(&key) else {
            continue;
        };
        let converted = convert(alias, &key, v)?;
        match converted {
            None => {
                if let Value::NoEffect(_, why) = alias.value {
                    notes.push(Note::NoEffect(format!(
                        "{} `{key}` accepted: {why}",
                        alias.origin
                    )));
                }
            }
            Some(v) => {
                if table.contains_key(alias.ours) {
                    return Err(format!(
                        "`{key}` and `{}` set the same setting: keep one",
                        alias.ours
                    ));
                }
                if alias.origin == Origin::Deprecated {
                    notes.push(Note::Deprecated(format!(
                        "setting `{key}` is deprecated: write `{} = {v}` (the old name is read \
                         for one release)",
                        alias.ours
                    )));
                }
                table.insert(alias.ours.to_owned(), v);
            }
        }
    }
    Ok((table, notes))
}

#[cfg(feature = "cli")]
/// `snake_case` as a flag name (`kebab-case`).
fn kebab(s: &str) -> String {
    s.replace('_', "-")
}

#[cfg(feature = "cli")]
/// A deprecated value converted for the command line or the environment.
fn convert_text(alias: &Alias, v: &str) -> String {
    match (alias.value, v.trim().parse::<u64>()) {
        (Value::Millis, Ok(n)) => format!("{n}ms"),
        (Value::Secs, Ok(n)) => format!("{n}s"),
        _ => v.to_owned(),
    }
}

#[cfg(feature = "cli")]
/// Rewrites the command line: a deprecated flag (`--peer-timeout-secs 30`, `--x=30`) becomes
/// ours (`--peer-timeout=30s`); a switch (a flag of `switches`, by its long name) given the
/// old way, `--dev true` / `--dev=false`, becomes `--dev` / `--no-dev`; and `--no-dev` becomes
/// what the parser reads (`--dev=false`). Stops at `--`.
pub fn rewrite_args(
    args: Vec<String>,
    aliases: &[Alias],
    switches: &[&str],
) -> (Vec<String>, Vec<Note>) {
    let mut out = Vec::with_capacity(args.len());
    let mut notes = Vec::new();
    let mut it = args.into_iter().peekable();
    while let Some(arg) = it.next() {
        if arg == "--" {
            out.push(arg);
            out.extend(it);
            break;
        }
        let Some(flag) = arg.strip_prefix("--") else {
            out.push(arg);
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (flag.to_owned(), None),
        };
        if let Some(alias) = aliases
            .iter()
            .find(|a| a.origin == Origin::Deprecated && kebab(a.name) == name)
        {
            let value = inline.or_else(|| it.next()).unwrap_or_default();
            let new = format!("--{}={}", kebab(alias.ours), convert_text(alias, &value));
            notes.push(Note::Deprecated(format!(
                "flag `--{name}` is deprecated: write `{new}` (the old name is read for one \
                 release)"
            )));
            out.push(new);
            continue;
        }
        if let Some(off) = name.strip_prefix("no-").filter(|n| switches.contains(n)) {
            out.push(format!("--{off}=false"));
            continue;
        }
        if switches.contains(&name.as_str()) {
            let next_is_bool =
                |v: &str| matches!(v.to_ascii_lowercase().as_str(), "true" | "false");
            let value = match inline {
                Some(v) => Some(v),
                None if it.peek().is_some_and(|v| next_is_bool(v)) => it.next(),
                None => None,
            };
            match value {
                None => out.push(format!("--{name}")),
                Some(v) => {
                    let on = v.eq_ignore_ascii_case("true");
                    let new = if on {
                        format!("--{name}")
                    } else {
                        format!("--no-{name}")
                    };
                    notes.push(Note::Deprecated(format!(
                        "`--{name} {v}` is deprecated: write `{new}` (switches take no value)"
                    )));
                    out.push(if on {
                        format!("--{name}")
                    } else {
                        format!("--{name}=false")
                    });
                }
            }
            continue;
        }
        out.push(arg);
    }
    (out, notes)
}

/// Reads each deprecated setting's environment variable (`{prefix}` and the old name in
/// capitals) into ours when ours is unset (the value converted: `A2A_GATEWAY_PEER_TIMEOUT_SECS=30`
/// sets `A2A_GATEWAY_PEER_TIMEOUT=30s`).
///
/// # Safety
/// Changes the process environment: call it before any other thread exists.
#[cfg(feature = "cli")]
pub unsafe fn rewrite_env(prefix: &str, aliases: &[Alias]) -> Vec<Note> {
    let mut notes = Vec::new();
    for alias in aliases.iter().filter(|a| a.origin == Origin::Deprecated) {
        let old = format!("{prefix}{}", alias.name.to_ascii_uppercase());
        let new = format!("{prefix}{}", alias.ours.to_ascii_uppercase());
        let Ok(v) = std::env::var(&old) else {
            continue;
        };
        if std::env::var_os(&new).is_some() {
            notes.push(Note::Deprecated(format!(
                "{old} is deprecated and ignored: {new} is set"
            )));
            continue;
        }
        let v = convert_text(alias, &v);
        notes.push(Note::Deprecated(format!(
            "{old} is deprecated: write {new}={v} (the old name is read for one release)"
        )));
        // SAFETY: the caller guarantees no other thread.
        unsafe { std::env::set_var(&new, v) };
    }
    notes
}

#[cfg(feature = "cli")]
/// Makes each argument of `ids` (a boolean flag of `cmd`) a switch: `--x` alone turns it on,
/// `--no-x` (rewritten by [`rewrite_args`]) off, and its help says so.
pub fn switches(mut cmd: clap::Command, ids: &[&str]) -> clap::Command {
    for id in ids {
        cmd = cmd.mut_arg(*id, |a| {
            let long = a.get_long().unwrap_or(id).to_owned();
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            a.num_args(0..=1)
                .require_equals(true)
                .default_missing_value("true")
                .help(format!(
                    "{help} (a switch: --{long}, or --no-{long} to turn it off)"
                ))
        });
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "cli")]
    const T: &[Alias] = &[
        Alias {
            name: "old_ms",
            ours: "new",
            origin: Origin::Deprecated,
            value: Value::Millis,
        },
        Alias {
            name: "a2a.x.on",
            ours: "on",
            origin: Origin::Dvara,
            value: Value::Bool,
        },
        Alias {
            name: "a2a.x.mode",
            ours: "mode",
            origin: Origin::Dvara,
            value: Value::Map(&[("200", "ok"), ("refusal", "refusal")]),
        },
    ];

    #[test]
    fn durations_read_and_write_with_units() {
        assert_eq!("500ms".parse::<Dur>().unwrap(), Dur::from_millis(500));
        assert_eq!("5m".parse::<Dur>().unwrap(), Dur::from_secs(300));
        assert_eq!(Dur::from_millis(300_000).to_string(), "5m");
        assert_eq!(Dur::from_millis(1500).to_string(), "1500ms");
        assert!("10".parse::<Dur>().unwrap_err().contains("10s"));
        assert!("10 parsecs".parse::<Dur>().is_err());
        assert!(whole_secs(Dur::from_millis(1500)).is_err());
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_table_renames_converts_and_refuses() {
        let t: toml::Table =
            toml::from_str("old_ms = 250\n[a2a.x]\non = \"false\"\nmode = 200\n").unwrap();
        let (t, notes) = rename_table(t, T, &["a2a"]).unwrap();
        assert_eq!(t["new"].as_str(), Some("250ms"));
        assert_eq!(t["on"].as_bool(), Some(false));
        assert_eq!(t["mode"].as_str(), Some("ok"));
        assert_eq!(notes.len(), 1);
        let t: toml::Table = toml::from_str("\"a2a.x.mode\" = \"teapot\"").unwrap();
        assert!(
            rename_table(t, T, &["a2a"])
                .unwrap_err()
                .contains("a2a.x.mode")
        );
        let t: toml::Table = toml::from_str("old_ms = 1\nnew = \"1s\"").unwrap();
        assert!(rename_table(t, T, &[]).is_err());
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_command_line_keeps_old_forms_with_a_note() {
        let args = [
            "serve", "--old-ms", "20", "--dev", "false", "--no-ard", "--x", "--dev",
        ];
        let (out, notes) = rewrite_args(args.map(String::from).to_vec(), T, &["dev", "ard"]);
        assert_eq!(
            out,
            [
                "serve",
                "--new=20ms",
                "--dev=false",
                "--ard=false",
                "--x",
                "--dev"
            ]
        );
        assert_eq!(notes.len(), 2);
    }
}
