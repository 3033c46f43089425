//! The one table of SDK checks (`TABLE`): six official SDK clients (a2a-sdk 1.x in 1.0 and 0.3
//! mode, a2a-sdk 0.3.x, each over JSON-RPC and HTTP+JSON) drive an agent with the behaviour of
//! `reference.rs` and every row checks what that client's version of the spec promises. Run
//! against our agents (`tests/interop.rs`) and, unchanged, through the gateway to a reference
//! agent (`a2a-gateway/tests/interop_table.rs`, which includes this file and `sdk.rs`) and to the
//! official SDK agents (`a2a-gateway/tests/interop_peers.rs`, which names the rows an SDK peer
//! fails: `Skip`, `problems`). A run reports every failed check of every client at once.

use super::sdk::{Receiver, events, op, receiver, run, st};
use serde_json::{Value, json};
use std::collections::HashMap;

/// One SDK client in one mode over one binding.
#[derive(Clone, Copy, Debug)]
struct Client {
    /// The venv: `sdk1` (a2a-sdk 1.3.0), `sdk103` (1.0.3, running the 1.x driver), `sdk03`.
    sdk: &'static str,
    /// `--protocol-version` (only the card interfaces of that version); None: the SDK's own.
    version: Option<&'static str>,
    binding: &'static str,
}

const CLIENTS: [Client; 6] = [
    Client {
        sdk: "sdk1",
        version: Some("1.0"),
        binding: "jsonrpc",
    },
    Client {
        sdk: "sdk1",
        version: Some("1.0"),
        binding: "rest",
    },
    Client {
        sdk: "sdk1",
        version: Some("0.3"),
        binding: "jsonrpc",
    },
    Client {
        sdk: "sdk1",
        version: Some("0.3"),
        binding: "rest",
    },
    Client {
        sdk: "sdk03",
        version: None,
        binding: "jsonrpc",
    },
    Client {
        sdk: "sdk03",
        version: None,
        binding: "rest",
    },
];

/// a2a-sdk 1.0.3, the release the DVARA API names, in 1.0 mode (its own choice) over JSON-RPC and
/// HTTP+JSON: added to a run by [`Releases::WithSdk103`].
const SDK103: [Client; 2] = [
    Client {
        sdk: "sdk103",
        version: Some("1.0"),
        binding: "jsonrpc",
    },
    Client {
        sdk: "sdk103",
        version: Some("1.0"),
        binding: "rest",
    },
];

/// a2a-sdk 1.x over gRPC (1.0 only): run by [`run_grpc`] against agents that serve gRPC.
const GRPC: Client = Client {
    sdk: "sdk1",
    version: Some("1.0"),
    binding: "grpc",
};

/// Which official SDK releases drive a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Releases {
    /// a2a-sdk 1.3.0 (1.0 and 0.3 mode) and 0.3.26: the six clients (gRPC: 1.3.0).
    Current,
    /// Those, and a2a-sdk 1.0.3 in 1.0 mode (JSON-RPC and HTTP+JSON; gRPC too in [`run_grpc_of`]).
    WithSdk103,
    /// a2a-sdk 1.0.3 alone.
    OnlySdk103,
}

impl Releases {
    fn clients(self) -> Vec<Client> {
        match self {
            Releases::Current => CLIENTS.to_vec(),
            Releases::WithSdk103 => CLIENTS.iter().chain(&SDK103).copied().collect(),
            Releases::OnlySdk103 => SDK103.to_vec(),
        }
    }
    /// Over gRPC: a2a-sdk 1.3.0 and/or 1.0.3.
    fn grpc_clients(self) -> Vec<Client> {
        let sdk103 = Client {
            sdk: "sdk103",
            ..GRPC
        };
        match self {
            Releases::Current => vec![GRPC],
            Releases::WithSdk103 => vec![GRPC, sdk103],
            Releases::OnlySdk103 => vec![sdk103],
        }
    }
}

impl Client {
    fn tag(&self) -> String {
        format!(
            "{}-{}-{}",
            self.sdk,
            self.version.unwrap_or("0.3"),
            self.binding
        )
    }
    /// The protocol version spoken on the wire.
    fn v03(&self) -> bool {
        self.version != Some("1.0")
    }
    fn rest(&self) -> bool {
        self.binding == "rest"
    }
    /// gRPC has no raw HTTP bodies: the malformed-JSON / unknown-method / version rows are
    /// HTTP-only (the gRPC forms are checked in `a2a-agent/tests/grpc.rs`).
    fn grpc(&self) -> bool {
        self.binding == "grpc"
    }
    /// An a2a-sdk 1.x release (1.3.0 or 1.0.3): the 1.x driver, protobuf dumps.
    fn is_1x(&self) -> bool {
        self.sdk != "sdk03"
    }
    /// A state as this client's dump names it (`completed` / `TASK_STATE_COMPLETED`).
    fn state(&self, short: &str) -> String {
        if !self.is_1x() {
            short.to_string()
        } else {
            format!(
                "TASK_STATE_{}",
                short.to_ascii_uppercase().replace('-', "_")
            )
        }
    }
    /// a2a-sdk 1.3.0's 0.3 compat REST client decodes a `fileWithBytes` part twice
    /// (`compat/v0_3/proto_utils.py` takes the decoded bytes for base64 text: "Incorrect
    /// padding"), so a task with a file part breaks its stream and its GetTask. That client alone
    /// asks for the report "inline" (a text part); the 0.3.x SDK reads the file part over the same
    /// binding. docs/agent.md, "Tests".
    fn reads_file_parts(&self) -> bool {
        !(self.is_1x() && self.v03() && self.rest())
    }
    /// The HTTP+JSON path of a method (0.3 paths start with `/v1`).
    fn path(&self, p: &str) -> String {
        if self.v03() {
            format!("/v1{p}")
        } else {
            p.to_string()
        }
    }
}

/// What a row sees: the client, the webhook, and the driver's output.
struct Run<'a> {
    c: Client,
    hook: &'a str,
    lines: &'a [Value],
    index: &'a HashMap<&'static str, u64>,
}

impl Run<'_> {
    fn token(&self, n: u8) -> String {
        format!("tok{n}-{}", self.c.tag())
    }
    /// The closing record of row `name`.
    fn rec(&self, name: &str) -> &Value {
        op(self.lines, self.index[name])
    }
    fn events(&self, name: &str) -> Vec<&Value> {
        events(self.lines, self.index[name])
    }
    fn result(&self, name: &str) -> &Value {
        let r = &self.rec(name)["result"];
        r.get("task").unwrap_or(r)
    }
    fn state(&self, name: &str) -> String {
        st(&self.rec(name)["result"])
    }
    /// Submitted or working: not finished yet.
    fn running(&self, name: &str) {
        let s = self.state(name);
        let ok = s == self.c.state("submitted") || s == self.c.state("working");
        assert!(ok, "{}", self.rec(name));
    }
    fn is(&self, name: &str, short: &str) {
        assert_eq!(self.state(name), self.c.state(short), "{}", self.rec(name));
    }
    /// The op failed with JSON-RPC `code` / HTTP `status`, and (sdk1, whose clients map errors
    /// to classes except over 0.3 HTTP+JSON) the SDK's error class `class`.
    fn fails(&self, name: &str, code: i64, status: u16, class: Option<&str>) {
        let r = self.rec(name);
        assert_eq!(r["ok"], false, "{r}");
        let e = &r["error"];
        if self.c.rest() {
            assert_eq!(e["httpStatus"], status, "{r}");
        } else {
            assert_eq!(e["code"], code, "{r}");
        }
        if let (Some(class), true, false) = (class, self.c.is_1x(), self.c.rest() && self.c.v03()) {
            assert_eq!(e["type"], class, "{r}");
        }
    }
}

struct Row {
    name: &'static str,
    /// The op for this client (None: not for it).
    op: fn(&Run) -> Option<Value>,
    check: fn(&Run),
}

/// A JSON-RPC request body, or an HTTP+JSON one, as text (for the `raw` op).
fn raw(r: &Run, method: &str, path: &str, body: Value, extra: Value) -> Value {
    let (path, body) = if r.c.rest() {
        (r.c.path(path), body.to_string())
    } else {
        let rpc = json!({"jsonrpc": "2.0", "id": "r1", "method": method, "params": body});
        (String::new(), rpc.to_string())
    };
    let mut v = json!({"op": "raw", "path": path, "body": body});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    v
}

fn report_text(r: &Run, text: &str) -> String {
    if r.c.reads_file_parts() {
        text.to_string()
    } else {
        format!("{text} inline")
    }
}

fn artifacts(task: &Value) -> String {
    task["artifacts"].to_string()
}

const TABLE: &[Row] = &[
    Row {
        name: "card",
        op: |_| Some(json!({"op": "card"})),
        check: |r| {
            assert!(
                r.rec("card")["result"]["name"].is_string(),
                "{}",
                r.rec("card")
            )
        },
    },
    // send: a direct message, no task
    Row {
        name: "direct",
        op: |_| Some(json!({"op": "send", "text": "quick question"})),
        check: |r| {
            let res = &r.rec("direct")["result"];
            let m = res.get("message").unwrap_or(res);
            assert!(
                m["parts"]
                    .to_string()
                    .contains("quick answer to: quick question"),
                "{res}"
            );
            assert!(
                res.get("task").is_none() && res.get("status").is_none(),
                "{res}"
            );
        },
    },
    // stream: progress, a file artifact, input required
    Row {
        name: "report",
        op: |r| Some(json!({"op": "stream", "text": report_text(r, "make a report")})),
        check: |r| {
            let evs = r.events("report");
            assert!(evs.len() >= 4, "{evs:?}");
            let all = serde_json::to_string(&evs).unwrap_or_default();
            for want in ["reading the request", "report.txt", "Which format"] {
                assert!(all.contains(want), "{want}: {all}");
            }
            let last = evs.last().copied().unwrap_or(&Value::Null);
            assert_eq!(st(last), r.c.state("input-required"), "{last}");
        },
    },
    // input-required: the answer reaches the same task and completes it
    Row {
        name: "answer",
        op: |_| Some(json!({"op": "send", "text": "csv", "taskId": "$report.task_id"})),
        check: |r| {
            r.is("answer", "completed");
            assert_eq!(r.rec("answer")["task_id"], r.rec("report")["task_id"]);
        },
    },
    Row {
        name: "done",
        op: |_| Some(json!({"op": "get", "taskId": "$report.task_id"})),
        check: |r| {
            let t = r.result("done");
            let arts = artifacts(t);
            assert!(arts.contains("report.txt"), "{t}");
            assert!(
                arts.contains("format: csv") && arts.contains(" (done)"),
                "{arts}"
            );
            if r.c.reads_file_parts() {
                // 1.0 `raw` (base64) or 0.3 `file.bytes`
                assert!(
                    arts.contains("\"raw\"") || arts.contains("\"bytes\""),
                    "{arts}"
                );
            }
            let hist = t["history"].as_array().map(Vec::len).unwrap_or(0);
            assert!(hist >= 2, "both user turns in the history: {t}");
        },
    },
    // history lengths, on GetTask and on SendMessage
    Row {
        name: "short",
        op: |_| Some(json!({"op": "get", "taskId": "$report.task_id", "historyLength": 1})),
        check: |r| {
            let t = r.result("short");
            assert_eq!(t["history"].as_array().map(Vec::len), Some(1), "{t}");
        },
    },
    // historyLength 0: no history in 1.0, no limit in 0.3 (P0; the SDKs read it so)
    Row {
        name: "no history",
        op: |_| Some(json!({"op": "get", "taskId": "$report.task_id", "historyLength": 0})),
        check: |r| {
            let t = r.result("no history");
            let n = t["history"].as_array().map(Vec::len).unwrap_or(0);
            if r.c.v03() {
                assert!(n >= 2, "0.3: 0 is no limit: {t}");
            } else {
                assert_eq!(n, 0, "1.0: 0 is no history: {t}");
            }
        },
    },
    // non-blocking send + poll, resubscribe, cancel
    Row {
        name: "slow",
        op: |_| Some(json!({"op": "send", "text": "slow job", "blocking": false})),
        check: |r| r.running("slow"),
    },
    Row {
        name: "poll",
        op: |_| Some(json!({"op": "get", "taskId": "$slow.task_id"})),
        check: |r| r.running("poll"),
    },
    Row {
        name: "resubscribe",
        op: |_| Some(json!({"op": "subscribe", "taskId": "$slow.task_id", "background": true})),
        check: |r| {
            let evs = r.events("resubscribe");
            // the task as it stands first, then its updates up to the terminal one
            let first = evs.first().copied().unwrap_or(&Value::Null);
            assert!(
                first.get("task").is_some() || first["kind"] == "task",
                "{evs:?}"
            );
            let last = evs.last().copied().unwrap_or(&Value::Null);
            assert_eq!(st(last), r.c.state("canceled"), "{evs:?}");
            assert_eq!(r.rec("resubscribe")["ok"], true, "{}", r.rec("resubscribe"));
        },
    },
    // cancel only once the subscription is open (its first event, the task, has arrived)
    Row {
        name: "subscribed",
        op: |_| Some(json!({"op": "until_events", "stream": "resubscribe", "timeout": 20})),
        check: |r| assert_eq!(r.rec("subscribed")["ok"], true, "{}", r.rec("subscribed")),
    },
    Row {
        name: "cancel",
        op: |_| Some(json!({"op": "cancel", "taskId": "$slow.task_id"})),
        check: |r| r.is("cancel", "canceled"),
    },
    Row {
        name: "wait",
        op: |_| Some(json!({"op": "wait"})),
        check: |_| {},
    },
    Row {
        name: "after",
        op: |_| Some(json!({"op": "get", "taskId": "$slow.task_id"})),
        check: |r| r.is("after", "canceled"),
    },
    // errors
    Row {
        name: "terminal",
        op: |_| Some(json!({"op": "cancel", "taskId": "$report.task_id"})),
        check: |r| r.fails("terminal", -32002, 400, Some("TaskNotCancelableError")),
    },
    Row {
        name: "missing",
        op: |_| Some(json!({"op": "get", "taskId": "nope"})),
        check: |r| r.fails("missing", -32001, 404, Some("TaskNotFoundError")),
    },
    Row {
        name: "quick stream",
        op: |_| Some(json!({"op": "stream", "text": "quick stream"})),
        check: |r| {
            let evs = r.events("quick stream");
            assert_eq!(evs.len(), 1, "a stream of exactly one Message: {evs:?}");
            assert!(
                evs[0].to_string().contains("quick answer to: quick stream"),
                "{evs:?}"
            );
        },
    },
    Row {
        name: "failing",
        op: |_| Some(json!({"op": "send", "text": "fail now"})),
        check: |r| r.is("failing", "failed"),
    },
    // push CRUD on an input-required task; the next turn is delivered to the webhook
    Row {
        name: "second",
        op: |r| {
            Some(
                json!({"op": "send", "text": report_text(r, "another report"), "historyLength": 1}),
            )
        },
        check: |r| {
            r.is("second", "input-required");
            let t = r.result("second");
            assert!(
                t["history"].as_array().map(Vec::len).unwrap_or(0) <= 1,
                "{t}"
            );
        },
    },
    Row {
        name: "push set",
        op: |r| {
            Some(
                json!({"op": "push_set", "taskId": "$second.task_id", "url": r.hook,
                        "token": r.token(1), "id": "cfg1"}),
            )
        },
        check: |r| {
            assert!(
                r.rec("push set").to_string().contains(r.hook),
                "{}",
                r.rec("push set")
            )
        },
    },
    Row {
        name: "push get",
        op: |_| Some(json!({"op": "push_get", "taskId": "$second.task_id", "id": "cfg1"})),
        check: |r| {
            assert!(
                r.rec("push get").to_string().contains(r.hook),
                "{}",
                r.rec("push get")
            )
        },
    },
    Row {
        name: "push list",
        op: |_| Some(json!({"op": "push_list", "taskId": "$second.task_id"})),
        check: |r| {
            let l = r.rec("push list");
            assert_eq!(l["ok"], true, "{l}");
            assert!(l.to_string().contains("cfg1"), "{l}");
        },
    },
    Row {
        name: "finish",
        op: |_| Some(json!({"op": "send", "text": "md", "taskId": "$second.task_id"})),
        check: |r| r.is("finish", "completed"),
    },
    Row {
        name: "push delete",
        op: |_| Some(json!({"op": "push_delete", "taskId": "$second.task_id", "id": "cfg1"})),
        check: |r| assert_eq!(r.rec("push delete")["ok"], true, "{}", r.rec("push delete")),
    },
    Row {
        name: "push gone",
        op: |_| Some(json!({"op": "push_get", "taskId": "$second.task_id", "id": "cfg1"})),
        check: |r| assert_eq!(r.rec("push gone")["ok"], false, "{}", r.rec("push gone")),
    },
    // push config in the send itself
    Row {
        name: "pushed",
        op: |r| {
            Some(
                json!({"op": "send", "text": report_text(r, "pushed report"),
                        "pushUrl": r.hook, "pushToken": r.token(2)}),
            )
        },
        check: |r| r.is("pushed", "input-required"),
    },
    // list with paging (1.0: ListTasks is a core operation; 0.3 has none)
    Row {
        name: "list",
        op: |r| (!r.c.v03()).then(|| json!({"op": "list", "pageSize": 2})),
        check: |r| {
            let res = &r.rec("list")["result"];
            assert_eq!(res["tasks"].as_array().map(Vec::len), Some(2), "{res}");
            assert!(
                res["nextPageToken"].as_str().is_some_and(|t| !t.is_empty()),
                "{res}"
            );
        },
    },
    Row {
        name: "page 2",
        op: |r| {
            (!r.c.v03()).then(
                || json!({"op": "list", "pageSize": 2, "pageToken": "$list.result.nextPageToken"}),
            )
        },
        check: |r| {
            let (a, b) = (
                &r.rec("list")["result"]["tasks"],
                &r.rec("page 2")["result"]["tasks"],
            );
            assert_eq!(b.as_array().map(Vec::len), Some(2), "{b}");
            assert_ne!(a[0]["id"], b[0]["id"], "{a} {b}");
        },
    },
    // malformed JSON, unknown method, unsupported version: judged by the SDK's own transport
    Row {
        name: "malformed",
        op: |r| {
            if r.c.grpc() {
                return None;
            }
            let path = if r.c.rest() {
                r.c.path("/message:send")
            } else {
                String::new()
            };
            Some(
                json!({"op": "raw", "path": path, "body": "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":"}),
            )
        },
        check: |r| r.fails("malformed", -32700, 400, None),
    },
    Row {
        name: "unknown method",
        op: |r| {
            if r.c.grpc() {
                return None;
            }
            Some(raw(
                r,
                "tasks/frobnicate",
                "/tasks:frobnicate",
                json!({}),
                json!({}),
            ))
        },
        check: |r| r.fails("unknown method", -32601, 404, Some("MethodNotFoundError")),
    },
    Row {
        name: "unsupported version",
        op: |r| {
            if r.c.grpc() {
                return None;
            }
            let m = json!({"messageId": "v1", "role": "ROLE_USER", "parts": [{"text": "x"}]});
            Some(raw(
                r,
                "SendMessage",
                "/message:send",
                json!({"message": m}),
                json!({"headers": {"A2A-Version": "9.9"}}),
            ))
        },
        check: |r| {
            r.fails(
                "unsupported version",
                -32009,
                400,
                Some("VersionNotSupportedError"),
            )
        },
    },
];

/// A check that a run leaves out for one client, with the reason: an official SDK's own failure,
/// or a gateway fix that has not landed. The row's op still runs (later rows refer to it). The
/// check still runs too: a listed check that passes fails the run, so a list stays exact.
#[derive(Clone, Copy, Debug)]
pub struct Skip {
    /// The client's tag: `sdk1-1.0-jsonrpc`, `sdk1-0.3-rest`, `sdk03-0.3-jsonrpc`, ...
    pub client: &'static str,
    /// A row's name, or `delivery 1` / `delivery 2` (the push deliveries after the rows).
    pub row: &'static str,
    pub reason: &'static str,
}

/// What went wrong with one client: a failed check, or a listed check that passes.
#[derive(Debug)]
pub struct Problem {
    /// The client's tag.
    pub client: String,
    /// The row's name (or `delivery N`).
    pub check: String,
    /// The failure, or `passes, but is listed as failing (<reason>)`.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} / row {:?}: {}", self.client, self.check, self.what)
    }
}

fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The push deliveries of turn `n` (token `n`) up to the state `until`: the 1.0 form
/// (StreamResponse, application/a2a+json) or the 0.3 one (Task). `patience`: 30 s when the check
/// counts; shorter when it is skipped (it only tells whether the skip is still needed).
async fn delivery(r: &Run<'_>, hook: &Receiver, n: u8, until: &str, patience: u32) {
    let c = r.c;
    // the state as the wire names it
    let wire = |s: &str| {
        if c.v03() {
            s.to_string()
        } else {
            Client { sdk: "sdk1", ..c }.state(s)
        }
    };
    let want = wire(until);
    let got = hook.wait(&r.token(n), patience, |b| st(b) == want).await;
    // every update of the turn, not only the last one
    assert!(
        got.iter().any(|b| st(b) == wire("working")),
        "{} delivery {n}: {got:?}",
        c.tag()
    );
    for b in &got {
        // 1.0 §4.3.3: a StreamResponse (a2a-sdk 1.x also pushes the `task` itself when the
        // config comes with the send); 0.3: the Task
        let ok = if c.v03() {
            b["kind"] == "task"
        } else {
            ["task", "statusUpdate", "artifactUpdate"]
                .iter()
                .any(|k| b.get(k).is_some())
        };
        assert!(ok, "{} delivery {n}: {b}", c.tag());
    }
    let ctype = if c.v03() {
        "application/json"
    } else {
        "application/a2a+json"
    };
    let token = r.token(n);
    // read under the lock, assert after it (a failed check must not poison the others' hits)
    let types: Vec<_> = hook
        .hits()
        .iter()
        .filter(|(h, _)| {
            h.get("x-a2a-notification-token")
                .is_some_and(|t| t == &token)
        })
        .map(|(h, _)| h.get("content-type").cloned())
        .collect();
    for t in types {
        assert_eq!(
            t.as_ref().map(|t| t.as_bytes()),
            Some(ctype.as_bytes()),
            "{}",
            c.tag()
        );
    }
}

/// Run the table with one client: the ops, then every row's check, then the deliveries.
async fn run_table(
    c: Client,
    url: &str,
    hook: &Receiver,
    prelude: &[Value],
    skips: &[Skip],
) -> Vec<Problem> {
    let none = HashMap::new();
    let probe = Run {
        c,
        hook: &hook.url,
        lines: &[],
        index: &none,
    };
    let mut index = HashMap::new();
    let mut ops = prelude.to_vec();
    for row in TABLE {
        if let Some(mut o) = (row.op)(&probe) {
            o["as"] = json!(row.name.replace(' ', "_"));
            index.insert(row.name, ops.len() as u64);
            ops.push(o);
        }
    }
    // `$name.path` references use the `as` names, which have no spaces
    let lines = run(c.sdk, url, c.binding, c.version, Value::Array(ops)).await;
    let r = Run {
        c,
        hook: &hook.url,
        lines: &lines,
        index: &index,
    };
    let tag = c.tag();
    let skip = |check: &str| {
        skips
            .iter()
            .find(|s| s.client == tag && s.row == check)
            .map(|s| s.reason)
    };
    let mut problems = Vec::new();
    let mut judge = |check: &str, failure: Option<String>| {
        let what = match (failure, skip(check)) {
            (Some(msg), None) => msg,
            (None, Some(reason)) => format!("passes, but is listed as failing ({reason})"),
            _ => return,
        };
        problems.push(Problem {
            client: tag.clone(),
            check: check.to_string(),
            what,
        });
    };
    for row in TABLE.iter().filter(|row| index.contains_key(row.name)) {
        let check = std::panic::AssertUnwindSafe(|| (row.check)(&r));
        let failure = std::panic::catch_unwind(check).err().map(|e| {
            let rec = lines
                .iter()
                .find(|l| l["i"] == index[row.name] && l.get("event").is_none());
            format!("{}\nits record: {rec:?}", panic_text(&*e))
        });
        judge(row.name, failure);
    }
    for (n, until) in [(1, "completed"), (2, "input-required")] {
        let name = format!("delivery {n}");
        let patience = if skip(&name).is_some() { 300 } else { 3000 };
        let check = std::panic::AssertUnwindSafe(delivery(&r, hook, n, until, patience));
        let failure = futures::FutureExt::catch_unwind(check).await.err();
        judge(&name, failure.map(|e| panic_text(&*e)));
    }
    problems
}

/// Runs the table with every client at `url`, concurrently, each starting with the `prelude`
/// ops (say, a `headers` op with a gateway key).
pub async fn run_all(url: &str, prelude: &[Value]) {
    run_all_of(Releases::Current, url, prelude).await;
}

/// [`run_all`] with the clients of `releases`.
pub async fn run_all_of(releases: Releases, url: &str, prelude: &[Value]) {
    let report: Vec<String> = problems_of(releases, url, prelude, &[])
        .await
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(report.is_empty(), "{url}:\n{}", report.join("\n\n"));
}

/// Runs the table with a2a-sdk 1.x over gRPC only (the card at `url` must list a GRPC interface).
pub async fn run_grpc(url: &str, prelude: &[Value]) {
    run_grpc_of(Releases::Current, url, prelude).await;
}

/// [`run_grpc`] with the gRPC clients of `releases` (concurrently).
pub async fn run_grpc_of(releases: Releases, url: &str, prelude: &[Value]) {
    let hook = receiver().await;
    let runs = releases
        .grpc_clients()
        .into_iter()
        .map(|c| run_table(c, url, &hook, prelude, &[]));
    let report: Vec<String> = futures::future::join_all(runs)
        .await
        .iter()
        .flatten()
        .map(ToString::to_string)
        .collect();
    assert!(report.is_empty(), "{url}:\n{}", report.join("\n\n"));
}

/// The table with the six clients at `url`, concurrently: the failed checks not in `skips`, and
/// the checks in `skips` that pass.
pub async fn problems(url: &str, prelude: &[Value], skips: &[Skip]) -> Vec<Problem> {
    problems_of(Releases::Current, url, prelude, skips).await
}

/// [`problems`] with the clients of `releases`.
pub async fn problems_of(
    releases: Releases,
    url: &str,
    prelude: &[Value],
    skips: &[Skip],
) -> Vec<Problem> {
    let hook = receiver().await;
    let runs = releases
        .clients()
        .into_iter()
        .map(|c| run_table(c, url, &hook, prelude, skips));
    futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect()
}
