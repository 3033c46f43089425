//! The schema walk: one pass over a document against a (compiled) schema, collecting every
//! violation with its path.

use serde_json::{Map, Value};

use super::compiled::{Compiled, NodeInfo};
use super::{Options, Violation, ViolationKind};

mod names;
mod object;
mod scalar;
mod union;

pub use names::snake_to_camel;
use names::type_matches;
pub(super) use names::type_name;
pub(super) use object::ObjView;
pub(super) use union::UnionPlan;

pub(super) struct Walker<'a> {
    pub(super) root: &'a Value,
    pub(super) opts: Options,
    pub(super) out: Vec<Violation>,
    /// The root's compiled facts (a type's cached schema), if any.
    pub(super) compiled: Option<&'a Compiled>,
    /// Members given under their proto (snake_case) name, in the order their values were
    /// walked (children before the object holding them): what normalising renames.
    pub(super) renames: Vec<Rename>,
}

/// A member read under its snake_case alias: `from` at the object whose display path is `at`
/// is the member `to`.
#[derive(Debug)]
pub(super) struct Rename {
    pub(super) at: String,
    pub(super) from: String,
    pub(super) to: String,
}

const MAX_DEPTH: usize = 128;

impl<'a> Walker<'a> {
    /// A walker with nothing found yet, over the schema `root` (with its compiled facts, if any).
    pub(super) fn new(root: &'a Value, opts: Options, compiled: Option<&'a Compiled>) -> Self {
        Walker {
            root,
            opts,
            out: Vec::new(),
            compiled,
            renames: Vec::new(),
        }
    }

    fn violation(&mut self, path: &str, kind: ViolationKind) {
        let path = if path.is_empty() { "$" } else { path };
        self.out.push(Violation {
            path: path.to_owned(),
            kind,
        });
    }

    fn resolve(&self, s: &'a Value) -> &'a Value {
        let mut s = s;
        for _ in 0..32 {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else {
                return s;
            };
            let Some(ptr) = r.strip_prefix('#') else {
                return s;
            };
            match self.root.pointer(ptr) {
                Some(t) => s = t,
                None => return s,
            }
        }
        s
    }

    /// The schema maps that apply together at a node: the node itself, its `$ref` target
    /// (2020-12 allows siblings next to `$ref`), and `allOf` members, recursively.
    /// `Err(())` = a `false` schema is among them.
    pub(super) fn parts(&self, s: &'a Value) -> Result<Vec<&'a Map<String, Value>>, ()> {
        let mut out = Vec::new();
        self.collect_parts(s, &mut out, 0)?;
        Ok(out)
    }

    fn collect_parts(
        &self,
        s: &'a Value,
        out: &mut Vec<&'a Map<String, Value>>,
        depth: usize,
    ) -> Result<(), ()> {
        if depth > 32 {
            return Ok(());
        }
        match s {
            Value::Bool(false) => Err(()),
            Value::Object(m) => {
                out.push(m);
                if let Some(r) = m.get("$ref").and_then(Value::as_str)
                    && let Some(t) = r.strip_prefix('#').and_then(|p| self.root.pointer(p))
                {
                    self.collect_parts(t, out, depth + 1)?;
                }
                if let Some(Value::Array(all)) = m.get("allOf") {
                    for b in all {
                        self.collect_parts(b, out, depth + 1)?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    pub(super) fn check(&mut self, schema: &'a Value, v: &Value, path: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            self.violation(
                path,
                ViolationKind::Other("document nested too deeply".into()),
            );
            return;
        }
        let computed;
        let info: &NodeInfo<'a> = match self.compiled.and_then(|c| c.node(schema)) {
            Some(info) => info,
            None => {
                computed = NodeInfo::of(self, schema);
                &computed
            }
        };
        let Some(parts) = &info.parts else {
            self.violation(path, ViolationKind::Other("value not allowed here".into()));
            return;
        };
        // enum / const / type
        for s in parts {
            if let Some(Value::Array(allowed)) = s.get("enum")
                && !allowed.contains(v)
            {
                self.violation(path, ViolationKind::BadEnumValue(v.to_string()));
                return;
            }
            if let Some(c) = s.get("const")
                && c != v
            {
                self.violation(path, ViolationKind::BadEnumValue(v.to_string()));
                return;
            }
            if let Some(t) = s.get("type") {
                let ok = match t {
                    Value::String(t) => type_matches(t, v),
                    Value::Array(ts) => ts
                        .iter()
                        .filter_map(Value::as_str)
                        .any(|t| type_matches(t, v)),
                    _ => true,
                };
                if !ok {
                    let expected = match t {
                        Value::String(t) => t.clone(),
                        Value::Array(ts) => ts
                            .iter()
                            .filter_map(Value::as_str)
                            .filter(|t| *t != "null" || ts.len() == 1)
                            .collect::<Vec<_>>()
                            .join(" or "),
                        _ => String::new(),
                    };
                    self.violation(
                        path,
                        ViolationKind::WrongType {
                            expected,
                            found: type_name(v),
                        },
                    );
                    return;
                }
            }
        }
        let unions = |ps: &[&'a Map<String, Value>]| -> Vec<&'a Vec<Value>> {
            ps.iter()
                .filter_map(|s| {
                    s.get("oneOf")
                        .or_else(|| s.get("anyOf"))
                        .and_then(Value::as_array)
                })
                .collect()
        };
        match v {
            // No union: the node's own members, as compiled.
            Value::Object(o) if info.unions.is_empty() => {
                if info.object_rules {
                    self.check_object(&info.view, o, path, depth);
                }
            }
            Value::Object(o) => {
                let mut view = info.view.clone();
                let mut pending: std::collections::VecDeque<&'a Vec<Value>> =
                    info.unions.iter().copied().collect();
                while let Some(branches) = pending.pop_front() {
                    match self.select_branch(branches, o, &view, path) {
                        None => return,
                        Some(None) => {}
                        Some(Some(bparts)) => {
                            for s in &bparts {
                                view.absorb(s);
                            }
                            pending.extend(unions(&bparts));
                        }
                    }
                }
                if view.has_props
                    || view.additional.is_some()
                    || !view.required.is_empty()
                    || !view.pattern_props.is_empty()
                {
                    self.check_object(&view, o, path, depth);
                }
            }
            _ => {
                for branches in &info.unions {
                    self.check_scalar_union(branches, v, path, depth);
                }
                for s in parts {
                    match v {
                        Value::Array(a) => self.check_array(s, a, path, depth),
                        Value::String(st) => self.check_string(s, st, path),
                        Value::Number(n) => self.check_number(s, n, path),
                        _ => {}
                    }
                }
            }
        }
    }
}
