//! The schema-driven validator (feature `schema`): [`Validator`], [`Options`] and the
//! per-type schema cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde_json::Value;

use super::compiled::Compiled;
use super::{Violation, ViolationKind, Walker};

// ---------------------------------------------------------------------------------------------
// Options and the validator
// ---------------------------------------------------------------------------------------------

/// Dialect switches for the validator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Accept `snake_case` member names whose camelCase form is defined (ProtoJSON).
    pub snake_case_aliases: bool,
    /// Require `date-time` values to be UTC with `Z` (A2A 1.0, S1 §5.6.1).
    pub require_utc_timestamps: bool,
}

impl Options {
    /// ProtoJSON (A2A 1.0, 0.3 HTTP+JSON): snake_case accepted, `Z` timestamps.
    pub const PROTOJSON: Options = Options {
        snake_case_aliases: true,
        require_utc_timestamps: true,
    };
    /// Plain JSON (A2A 0.3 JSON-RPC): exact names, any parseable timestamp.
    pub const JSON: Options = Options {
        snake_case_aliases: false,
        require_utc_timestamps: false,
    };
}

impl Default for Options {
    fn default() -> Self {
        Options::PROTOJSON
    }
}

/// A compiled validator for one root schema.
#[derive(Debug, Clone)]
pub struct Validator {
    schema: Arc<Value>,
    options: Options,
    /// For a type's schema (from the global per-type cache): its compiled facts, whose `root`
    /// is the copy the walker reads.
    compiled: Option<&'static Compiled>,
}

/// A type's schema: as handed out, and compiled (see `compiled.rs`).
#[derive(Clone)]
struct Cached {
    schema: Arc<Value>,
    compiled: &'static Compiled,
}

fn cache() -> &'static Mutex<HashMap<String, Cached>> {
    static C: OnceLock<Mutex<HashMap<String, Cached>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// `T`'s schema and its compiled facts, made once per type (and per process).
fn cached<T: JsonSchema>() -> Cached {
    let key = T::schema_id();
    if let Ok(c) = cache().lock()
        && let Some(s) = c.get(key.as_ref())
    {
        return s.clone();
    }
    let value = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let root: &'static Value = Box::leak(Box::new(value.clone()));
    let made = Cached {
        schema: Arc::new(value),
        compiled: Box::leak(Box::new(Compiled::build(root))),
    };
    match cache().lock() {
        // Another thread made it first: use that one (this copy stays leaked, once).
        Ok(mut c) => c.entry(key.into_owned()).or_insert(made).clone(),
        Err(_) => made,
    }
}

/// The JSON Schema (draft 2020-12, `$defs`) the validator uses for `T`, cached per type.
pub fn schema_of<T: JsonSchema>() -> Arc<Value> {
    cached::<T>().schema
}

/// Validates `value` as `T` with ProtoJSON rules ([`Options::PROTOJSON`]): every violation.
pub fn validate<T: JsonSchema>(value: &Value) -> Vec<Violation> {
    Validator::for_type::<T>().validate(value)
}

/// Validates `value` as `T` with `options`.
pub fn validate_with<T: JsonSchema>(value: &Value, options: Options) -> Vec<Violation> {
    Validator::for_type::<T>()
        .with_options(options)
        .validate(value)
}

impl Validator {
    /// The validator for `T` ([`Options::PROTOJSON`]).
    pub fn for_type<T: JsonSchema>() -> Self {
        let c = cached::<T>();
        Validator {
            schema: c.schema,
            options: Options::PROTOJSON,
            compiled: Some(c.compiled),
        }
    }

    /// A validator for a root schema given as JSON (with `$defs`).
    pub fn from_schema(schema: Value) -> Self {
        Validator {
            schema: Arc::new(schema),
            options: Options::PROTOJSON,
            compiled: None,
        }
    }

    /// Sets the options.
    pub fn with_options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The root schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Every violation of `value`, paths relative to the root (`$`).
    pub fn validate(&self, value: &Value) -> Vec<Violation> {
        self.validate_at(value, "")
    }

    /// Every violation of `value`, paths prefixed with `base` (e.g. `params`).
    pub fn validate_at(&self, value: &Value, base: &str) -> Vec<Violation> {
        self.walk(value, base).out
    }

    /// One walk of `value` (paths under `base`): its violations and the members it read under
    /// their snake_case aliases.
    fn walk(&self, value: &Value, base: &str) -> Walker<'_> {
        let root = match self.compiled {
            Some(c) => c.root,
            None => self.schema.as_ref(),
        };
        let mut w = Walker::new(root, self.options, self.compiled);
        let mut path = base.to_owned();
        w.check(root, value, &mut path, 0);
        w
    }

    /// Validates `value` like [`Validator::validate_at`] and, when it has no violation, puts
    /// every member given under its proto (snake_case) name under its JSON name, so that code
    /// reading the value afterwards knows one spelling (`task_id` becomes `taskId`; keys of
    /// open maps such as `metadata` are data and stay as they are). A member given under both
    /// spellings is a [`ViolationKind::ConflictingMembers`] violation. On violations `value`
    /// is left as it came.
    ///
    /// ```
    /// use a2a_types::{strict::Validator, v1};
    /// use serde_json::json;
    ///
    /// let mut doc = json!({"message": {"message_id": "m1", "role": "ROLE_USER",
    ///     "task_id": "t1", "parts": [{"text": "hi"}], "metadata": {"my_key": 1}}});
    /// let v = Validator::for_type::<v1::SendMessageRequest>();
    /// assert!(v.validate_normalize_at(&mut doc, "params").is_empty());
    /// assert_eq!(doc["message"]["taskId"], "t1");
    /// assert_eq!(doc["message"]["metadata"]["my_key"], 1);
    /// ```
    pub fn validate_normalize_at(&self, value: &mut Value, base: &str) -> Vec<Violation> {
        let w = self.walk(value, base);
        if !w.out.is_empty() {
            return w.out;
        }
        for r in w.renames {
            let target =
                r.at.strip_prefix(base)
                    .and_then(segments)
                    .and_then(|segs| {
                        segs.iter().try_fold(&mut *value, |v, s| match s {
                            Seg::Member(m) => v.get_mut(m.as_str()),
                            Seg::Index(i) => v.get_mut(*i),
                        })
                    })
                    .and_then(Value::as_object_mut);
            match target {
                Some(obj) => {
                    if let Some(val) = obj.remove(&r.from) {
                        obj.insert(r.to, val);
                    }
                }
                None => {
                    // The walker's own paths always lead back; refuse rather than leave a
                    // second spelling in place.
                    return vec![Violation {
                        path: if r.at.is_empty() { "$".into() } else { r.at },
                        kind: ViolationKind::Other(format!("cannot normalise member {}", r.from)),
                    }];
                }
            }
        }
        Vec::new()
    }
}

/// One step of a display path.
enum Seg {
    Member(String),
    Index(usize),
}

/// The steps of a display path as the walker writes them (`a.b[2]["x.y"]`, after its base).
fn segments(p: &str) -> Option<Vec<Seg>> {
    let mut out = Vec::new();
    let b = p.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => i += 1,
            b'[' if b.get(i + 1) == Some(&b'"') => {
                // A JSON string up to its closing quote, then `]`.
                let rest = &p[i + 1..];
                let mut de = serde_json::Deserializer::from_str(rest).into_iter::<String>();
                let name = de.next()?.ok()?;
                let used = de.byte_offset();
                i += 1 + used;
                if b.get(i) != Some(&b']') {
                    return None;
                }
                i += 1;
                out.push(Seg::Member(name));
                continue;
            }
            b'[' => {
                let end = p[i..].find(']')? + i;
                out.push(Seg::Index(p[i + 1..end].parse().ok()?));
                i = end + 1;
                continue;
            }
            _ => {}
        }
        let start = i;
        while i < b.len() && b[i] != b'.' && b[i] != b'[' {
            i += 1;
        }
        if i > start {
            out.push(Seg::Member(p[start..i].to_owned()));
        }
    }
    Some(out)
}
