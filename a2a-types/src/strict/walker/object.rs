//! Objects: the merged view of an object schema ([`ObjView`]) and the check of members and required.

use serde_json::{Map, Value};

use super::names::{push_member, snake_to_camel};
use super::{Rename, Walker};
use crate::strict::ViolationKind;

fn str_list(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The parts of an object schema, merged from a node and its selected union branch.
#[derive(Default, Clone)]
pub(in crate::strict) struct ObjView<'a> {
    pub(in crate::strict) props: Vec<(&'a str, &'a Value)>,
    pub(in crate::strict) required: Vec<&'a str>,
    /// `None` = not specified.
    pub(in crate::strict) additional: Option<&'a Value>,
    pub(in crate::strict) pattern_props: Vec<(&'a str, &'a Value)>,
    pub(in crate::strict) has_props: bool,
}

impl<'a> ObjView<'a> {
    pub(in crate::strict) fn absorb(&mut self, s: &'a Map<String, Value>) {
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

    pub(super) fn prop(&self, name: &str) -> Option<&'a Value> {
        self.props.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }
}

impl<'a> Walker<'a> {
    pub(super) fn check_object(
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
}

/// Minimal `patternProperties` support: `^prefix` / `suffix$` / exact anchors, else any.
fn simple_pattern_match(pat: &str, k: &str) -> bool {
    match (pat.strip_prefix('^'), pat.strip_suffix('$')) {
        (Some(p), _) if !p.contains(['*', '+', '[', '(', '.', '$']) => k.starts_with(p),
        _ => true,
    }
}
