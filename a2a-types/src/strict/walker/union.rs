//! Unions (`oneOf`/`anyOf`): how a branch is chosen ([`UnionPlan`]) and the walk of each kind.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::Walker;
use super::names::{push_member, snake_to_camel};
use super::object::ObjView;
use crate::strict::{Violation, ViolationKind};

/// How a union's branch is chosen (computed once per union node).
pub(in crate::strict) enum UnionPlan {
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

impl<'a> Walker<'a> {
    /// Analyzes a union once (cached per schema node for cached schemas).
    fn plan(&self, branches: &'a [Value]) -> Arc<UnionPlan> {
        if let Some(p) = self.compiled.and_then(|c| c.plan(branches)) {
            return p;
        }
        Arc::new(self.analyze(branches))
    }

    pub(in crate::strict) fn analyze(&self, branches: &'a [Value]) -> UnionPlan {
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
    pub(super) fn select_branch(
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
            let mut w = Walker::new(self.root, self.opts, self.compiled);
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

    pub(super) fn check_scalar_union(
        &mut self,
        branches: &'a [Value],
        v: &Value,
        path: &str,
        depth: usize,
    ) {
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
            let mut w = Walker::new(self.root, self.opts, self.compiled);
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
}
