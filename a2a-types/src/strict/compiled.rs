//! What the walker would work out again at every node, worked out once per schema.
//!
//! The walker reads a schema node as several maps (the node, its `$ref` target, its `allOf`
//! members), then looks up a dozen keywords in each and gathers the object members they
//! declare. For the schemas of the crate's own types (cached per type for the life of the
//! process) that work is the same on every call: a [`Compiled`] holds it for every node of the
//! schema, keyed by the node's address, and the plan of every union. A validator built from a
//! caller's schema ([`Validator::from_schema`](super::Validator::from_schema)) is not compiled:
//! the walker computes the same facts on the spot (see [`NodeInfo::of`]), so both paths give
//! the same violations.
//!
//! The cached schemas are leaked (`&'static`): one per type, never freed, which is what lets the
//! compiled facts borrow from them without copying.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{ObjView, Options, UnionPlan, Walker};

/// The facts of one schema node.
#[derive(Default)]
pub(super) struct NodeInfo<'a> {
    /// The maps that apply together at the node; `None`: a `false` schema is among them.
    pub parts: Option<Vec<&'a Map<String, Value>>>,
    /// The object members the parts declare (without union branches).
    pub view: ObjView<'a>,
    /// The `oneOf`/`anyOf` branch lists of the parts.
    pub unions: Vec<&'a Vec<Value>>,
    /// Whether an object here has members to check (properties, required, ...).
    pub object_rules: bool,
}

impl<'a> NodeInfo<'a> {
    /// The facts of `schema`, computed now.
    pub fn of(w: &Walker<'a>, schema: &'a Value) -> NodeInfo<'a> {
        let Ok(parts) = w.parts(schema) else {
            return NodeInfo::default();
        };
        let mut view = ObjView::default();
        for s in &parts {
            view.absorb(s);
        }
        let unions = parts
            .iter()
            .filter_map(|s| {
                s.get("oneOf")
                    .or_else(|| s.get("anyOf"))
                    .and_then(Value::as_array)
            })
            .collect();
        let object_rules = view.has_props
            || view.additional.is_some()
            || !view.required.is_empty()
            || !view.pattern_props.is_empty();
        NodeInfo {
            parts: Some(parts),
            view,
            unions,
            object_rules,
        }
    }
}

/// Every node's facts and every union's plan of one schema.
pub(super) struct Compiled {
    /// The schema (leaked: lives as long as the process).
    pub root: &'static Value,
    nodes: HashMap<usize, NodeInfo<'static>>,
    plans: HashMap<usize, Arc<UnionPlan>>,
}

fn addr<T>(v: &T) -> usize {
    v as *const T as usize
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("nodes", &self.nodes.len())
            .field("plans", &self.plans.len())
            .finish()
    }
}

impl Compiled {
    /// Compiles `root` (every object in it is treated as a possible schema node).
    pub fn build(root: &'static Value) -> Compiled {
        let w = Walker::new(root, Options::PROTOJSON, None);
        let mut c = Compiled {
            root,
            nodes: HashMap::new(),
            plans: HashMap::new(),
        };
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(m) => {
                    c.nodes.insert(addr(v), NodeInfo::of(&w, v));
                    for key in ["oneOf", "anyOf"] {
                        if let Some(Value::Array(branches)) = m.get(key) {
                            let plan = Arc::new(w.analyze(branches));
                            c.plans.insert(branches.as_ptr() as usize, plan);
                        }
                    }
                    stack.extend(m.values());
                }
                Value::Array(a) => stack.extend(a.iter()),
                _ => {}
            }
        }
        c
    }

    /// The facts of `node`, if it belongs to this schema.
    pub fn node(&self, node: &Value) -> Option<&NodeInfo<'static>> {
        self.nodes.get(&addr(node))
    }

    /// The plan of the union whose branches are `branches`.
    pub fn plan(&self, branches: &[Value]) -> Option<Arc<UnionPlan>> {
        self.plans.get(&(branches.as_ptr() as usize)).cloned()
    }
}
