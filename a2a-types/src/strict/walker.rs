//! The schema walk: one pass over a document against a (compiled) schema, collecting every
//! violation with its path.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::compiled::{Compiled, NodeInfo};
use super::{Options, Violation, ViolationKind};

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

/// How a union's branch is chosen (computed once per union node).
pub(super) enum UnionPlan {
    /// At most one non-null branch (its index).
    Single(Option<usize>),
    /// A member that is a `const` in every branch.
    Const {
        member: String,
        values: Vec<Value>,
        idx: Vec<usize>,
    },
    /// Branches told apart by their `required` members.
    Required {
        idx: Vec<usize>,
        reqs: Vec<Vec<String>>,
        discrim: Vec<String>,
        all_props: Vec<String>,
    },
    /// Nothing to discriminate on: try each branch.
    TryEach { idx: Vec<usize> },
}

const MAX_DEPTH: usize = 128;

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

fn push_index(path: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "[{i}]");
}

fn push_member(path: &mut String, name: &str) {
    let simple = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '-');
    if simple {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
    } else {
        path.push('[');
        path.push_str(&Value::String(name.to_owned()).to_string());
        path.push(']');
    }
}

/// The JSON (lowerCamelCase) name of a proto (snake_case) member name: `task_id` -> `taskId`;
/// `None` for a name without `_`.
pub fn snake_to_camel(s: &str) -> Option<String> {
    if !s.contains('_') {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn str_list(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The parts of an object schema, merged from a node and its selected union branch.
#[derive(Default, Clone)]
pub(super) struct ObjView<'a> {
    pub(super) props: Vec<(&'a str, &'a Value)>,
    pub(super) required: Vec<&'a str>,
    /// `None` = not specified.
    pub(super) additional: Option<&'a Value>,
    pub(super) pattern_props: Vec<(&'a str, &'a Value)>,
    pub(super) has_props: bool,
}

impl<'a> ObjView<'a> {
    pub(super) fn absorb(&mut self, s: &'a Map<String, Value>) {
        if let Some(Value::Object(p)) = s.get("properties") {
            self.has_props = true;
            for (k, v) in p {
                self.props.push((k.as_str(), v));
            }
        }
        for r in str_list(s.get("required")) {
            if !self.required.contains(&r) {
                self.required.push(r);
            }
        }
        if let Some(a) = s.get("additionalProperties") {
            self.additional = Some(a);
        }
        if let Some(Value::Object(p)) = s.get("patternProperties") {
            for (k, v) in p {
                self.pattern_props.push((k.as_str(), v));
            }
        }
    }

    fn prop(&self, name: &str) -> Option<&'a Value> {
        self.props.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }
}

impl<'a> Walker<'a> {
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

    /// Analyzes a union once (cached per schema node for cached schemas).
    fn plan(&self, branches: &'a [Value]) -> Arc<UnionPlan> {
        if let Some(p) = self.compiled.and_then(|c| c.plan(branches)) {
            return p;
        }
        Arc::new(self.analyze(branches))
    }

    pub(super) fn analyze(&self, branches: &'a [Value]) -> UnionPlan {
        let mut idx = Vec::new();
        let mut views: Vec<ObjView<'a>> = Vec::new();
        for (i, b) in branches.iter().enumerate() {
            let Ok(ps) = self.parts(b) else { continue };
            let is_null = ps
                .iter()
                .any(|s| s.get("type").and_then(Value::as_str) == Some("null"));
            if !is_null {
                let mut v = ObjView::default();
                for s in &ps {
                    v.absorb(s);
                }
                idx.push(i);
                views.push(v);
            }
        }
        if idx.len() <= 1 {
            return UnionPlan::Single(idx.first().copied());
        }
        if let Some((member, values)) = self.const_discriminator(&views) {
            return UnionPlan::Const {
                member,
                values: values.into_iter().cloned().collect(),
                idx,
            };
        }
        let reqs: Vec<Vec<String>> = views
            .iter()
            .map(|v| v.required.iter().map(|s| (*s).to_owned()).collect())
            .collect();
        if reqs.iter().all(|r| !r.is_empty()) {
            let mut discrim: Vec<String> = Vec::new();
            for r in &reqs {
                for k in r {
                    if !reqs.iter().all(|r2| r2.contains(k)) && !discrim.contains(k) {
                        discrim.push(k.clone());
                    }
                }
            }
            let mut all_props: Vec<String> = Vec::new();
            for v in &views {
                all_props.extend(v.props.iter().map(|(k, _)| (*k).to_owned()));
            }
            return UnionPlan::Required {
                idx,
                reqs,
                discrim,
                all_props,
            };
        }
        UnionPlan::TryEach { idx }
    }

    fn branch_parts(&self, b: &'a Value) -> Vec<&'a Map<String, Value>> {
        if let Some(info) = self.compiled.and_then(|c| c.node(b)) {
            return info.parts.clone().unwrap_or_default();
        }
        self.parts(b).unwrap_or_default()
    }

    /// Picks the branch of an object union and returns its schema parts. `None` = reported,
    /// nothing more to check; `Some(None)` = no branch to merge.
    #[allow(clippy::type_complexity)]
    fn select_branch(
        &mut self,
        branches: &'a [Value],
        o: &Map<String, Value>,
        parent: &ObjView<'a>,
        path: &str,
    ) -> Option<Option<Vec<&'a Map<String, Value>>>> {
        let plan = self.plan(branches);
        match &*plan {
            UnionPlan::Single(i) => Some(i.map(|i| self.branch_parts(&branches[i]))),
            // 1) a const discriminator shared by every branch (0.3 `kind`).
            UnionPlan::Const {
                member,
                values,
                idx,
            } => match o.get(member) {
                Some(val) => {
                    if let Some(i) = values.iter().position(|c| c == val) {
                        return Some(Some(self.branch_parts(&branches[idx[i]])));
                    }
                    let mut p = path.to_owned();
                    push_member(&mut p, member);
                    self.violation(
                        &p,
                        ViolationKind::WrongDiscriminator {
                            member: member.clone(),
                            found: val.to_string(),
                            expected: values.iter().map(|v| v.to_string()).collect(),
                        },
                    );
                    None
                }
                None => {
                    self.violation(path, ViolationKind::MissingRequired(member.clone()));
                    None
                }
            },
            // 2) the branch whose required members are present (1.0 oneofs, untagged unions).
            UnionPlan::Required {
                idx,
                reqs,
                discrim,
                all_props,
            } => {
                let snake = self.opts.snake_case_aliases;
                let has = |k: &str| {
                    o.contains_key(k)
                        || (snake && o.keys().any(|ok| snake_to_camel(ok).as_deref() == Some(k)))
                };
                let matching: Vec<usize> = (0..idx.len())
                    .filter(|&i| reqs[i].iter().all(|k| has(k)))
                    .collect();
                match matching.len() {
                    1 => Some(Some(self.branch_parts(&branches[idx[matching[0]]]))),
                    0 => {
                        let present: Vec<&str> = discrim
                            .iter()
                            .map(String::as_str)
                            .filter(|k| has(k))
                            .collect();
                        if present.is_empty() {
                            // Unknown members against all branches together, then what is
                            // missing.
                            let known = |k: &str| {
                                parent.prop(k).is_some()
                                    || all_props.iter().any(|p| p == k)
                                    || (snake
                                        && snake_to_camel(k).is_some_and(|c| {
                                            parent.prop(&c).is_some() || all_props.contains(&c)
                                        }))
                            };
                            let unknown: Vec<String> =
                                o.keys().filter(|k| !known(k)).cloned().collect();
                            for k in unknown {
                                self.violation(path, ViolationKind::UnknownMember(k));
                            }
                            self.violation(path, ViolationKind::MissingOneOf(discrim.clone()));
                            return None;
                        }
                        let i = (0..idx.len())
                            .find(|&i| reqs[i].iter().any(|k| present.contains(&k.as_str())))
                            .unwrap_or(0);
                        Some(Some(self.branch_parts(&branches[idx[i]])))
                    }
                    _ => {
                        let present: Vec<String> =
                            discrim.iter().filter(|k| has(k)).cloned().collect();
                        self.violation(path, ViolationKind::ConflictingMembers(present));
                        // Merge the matching branches so their members are not also "unknown".
                        let mut merged = Vec::new();
                        for i in matching {
                            merged.extend(self.branch_parts(&branches[idx[i]]));
                        }
                        Some(Some(merged))
                    }
                }
            }
            UnionPlan::TryEach { idx } => {
                let resolved: Vec<(&'a Value, Vec<&'a Map<String, Value>>)> = idx
                    .iter()
                    .map(|&i| (&branches[i], self.branch_parts(&branches[i])))
                    .collect();
                self.try_each(resolved, o, path)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn try_each(
        &mut self,
        mut resolved: Vec<(&'a Value, Vec<&'a Map<String, Value>>)>,
        o: &Map<String, Value>,
        path: &str,
    ) -> Option<Option<Vec<&'a Map<String, Value>>>> {
        // 3) try each branch; keep the closest.
        let value = Value::Object(o.clone());
        let mut best: Option<(usize, usize)> = None;
        for (i, (b, _)) in resolved.iter().enumerate() {
            let mut w = Walker {
                root: self.root,
                opts: self.opts,
                out: Vec::new(),
                compiled: self.compiled,
                renames: Vec::new(),
            };
            let mut p = path.to_owned();
            w.check(b, &value, &mut p, 0);
            if w.out.is_empty() {
                return Some(Some(resolved.swap_remove(i).1));
            }
            if best.is_none_or(|(_, n)| w.out.len() < n) {
                best = Some((i, w.out.len()));
            }
        }
        best.map(|(i, _)| Some(resolved.swap_remove(i).1))
    }

    fn const_discriminator(&self, views: &[ObjView<'a>]) -> Option<(String, Vec<&'a Value>)> {
        let first = views.first()?;
        'outer: for (name, _) in &first.props {
            let mut values = Vec::new();
            for v in views {
                // The last matching property wins (a branch's own `properties` come first,
                // the `$ref` target's after; the const is on the branch).
                let c = v
                    .props
                    .iter()
                    .filter(|(k, _)| k == name)
                    .find_map(|(_, p)| {
                        let p = self.resolve(p);
                        p.get("const").or_else(|| {
                            p.get("enum")
                                .and_then(Value::as_array)
                                .filter(|a| a.len() == 1)
                                .and_then(|a| a.first())
                        })
                    });
                match c {
                    Some(c) => values.push(c),
                    None => continue 'outer,
                }
            }
            return Some(((*name).to_owned(), values));
        }
        None
    }

    fn check_object(
        &mut self,
        view: &ObjView<'a>,
        o: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        let open = match view.additional {
            Some(Value::Bool(false)) => false,
            Some(_) => true,
            None => !view.has_props,
        };
        for (k, val) in o {
            let prop = view.prop(k).or_else(|| {
                if self.opts.snake_case_aliases {
                    snake_to_camel(k).and_then(|c| view.prop(&c))
                } else {
                    None
                }
            });
            let len = path.len();
            push_member(path, k);
            match prop {
                Some(ps) => {
                    let alias = view.prop(k).is_none();
                    let name = if alias {
                        snake_to_camel(k).unwrap_or_default()
                    } else {
                        k.clone()
                    };
                    if alias && o.contains_key(&name) {
                        // The same member under both spellings: which one a reader takes
                        // would decide what it sees, so neither is taken.
                        path.truncate(len);
                        self.violation(
                            path,
                            ViolationKind::ConflictingMembers(vec![name, k.clone()]),
                        );
                        continue;
                    }
                    if val.is_null() && !view.required.contains(&name.as_str()) {
                        // ProtoJSON: null means "default" for any field.
                    } else {
                        self.check(ps, val, path, depth + 1);
                    }
                    if alias {
                        self.renames.push(Rename {
                            at: path[..len].to_owned(),
                            from: k.clone(),
                            to: name,
                        });
                    }
                }
                None => {
                    if let Some((_, ps)) = view
                        .pattern_props
                        .iter()
                        .find(|(pat, _)| simple_pattern_match(pat, k))
                    {
                        self.check(ps, val, path, depth + 1);
                    } else if open {
                        if let Some(a @ Value::Object(_)) = view.additional {
                            self.check(a, val, path, depth + 1);
                        }
                    } else {
                        path.truncate(len);
                        self.violation(path, ViolationKind::UnknownMember(k.clone()));
                        continue;
                    }
                }
            }
            path.truncate(len);
        }
        for r in &view.required {
            let present = o.contains_key(*r)
                || (self.opts.snake_case_aliases
                    && o.keys().any(|k| snake_to_camel(k).as_deref() == Some(*r)));
            if !present {
                self.violation(path, ViolationKind::MissingRequired((*r).to_owned()));
            }
        }
    }

    fn check_scalar_union(&mut self, branches: &'a [Value], v: &Value, path: &str, depth: usize) {
        let resolved: Vec<&'a Value> = branches.iter().map(|b| self.resolve(b)).collect();
        // Enum-like unions (unit variants with docs): report one bad enum value.
        let consts: Vec<&Value> = resolved
            .iter()
            .filter_map(|b| {
                b.get("const").or_else(|| {
                    b.get("enum")
                        .and_then(Value::as_array)
                        .filter(|a| a.len() == 1)
                        .and_then(|a| a.first())
                })
            })
            .collect();
        if consts.len() == resolved.len() {
            if !consts.contains(&v) {
                self.violation(path, ViolationKind::BadEnumValue(v.to_string()));
            }
            return;
        }
        let mut best: Option<Vec<Violation>> = None;
        for b in &resolved {
            let mut w = Walker {
                root: self.root,
                opts: self.opts,
                out: Vec::new(),
                compiled: self.compiled,
                renames: Vec::new(),
            };
            let mut p = path.to_owned();
            w.check(b, v, &mut p, depth + 1);
            if w.out.is_empty() {
                return;
            }
            if best.as_ref().is_none_or(|bv| w.out.len() < bv.len()) {
                best = Some(w.out);
            }
        }
        if let Some(b) = best {
            self.out.extend(b);
        }
    }

    fn check_array(
        &mut self,
        s: &'a Map<String, Value>,
        a: &[Value],
        path: &mut String,
        depth: usize,
    ) {
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && (a.len() as u64) < min
        {
            self.violation(path, ViolationKind::TooFewItems { min });
        }
        if let Some(items) = s.get("items") {
            for (i, item) in a.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                self.check(items, item, path, depth + 1);
                path.truncate(len);
            }
        }
    }

    fn check_string(&mut self, s: &Map<String, Value>, st: &str, path: &str) {
        let Some(fmt) = s.get("format").and_then(Value::as_str) else {
            return;
        };
        match fmt {
            "byte" => {
                if let Err(e) = crate::binary::check(st) {
                    self.violation(
                        path,
                        ViolationKind::BadFormat {
                            format: "base64".into(),
                            detail: e.reason,
                        },
                    );
                }
            }
            "date-time" => match crate::timestamp::Timestamp::parse(st) {
                Err(e) => self.violation(
                    path,
                    ViolationKind::BadFormat {
                        format: "timestamp".into(),
                        detail: e.reason.into(),
                    },
                ),
                Ok(t) => {
                    if self.opts.require_utc_timestamps && t.as_str() != st {
                        self.violation(
                            path,
                            ViolationKind::BadFormat {
                                format: "timestamp".into(),
                                detail: format!("must be RFC 3339 UTC with Z (e.g. {t})"),
                            },
                        );
                    }
                }
            },
            _ => {}
        }
    }

    fn check_number(&mut self, s: &Map<String, Value>, n: &serde_json::Number, path: &str) {
        let Some(fmt) = s.get("format").and_then(Value::as_str) else {
            return;
        };
        let (lo, hi): (i128, i128) = match fmt {
            "int8" => (i8::MIN.into(), i8::MAX.into()),
            "int16" => (i16::MIN.into(), i16::MAX.into()),
            "int32" => (i32::MIN.into(), i32::MAX.into()),
            "int64" => (i64::MIN.into(), i64::MAX.into()),
            "uint8" => (0, u8::MAX.into()),
            "uint16" => (0, u16::MAX.into()),
            "uint32" => (0, u32::MAX.into()),
            "uint64" | "uint" => (0, u64::MAX.into()),
            _ => return,
        };
        let x: Option<i128> = n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i128));
        if x.is_none_or(|x| x < lo || x > hi) {
            self.violation(
                path,
                ViolationKind::BadFormat {
                    format: fmt.into(),
                    detail: format!("{n} is out of range"),
                },
            );
        }
    }
}

/// Minimal `patternProperties` support: `^prefix` / `suffix$` / exact anchors, else any.
fn simple_pattern_match(pat: &str, k: &str) -> bool {
    match (pat.strip_prefix('^'), pat.strip_suffix('$')) {
        (Some(p), _) if !p.contains(['*', '+', '[', '(', '.', '$']) => k.starts_with(p),
        _ => true,
    }
}
