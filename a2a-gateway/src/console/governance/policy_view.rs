//! What the policy page shows besides its form: an explain's answer, and what the dry-run
//! rules recorded over the workspace's recent hops.

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::html::{esc, notice};
use super::policy_form::PolicyForm;
use crate::state::GatewayState;
use crate::store::HopFilter;
use crate::store::backend::AuditStore;

/// Recent hops the dry-run results are read from.
pub(crate) const DRY_RUN_HOPS: i64 = 500;

/// An explain answer: the decision, the deciding rule and each rule's result.
pub(crate) fn explain_view(v: &Value) -> String {
    let mut rows = String::new();
    for t in v["trace"].as_array().into_iter().flatten() {
        let result = match (t.get("result"), t.get("error")) {
            (_, Some(e)) if !e.is_null() => format!(
                r#"<span class="bad">error: {}</span>"#,
                esc(e.as_str().unwrap_or_default())
            ),
            (Some(r), _) => esc(&r.to_string()),
            _ => "—".into(),
        };
        rows.push_str(&format!(
            r#"<tr><th scope="row"><code>{}</code></th><td>{result}</td><td>{}</td></tr>"#,
            esc(t["id"].as_str().unwrap_or_default()),
            if t["dry_run"].as_bool() == Some(true) {
                "yes"
            } else {
                ""
            }
        ));
    }
    if rows.is_empty() {
        rows.push_str(r#"<tr><td colspan="3">No rule was evaluated.</td></tr>"#);
    }
    let note = v["note"]
        .as_str()
        .map(|n| format!(r#"<p class="hint">{}</p>"#, esc(n)))
        .unwrap_or_default();
    format!(
        r#"<section aria-labelledby="explained" id="explain-result"><h2 id="explained">Explained (nothing saved)</h2>
<div class="notice" role="status">Decision <strong class="decision-{d}">{d}</strong> by rule <code>{r}</code>.</div>{note}
<div class="scroll"><table><caption>Each rule's result, in order (evaluation stops at the deciding rule)</caption>
<thead><tr><th scope="col">Rule</th><th scope="col">Condition result</th><th scope="col">Dry run</th></tr></thead>
<tbody>{rows}</tbody></table></div></section>"#,
        d = esc(v["decision"].as_str().unwrap_or_default()),
        r = esc(v["rule"].as_str().unwrap_or_default()),
    )
}

/// What the dry-run rules recorded over the workspace's recent hops.
pub(crate) async fn dry_run_results(st: &GatewayState, ws: &str, form: &PolicyForm) -> String {
    let f = HopFilter {
        workspace: Some(ws.to_owned()),
        ..Default::default()
    };
    let hops = match st.audit.hop_page(&f, None, DRY_RUN_HOPS).await {
        Ok(h) => h,
        Err(e) => return notice(&format!("The hops could not be read: {e}"), true),
    };
    // rule -> (would-be decision -> count, newest hop)
    let mut seen: BTreeMap<String, (BTreeMap<String, u64>, i64)> = BTreeMap::new();
    for h in &hops {
        let decisions = h
            .governance
            .as_ref()
            .and_then(|g| g.get("decisions"))
            .and_then(Value::as_array);
        for d in decisions.into_iter().flatten() {
            if d["step"] != "policy_dry_run" {
                continue;
            }
            let rule = d["rule"].as_str().unwrap_or_default().to_owned();
            let e = seen.entry(rule).or_default();
            *e.0.entry(d["decision"].as_str().unwrap_or_default().to_owned())
                .or_default() += 1;
            e.1 = e.1.max(h.seq);
        }
    }
    let dry_rules: Vec<&str> = form
        .rules
        .iter()
        .filter(|r| r.dry_run)
        .map(|r| r.id.as_str())
        .collect();
    let mut rows = String::new();
    for (rule, (counts, newest)) in &seen {
        let would: Vec<String> = counts.iter().map(|(d, n)| format!("{d}: {n}")).collect();
        rows.push_str(&format!(
            r#"<tr><th scope="row"><code>{}</code></th><td>{}</td><td><a href="/console/hops/{newest}">hop {newest}</a></td></tr>"#,
            esc(rule),
            esc(&would.join(", ")),
        ));
    }
    for r in dry_rules.iter().filter(|r| !seen.contains_key(**r)) {
        rows.push_str(&format!(
            r#"<tr><th scope="row"><code>{}</code></th><td>no match yet</td><td>—</td></tr>"#,
            esc(r)
        ));
    }
    if rows.is_empty() {
        rows.push_str(r#"<tr><td colspan="3">No dry-run rule, and no dry-run evidence in these hops.</td></tr>"#);
    }
    format!(
        r#"<section aria-labelledby="dry-runs"><h2 id="dry-runs">Dry-run results</h2>
<div class="scroll"><table id="dry-run-results"><caption>What dry-run rules would have decided, over the last {n} hops of {wse} ({DRY_RUN_HOPS} at most)</caption>
<thead><tr><th scope="col">Rule</th><th scope="col">Would have decided (hops)</th><th scope="col">Newest</th></tr></thead>
<tbody>{rows}</tbody></table></div></section>"#,
        n = hops.len(),
        wse = esc(ws),
    )
}
