//! The attack suite of issue 39: a table of (caller form × peer answer path × peer version)
//! rows, each run in three workspaces of one gateway: one without PII rules (the control), one
//! whose rules redact the e-mail, card number and SSN, one whose rules block them. The peer
//! (`common::leaky`) puts those values, in the evasion forms of the PII corpus and split across
//! parts and chunks, into every member it answers; everything the caller received (bodies,
//! events, headers, gRPC statuses) and everything the caller's webhook received is searched for
//! them with a normalised search (`common::leaks`), so an evasion form counts.
//!
//! Each row must be able to fail: the control must find the values the row carries (else the
//! row tests nothing); then with `redact` none of them may be found and each kind's placeholder
//! must be, and with `block` none may be found and the caller gets `a2a_pii_blocked` (a webhook
//! gets nothing). Rows that carry nothing by design (the extended card, which the gateway does
//! not forward) must carry nothing in every workspace.

use crate::common;

use std::collections::HashMap;

use a2a_gateway::errors::Version;
use a2a_gateway::ownership::Owner;
use common::callers::{Call, FORMS, Form, call};
use common::gov::admin;
use common::leaks::{Got, Hooks, hooks};
use common::leaky::{self, LeakyPeer};
use common::*;
use futures::StreamExt;
use serde_json::{Value, json};

/// The peer answer paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Send,
    Stream,
    Get,
    List,
    Cancel,
    Subscribe,
    /// The peer's error (its reason, message and metadata).
    Error,
    /// An error event ending a stream.
    StreamError,
    /// An answer the gateway cannot read, whose refusal would quote the peer's value.
    Invalid,
    /// Notifications to the caller's webhook (1.0 or 0.3 as the caller's form).
    Push,
    /// A send with an inline push config, which the peer echoes in its answer.
    SendPush,
    /// CreateTaskPushNotificationConfig answered with a config of the peer's making.
    PushCreate,
    /// GetTaskPushNotificationConfig.
    PushGet,
    /// ListTaskPushNotificationConfigs: the caller's sealed config, and one of the peer's.
    PushList,
    /// The governed card.
    Card,
    /// GetExtendedAgentCard: never forwarded.
    Extended,
}

const PATHS: [Path; 16] = [
    Path::Send,
    Path::Stream,
    Path::Get,
    Path::List,
    Path::Cancel,
    Path::Subscribe,
    Path::Error,
    Path::StreamError,
    Path::Invalid,
    Path::Push,
    Path::SendPush,
    Path::PushCreate,
    Path::PushGet,
    Path::PushList,
    Path::Card,
    Path::Extended,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Redact,
    Block,
}

impl Mode {
    fn ws(self) -> &'static str {
        match self {
            Mode::Off => "atk-off",
            Mode::Redact => "atk-redact",
            Mode::Block => "atk-block",
        }
    }
}

/// One row of the table (run in the three workspaces).
#[derive(Debug, Clone, Copy)]
struct Row {
    form: Form,
    path: Path,
    peer: Version,
}

impl Row {
    /// Whether the row's answer carries the peer's values when no rule reads it.
    fn carries(self) -> bool {
        self.path != Path::Extended
    }

    fn tag(self) -> &'static str {
        match self.peer {
            Version::V1 => "1",
            Version::V03 => "03",
        }
    }
}

/// Every row: each form with each path it has, at both peer versions. A 0.3 peer's error has
/// no ErrorInfo, and a 0.3 caller's error form no reason, so nothing of a peer's error reaches
/// either: those error rows are left out (a 0.3 caller's stream error row stays: the events
/// before the error carry the values).
fn rows() -> Vec<Row> {
    let mut out = Vec::new();
    for peer in [Version::V1, Version::V03] {
        for form in FORMS {
            for path in PATHS {
                let call = match path {
                    Path::List => Call::List,
                    _ => Call::Card,
                };
                if !form.has(&call)
                    || (peer == Version::V03 && matches!(path, Path::Error | Path::StreamError))
                    || (!form.is_v1() && path == Path::Error)
                {
                    continue;
                }
                out.push(Row { form, path, peer });
            }
        }
    }
    out
}

struct Suite {
    env: Env,
    v1: LeakyPeer,
    v03: LeakyPeer,
    keys: HashMap<&'static str, String>,
    hook_base: String,
    hooks: Hooks,
}

impl Suite {
    fn peer(&self, v: Version) -> &LeakyPeer {
        match v {
            Version::V1 => &self.v1,
            Version::V03 => &self.v03,
        }
    }

    fn bind(&self, ws: &str, peer: Version, agent: &str, task: &str) {
        self.env
            .store
            .bind_task(
                &self.peer(peer).url,
                task,
                &Owner {
                    workspace_id: ws.into(),
                    agent_id: agent.into(),
                },
            )
            .unwrap();
    }
}

/// One gateway (gRPC callers on, sealed push through its own callback URL), the two leaky
/// peers, the three workspaces with their rules, and a webhook receiver.
async fn suite() -> Suite {
    let env = env_with(Version::V1, |c| {
        c.serve_grpc = true;
        c.push_callback_base_url = Some(format!("http://{}", c.listen));
    })
    .await;
    let (v1, v03) = (
        leaky::start(Version::V1).await,
        leaky::start(Version::V03).await,
    );
    let (hook_base, hooks) = hooks().await;
    let mut suite = Suite {
        env,
        v1,
        v03,
        keys: HashMap::new(),
        hook_base,
        hooks,
    };
    let rule = |action: &str| {
        json!({"default_action": "record",
            "actions": {"EMAIL": action, "PAYMENT_CARD": action, "US_SSN": action}})
    };
    for mode in [Mode::Off, Mode::Redact, Mode::Block] {
        let ws = mode.ws();
        suite.env.store.create_workspace(ws, ws).unwrap();
        let (_, key) = suite.env.store.create_key(ws, &[], None, None).unwrap();
        suite.keys.insert(ws, key);
        for peer in [Version::V1, Version::V03] {
            let url = suite.peer(peer).url.clone();
            let tag = if peer == Version::V1 { "1" } else { "03" };
            for agent in ["leaky", "push"] {
                suite.env.register(ws, &format!("{agent}{tag}"), &url, None);
            }
            // Tasks of the workspace's own at the shared peer.
            for task in ["t-get", "t-cancel", "t-sub"] {
                suite.bind(ws, peer, &format!("leaky{tag}"), &format!("{task}-{ws}"));
            }
        }
        // The governed card lists the peer's extension (its description and params).
        let (s, b) = admin(
            &suite.env,
            "PATCH",
            &format!("/admin/workspaces/{ws}/settings"),
            Some(json!({"a2a.extensions.allowed": [leaky::EXT]})),
        )
        .await;
        assert_eq!(s, 200, "{b}");
        let rules = match mode {
            Mode::Off => continue,
            Mode::Redact => rule("redact"),
            Mode::Block => rule("block"),
        };
        let (s, b) = admin(
            &suite.env,
            "PUT",
            &format!("/admin/workspaces/{ws}/pii"),
            Some(rules),
        )
        .await;
        assert_eq!(s, 200, "{b}");
    }
    suite
}

/// Notifies the sealed callback the peer was given for `task`, as the peer would: two 1.0
/// events (status, artifact) from a 1.0 peer, the 0.3 Task from a 0.3 peer.
async fn notify(s: &Suite, peer: Version, task: &str) {
    let Some((url, token)) = s.peer(peer).push_config(task) else {
        return;
    };
    let bodies: Vec<(&str, Value)> = match peer {
        Version::V1 => vec![
            ("application/a2a+json", leaky::notification(task, false)),
            ("application/a2a+json", leaky::notification(task, true)),
        ],
        Version::V03 => {
            let t = leaky::task(task, "TASK_STATE_WORKING");
            let t03 = a2a_gateway::xlate::result(
                a2a_gateway::ops::Operation::GetTask,
                Version::V1,
                Version::V03,
                &t,
            )
            .unwrap();
            vec![("application/json", t03)]
        }
    };
    for (ct, body) in bodies {
        let r = s
            .env
            .http
            .post(&url)
            .header("content-type", ct)
            .header("x-a2a-notification-token", &token)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{url}: {}", r.status());
    }
}

/// Runs `row` in `mode`'s workspace (`n` names its push task and webhook): what the caller
/// received, and what its webhook received.
async fn run(s: &Suite, row: Row, mode: Mode, n: usize) -> (Got, Got) {
    let ws = mode.ws();
    let tag = row.tag();
    let agent = format!("leaky{tag}");
    let c = match row.path {
        Path::Send => Call::Send("hello".into()),
        Path::Stream => Call::Stream("hello".into()),
        Path::Get => Call::Get(format!("t-get-{ws}")),
        Path::List => Call::List,
        Path::Cancel => Call::Cancel(format!("t-cancel-{ws}")),
        Path::Subscribe => Call::Subscribe(format!("t-sub-{ws}")),
        Path::Error => Call::Send("error".into()),
        Path::StreamError => Call::Stream("error".into()),
        Path::Invalid => Call::Send("invalid".into()),
        Path::Card => Call::Card,
        Path::Extended => Call::Extended,
        Path::SendPush => Call::SendPush("hello".into(), format!("{}/hook/{n}-{ws}", s.hook_base)),
        Path::PushCreate | Path::PushGet | Path::PushList => {
            let agent = format!("push{tag}");
            let task = match row.path {
                Path::PushCreate => format!("t-cfg-{n}-{ws}"),
                _ => format!("t-conf-{n}-{ws}"),
            };
            s.bind(ws, row.peer, &agent, &task);
            let hook = format!("{}/hook/{n}-{ws}", s.hook_base);
            let (agent, key) = (&agent, &s.keys[ws]);
            let go = |c: Call| async move {
                let base = s.env.gw.base_url();
                call(
                    &s.env.http,
                    &base,
                    s.env.gw.local_addr(),
                    key,
                    row.form,
                    agent,
                    &c,
                )
                .await
            };
            let c = match row.path {
                Path::PushCreate => Call::PushSet(task, hook),
                Path::PushGet => Call::PushGet(task, "cfg-peer".into()),
                _ => {
                    // The caller's own config first (sealed; the peer answers it plainly).
                    go(Call::PushSet(task.clone(), hook)).await;
                    Call::PushList(task)
                }
            };
            return (go(c).await, Got::default());
        }
        Path::Push => {
            let agent = format!("push{tag}");
            let task = format!("t-push-{n}-{ws}");
            s.bind(ws, row.peer, &agent, &task);
            let hook = format!("{}/hook/{n}-{ws}", s.hook_base);
            let got = call(
                &s.env.http,
                &s.env.gw.base_url(),
                s.env.gw.local_addr(),
                &s.keys[ws],
                row.form,
                &agent,
                &Call::PushSet(task.clone(), hook),
            )
            .await;
            notify(s, row.peer, &task).await;
            let hook = s
                .hooks
                .lock()
                .unwrap()
                .remove(&format!("{n}-{ws}"))
                .unwrap_or_default();
            return (got, hook);
        }
    };
    let base = s.env.gw.base_url();
    let got = call(
        &s.env.http,
        &base,
        s.env.gw.local_addr(),
        &s.keys[ws],
        row.form,
        &agent,
        &c,
    )
    .await;
    (got, Got::default())
}

/// The start of what was received, for a failure's line.
fn short(g: &Got) -> String {
    format!("{g:?}").chars().take(600).collect()
}

/// The row's verdicts in the three workspaces; each failure as a line.
async fn check(s: &Suite, row: Row, n: usize) -> Vec<String> {
    let mut fails = Vec::new();
    let name = format!(
        "{:?} {:?} at a {} peer",
        row.form,
        row.path,
        row.peer.as_str()
    );
    let (off, off_hook) = run(s, row, Mode::Off, n).await;
    let mut all = off.clone();
    all.extend(off_hook);
    let carried = all.leaks();
    if row.carries() && carried.is_empty() {
        fails.push(format!(
            "{name}: the control carries no value (the row tests nothing): {}",
            short(&off)
        ));
    }
    if !row.carries() && !carried.is_empty() {
        fails.push(format!("{name}: delivers {carried:?} with no rules"));
    }
    for mode in [Mode::Redact, Mode::Block] {
        let (got, hook) = run(s, row, mode, n).await;
        let mut all = got.clone();
        all.extend(hook.clone());
        let leaked = all.leaks();
        if !leaked.is_empty() {
            fails.push(format!(
                "{name} [{mode:?}]: delivered {leaked:?} in {:?}",
                all.leaking()
            ));
            continue;
        }
        if !row.carries() {
            continue;
        }
        match mode {
            Mode::Redact => {
                for k in &carried {
                    if !all.contains(&format!("[REDACTED:{k}]")) {
                        fails.push(format!(
                            "{name} [redact]: no {k} placeholder: {}",
                            short(&all)
                        ));
                    }
                }
            }
            _ => {
                let blocked = if row.path == Path::Push {
                    hook.is_empty()
                } else {
                    got.contains("a2a_pii_blocked")
                };
                if !blocked {
                    fails.push(format!("{name} [block]: not refused: {}", short(&all)));
                }
            }
        }
    }
    fails
}

/// The PII step's decision a workspace's rules make.
fn mode_decision(mode: Mode) -> &'static str {
    match mode {
        Mode::Off => "record",
        Mode::Redact => "redact",
        Mode::Block => "block",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_planted_value_reaches_a_caller_or_a_webhook_unredacted() {
    let s = suite().await;
    let rows = rows();
    assert!(rows.len() >= 200, "{} rows", rows.len());
    let fails: Vec<String> = futures::stream::iter(rows.iter().enumerate())
        .map(|(n, row)| check(&s, *row, n))
        .buffer_unordered(6)
        .flat_map(futures::stream::iter)
        .collect()
        .await;
    assert!(
        fails.is_empty(),
        "{} failures of {} rows:\n{}",
        fails.len(),
        rows.len(),
        fails.join("\n")
    );
    // The audit keeps kinds and counts, never a value.
    for mode in [Mode::Redact, Mode::Block] {
        let hops = s.env.store.audit(Some(mode.ws()), None, 0, 10_000).unwrap();
        let mut got = Got::default();
        got.value(serde_json::to_value(&hops).unwrap());
        assert!(got.leaks().is_empty(), "{mode:?}: the audit keeps a value");
        // A push config answer's findings are the hop's evidence.
        let hops = serde_json::to_value(&hops).unwrap();
        for op in [
            "tasks/pushNotificationConfig/set",
            "tasks/pushNotificationConfig/get",
            "tasks/pushNotificationConfig/list",
        ] {
            let found = hops.as_array().into_iter().flatten().any(|h| {
                h["operation"] == op
                    && h["governance"]["pii"]["EMAIL"].as_u64().unwrap_or(0) > 0
                    && h["governance"]["decisions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|d| d["step"] == "pii" && d["decision"] == mode_decision(mode))
            });
            assert!(found, "{mode:?}: no {op} hop with its PII evidence");
        }
    }
    s.v1.stop();
    s.v03.stop();
    s.env.stop().await;
}
