//! The names a policy expression may use, checked when the policy is saved: every member it
//! reads of an attribute (`agent.id`, `message.bytes`, `pii.EMAIL`) is one the hop's facts
//! have, and every operation name it compares `operation` with is an A2A 1.0 operation. A rule
//! that names something else would fail (deny) or never match at hop time; it is refused at
//! save with the names that exist instead.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use serde_json::Value;

use crate::protocol::ops::{ALL, GatewayOp};

/// Checks `expr` against `facts` (the attributes of a sample hop); `at` prefixes the message.
pub(super) fn check(expr: &IdedExpr, facts: &Value, at: &str) -> Result<(), String> {
    let mut problem = None;
    walk(expr, &mut |e| {
        if problem.is_some() {
            return;
        }
        problem = member_problem(e, facts).or_else(|| operation_problem(e));
    });
    match problem {
        Some(p) => Err(format!("{at}.when: {p}")),
        None => Ok(()),
    }
}

/// `attr.member` where `attr` is an object attribute without `member`.
fn member_problem(e: &IdedExpr, facts: &Value) -> Option<String> {
    let Expr::Select(s) = &e.expr else {
        return None;
    };
    let Expr::Ident(attr) = &s.operand.expr else {
        return None;
    };
    let members = facts.get(attr)?.as_object()?;
    if members.contains_key(&s.field) {
        return None;
    }
    let known: Vec<&str> = members.keys().map(String::as_str).collect();
    Some(format!(
        "unknown member {attr}.{} (known members of {attr}: {})",
        s.field,
        known.join(", ")
    ))
}

/// `operation == 'X'`, `operation != 'X'` or `operation in ['X', ...]` with an `X` that is no
/// operation.
fn operation_problem(e: &IdedExpr) -> Option<String> {
    let Expr::Call(c) = &e.expr else {
        return None;
    };
    let is_op = |x: &IdedExpr| matches!(&x.expr, Expr::Ident(i) if i == "operation");
    let names: Vec<&str> = match (c.func_name.as_str(), c.args.as_slice()) {
        ("_==_" | "_!=_", [a, b]) if is_op(a) => literal(b).into_iter().collect(),
        ("_==_" | "_!=_", [a, b]) if is_op(b) => literal(a).into_iter().collect(),
        ("@in", [a, b]) if is_op(a) => match &b.expr {
            Expr::List(l) => l.elements.iter().filter_map(literal).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let unknown = names
        .into_iter()
        .find(|n| !ALL.iter().any(|op| op.name_10() == *n))?;
    let known: Vec<&str> = ALL.iter().map(|op| op.name_10()).collect();
    Some(format!(
        "unknown operation {unknown:?} (operations: {})",
        known.join(", ")
    ))
}

fn literal(e: &IdedExpr) -> Option<&str> {
    match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => Some(s.inner()),
        _ => None,
    }
}

/// Calls `f` on `e` and every expression under it.
fn walk(e: &IdedExpr, f: &mut impl FnMut(&IdedExpr)) {
    f(e);
    match &e.expr {
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                walk(t, f);
            }
            for a in &c.args {
                walk(a, f);
            }
        }
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                walk(x, f);
            }
        }
        Expr::List(l) => {
            for x in &l.elements {
                walk(x, f);
            }
        }
        Expr::Map(m) => {
            for en in &m.entries {
                if let EntryExpr::MapEntry(me) = &en.expr {
                    walk(&me.key, f);
                    walk(&me.value, f);
                }
            }
        }
        Expr::Struct(s) => {
            for en in &s.entries {
                match &en.expr {
                    EntryExpr::StructField(sf) => walk(&sf.value, f),
                    EntryExpr::MapEntry(me) => {
                        walk(&me.key, f);
                        walk(&me.value, f);
                    }
                }
            }
        }
        Expr::Select(s) => walk(&s.operand, f),
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
    }
}
