//! Several agents on one PostgreSQL database (issue 33, first slice): a task sent to one is
//! read (GetTask) and listed (ListTasks, with the other's page token) on another, as two
//! processes of the binary and as two servers of the library; the `store` setting and its
//! conflicts with `sqlite_path`.

#[cfg(feature = "postgres")]
use crate::common::*;
use a2a_agent::AgentConfig;
#[cfg(feature = "postgres")]
use a2a_agent::model::TaskStatus;
use a2a_agent::store::StoreChoice;
#[cfg(feature = "postgres")]
use a2a_agent::store::{Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage};
#[cfg(feature = "postgres")]
use serde_json::{Value, json};

#[cfg(feature = "postgres")]
fn ids(list: &Value) -> Vec<String> {
    list["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks: {list}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[cfg(feature = "postgres")]
/// Three sends on `a`, then: GetTask of the first on `b` equals `a`'s answer; ListTasks
/// pages on `b` are `a`'s pages, and `a`'s page token continues on `b`.
async fn shared(a: &str, b: &str) {
    let mut sent = Vec::new();
    for text in ["one", "two", "three"] {
        let (_, v) = rpc(a, "SendMessage", json!({"message": msg(text)})).await;
        assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
        sent.push(v["result"]["task"]["id"].as_str().unwrap().to_owned());
    }
    let (_, on_a) = rpc(a, "GetTask", json!({"id": sent[0]})).await;
    let (_, on_b) = rpc(b, "GetTask", json!({"id": sent[0]})).await;
    assert_eq!(on_b["result"], on_a["result"], "{on_b}");
    assert_eq!(
        on_b["result"]["status"]["message"]["parts"][0]["text"],
        "one"
    );
    let (_, missing) = rpc(b, "GetTask", json!({"id": "no-such-task"})).await;
    assert!(missing["error"].is_object(), "{missing}");

    let (_, all) = rpc(a, "ListTasks", json!({"pageSize": 10})).await;
    let all = ids(&all);
    let mut sorted = all.clone();
    sorted.sort();
    let mut want = sent.clone();
    want.sort();
    assert_eq!(sorted, want, "every task, once");
    let (_, first_a) = rpc(a, "ListTasks", json!({"pageSize": 2})).await;
    let (_, first_b) = rpc(b, "ListTasks", json!({"pageSize": 2})).await;
    assert_eq!(
        first_b["result"], first_a["result"],
        "the same page on both"
    );
    assert_eq!(first_b["result"]["totalSize"], 3);
    let token = first_a["result"]["nextPageToken"].as_str().unwrap();
    assert!(!token.is_empty(), "{first_a}");
    let (_, second_b) = rpc(b, "ListTasks", json!({"pageSize": 2, "pageToken": token})).await;
    let mut paged = ids(&first_a);
    paged.extend(ids(&second_b));
    assert_eq!(paged, all, "A's token continues on B: {second_b}");
    assert_eq!(
        second_b["result"]["nextPageToken"].as_str().unwrap_or(""),
        ""
    );
}

#[cfg(feature = "cli")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_processes_serve_each_others_tasks_and_follow_ups() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("processes").unwrap();
    let url = cluster.url_of("processes");
    // One by flag, one by environment variable.
    let a = bin(&["--echo", "--store", url.as_str()], &[]);
    let b = bin(&["--echo"], &[("A2A_AGENT_STORE", url.as_str())]);
    let c = bin(&["--echo", "--store", url.as_str()], &[]);
    shared(&a.url, &b.url).await;
    // Follow-ups across processes: a turn on B, the next on C; a task working on B refused on C.
    follow_ups(&b.url, &c.url).await;
    // And the other way round: B's task on A.
    let (_, v) = rpc(&b.url, "SendMessage", json!({"message": msg("from b")})).await;
    let id = v["result"]["task"]["id"].as_str().unwrap();
    let (_, on_a) = rpc(&a.url, "GetTask", json!({"id": id})).await;
    assert_eq!(
        on_a["result"]["status"]["message"]["parts"][0]["text"],
        "from b"
    );
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_library_servers_on_one_database_serve_each_others_tasks() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("library").unwrap();
    let url = cluster.url_of("library");
    // One by the `store` setting, one given a connected store.
    let a = echo(AgentConfig {
        store: Some(url.clone()),
        ..open_config()
    })
    .await;
    let pg = a2a_agent::PostgresStore::connect(&url, &a2a_agent::store::PoolOptions::default())
        .await
        .unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let b = a2a_agent::AgentServer::new(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
    )
    .config(open_config())
    .postgres(pg)
    .serve(l)
    .await
    .unwrap();
    shared(a.url(), b.url()).await;
    follow_ups(a.url(), b.url()).await;
    a.shutdown().await;
    b.shutdown().await;
}

/// A follow-up on `b` of a task waiting for input after a turn on `a` continues it from its
/// stored state; one on `b` of a task still working on `a` is refused as on `a` (-32004,
/// UnsupportedOperation), without running a second turn.
#[cfg(feature = "postgres")]
async fn follow_ups(a: &str, b: &str) {
    let (_, v) = rpc(a, "SendMessage", json!({"message": msg("need input")})).await;
    let task = &v["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{v}");
    let id = task["id"].as_str().unwrap();
    let mut more = msg("here it is");
    more["taskId"] = json!(id);
    let (_, v) = rpc(b, "SendMessage", json!({"message": more})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    let history: Vec<&str> = v["result"]["task"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(history, ["need input", "here it is"], "{v}");
    let (_, on_a) = rpc(a, "GetTask", json!({"id": id})).await;
    assert_eq!(state(&on_a["result"]), "TASK_STATE_COMPLETED", "{on_a}");

    let slow = start_slow(a).await;
    wait_task(b, &slow, |s| s == "TASK_STATE_WORKING").await;
    let mut more = msg("and this");
    more["taskId"] = json!(slow);
    for url in [a, b] {
        let (_, v) = rpc(url, "SendMessage", json!({"message": more.clone()})).await;
        assert_eq!(v["error"]["code"], -32004, "{v}");
    }
    let (_, v) = rpc(a, "CancelTask", json!({"id": slow})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_CANCELED", "{v}");
}

/// Two replicas' reads of one task held until both have read it: both then see it waiting.
#[cfg(feature = "postgres")]
struct Gate {
    /// The task whose next two reads wait for each other.
    armed: std::sync::Mutex<Option<String>>,
    both: tokio::sync::Barrier,
    /// Both reads met.
    met: std::sync::atomic::AtomicBool,
}

/// A PostgreSQL store whose reads of the armed task meet at the [`Gate`].
#[cfg(feature = "postgres")]
struct Gated {
    pg: a2a_agent::PostgresStore,
    gate: std::sync::Arc<Gate>,
}

#[cfg(feature = "postgres")]
#[async_trait::async_trait]
impl a2a_agent::TaskStore for Gated {
    async fn put(&self, t: StoredTask) -> Result<(), StoreError> {
        self.pg.put(t).await
    }
    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        let got = self.pg.get(id).await;
        let armed = self.gate.armed.lock().unwrap().as_deref() == Some(id);
        if armed {
            let wait = self.gate.both.wait();
            if let Ok(w) = tokio::time::timeout(std::time::Duration::from_secs(10), wait).await
                && w.is_leader()
            {
                *self.gate.armed.lock().unwrap() = None;
                self.gate
                    .met
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        got
    }
    async fn list(&self, f: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        self.pg.list(f).await
    }
    async fn page(
        &self,
        f: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        self.pg.page(f, after, limit).await
    }
    async fn count(&self) -> Result<usize, StoreError> {
        self.pg.count().await
    }
    async fn put_with_notices(
        &self,
        t: StoredTask,
        notices: Vec<Notice>,
    ) -> Result<Vec<i64>, StoreError> {
        self.pg.put_with_notices(t, notices).await
    }
    async fn begin_turn(&self, id: &str, seen: &TaskStatus) -> Result<bool, StoreError> {
        self.pg.begin_turn(id, seen).await
    }
}

/// Two follow-ups of one waiting task reach two replicas at once, and both replicas read the
/// task waiting before either begins its turn: one continues the task, the other is refused
/// (-32004) and its message is not in the task.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_concurrent_follow_ups_on_two_replicas_one_continues_the_task() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("race").unwrap();
    let url = cluster.url_of("race");
    let gate = std::sync::Arc::new(Gate {
        armed: Default::default(),
        both: tokio::sync::Barrier::new(2),
        met: Default::default(),
    });
    // A and B race; C creates the task, so that neither A nor B holds it in memory.
    let mut servers = Vec::new();
    for _ in 0..3 {
        let pg = a2a_agent::PostgresStore::connect(&url, &a2a_agent::store::PoolOptions::default())
            .await
            .unwrap();
        let store = std::sync::Arc::new(Gated {
            pg: pg.clone(),
            gate: gate.clone(),
        });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        servers.push(
            a2a_agent::AgentServer::new(
                a2a_agent::demo::echo_card(),
                a2a_agent::demo::echo_handler(),
            )
            .config(open_config())
            .postgres(pg)
            .store(store)
            .serve(l)
            .await
            .unwrap(),
        );
    }
    let (a, b, c) = (servers[0].url(), servers[1].url(), servers[2].url());
    let (_, v) = rpc(c, "SendMessage", json!({"message": msg("need input")})).await;
    assert_eq!(
        state(&v["result"]["task"]),
        "TASK_STATE_INPUT_REQUIRED",
        "{v}"
    );
    let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    let follow = |text: &str| {
        let mut m = msg(text);
        m["taskId"] = json!(id);
        json!({"message": m})
    };
    *gate.armed.lock().unwrap() = Some(id.clone());
    let (ra, rb) = tokio::join!(
        rpc(a, "SendMessage", follow("from a")),
        rpc(b, "SendMessage", follow("from b"))
    );
    let won: Vec<&Value> = [&ra.1, &rb.1]
        .into_iter()
        .filter(|v| v["result"].is_object())
        .collect();
    assert!(
        gate.met.load(std::sync::atomic::Ordering::SeqCst),
        "both replicas read the waiting task before either began its turn"
    );
    assert_eq!(won.len(), 1, "exactly one continues: {ra:?} {rb:?}");
    let lost = if ra.1["result"].is_object() {
        &rb.1
    } else {
        &ra.1
    };
    assert_eq!(lost["error"]["code"], -32004, "{lost}");
    assert_eq!(state(&won[0]["result"]["task"]), "TASK_STATE_COMPLETED");
    let (_, v) = rpc(b, "GetTask", json!({"id": id})).await;
    let users = v["result"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "ROLE_USER")
        .count();
    assert_eq!(users, 2, "the first message and one follow-up: {v}");
    for s in servers {
        s.shutdown().await;
    }
}

#[test]
fn the_store_setting_names_one_store_and_refuses_two() {
    let cfg = |store: Option<&str>, sqlite: Option<&str>| AgentConfig {
        store: store.map(String::from),
        sqlite_path: sqlite.map(Into::into),
        ..AgentConfig::default()
    };
    let url = "postgres://u:secret@db.example:5432/agent";
    assert_eq!(cfg(None, None).store_choice(), Ok(StoreChoice::Memory));
    assert_eq!(
        cfg(Some("memory"), None).store_choice(),
        Ok(StoreChoice::Memory)
    );
    assert_eq!(
        cfg(None, Some("/tmp/a.db")).store_choice(),
        Ok(StoreChoice::Sqlite(std::path::Path::new("/tmp/a.db")))
    );
    assert_eq!(
        cfg(Some(url), None).store_choice(),
        Ok(StoreChoice::Postgres(url))
    );
    let other = "postgresql://u@h/db";
    assert_eq!(
        cfg(Some(other), None).store_choice(),
        Ok(StoreChoice::Postgres(other))
    );
    for store in [url, "memory"] {
        let e = cfg(Some(store), Some("/tmp/a.db"))
            .store_choice()
            .unwrap_err();
        assert!(e.contains("both set"), "{e}");
        assert!(!e.contains("secret"), "the URL is not repeated: {e}");
    }
    let e = cfg(Some("mysql://u:secret@h/db"), None)
        .store_choice()
        .unwrap_err();
    assert!(
        e.contains("postgres://") && e.contains("a mysql:// URL"),
        "{e}"
    );
    assert!(!e.contains("secret"), "{e}");
}

#[cfg(feature = "cli")]
#[test]
fn check_config_refuses_store_beside_sqlite_path() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(crate::common::AGENT_BIN);
        c.args(["serve", "--echo", "--check-config"]).args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let url = "postgres://u:secret@127.0.0.1:1/agent";
    let ok = run(&["--store", url], &[]);
    assert!(ok.status.success(), "{ok:?}");
    for out in [
        run(&["--store", url, "--sqlite-path", "/tmp/x.db"], &[]),
        run(&["--sqlite-path", "/tmp/x.db"], &[("A2A_AGENT_STORE", url)]),
    ] {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("both set"), "{err}");
        assert!(!err.contains("secret"), "{err}");
    }
}

/// A follow-up on A and a cancel on B of one waiting task, both replicas reading it waiting
/// before either acts: they do not both go ahead. The answers agree with how the task ends:
/// CANCELED (and the follow-up did not complete it), or B refused and A's follow-up
/// completed it.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_and_a_follow_up_racing_on_two_replicas_agree_on_the_end() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("cancel_race").unwrap();
    let url = cluster.url_of("cancel_race");
    let gate = std::sync::Arc::new(Gate {
        armed: Default::default(),
        both: tokio::sync::Barrier::new(2),
        met: Default::default(),
    });
    let mut servers = Vec::new();
    for _ in 0..3 {
        let pg = a2a_agent::PostgresStore::connect(&url, &a2a_agent::store::PoolOptions::default())
            .await
            .unwrap();
        let store = std::sync::Arc::new(Gated {
            pg: pg.clone(),
            gate: gate.clone(),
        });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        servers.push(
            a2a_agent::AgentServer::new(
                a2a_agent::demo::echo_card(),
                a2a_agent::demo::echo_handler(),
            )
            .config(open_config())
            .postgres(pg)
            .store(store)
            .serve(l)
            .await
            .unwrap(),
        );
    }
    let (a, b, c) = (servers[0].url(), servers[1].url(), servers[2].url());
    let (_, v) = rpc(c, "SendMessage", json!({"message": msg("need input")})).await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    let mut more = msg("here it is");
    more["taskId"] = json!(id);
    *gate.armed.lock().unwrap() = Some(id.clone());
    let (follow, cancel) = tokio::join!(
        rpc(a, "SendMessage", json!({"message": more})),
        rpc(b, "CancelTask", json!({"id": id}))
    );
    assert!(
        gate.met.load(std::sync::atomic::Ordering::SeqCst),
        "both replicas read the waiting task before either acted"
    );
    let end = wait_task(c, &id, |s| {
        s == "TASK_STATE_CANCELED" || s == "TASK_STATE_COMPLETED"
    })
    .await;
    if state(&cancel.1["result"]) == "TASK_STATE_CANCELED" {
        assert_eq!(
            state(&end),
            "TASK_STATE_CANCELED",
            "{follow:?} {cancel:?} {end}"
        );
        assert_ne!(
            state(&follow.1["result"]["task"]),
            "TASK_STATE_COMPLETED",
            "the follow-up did not also go ahead: {follow:?} {cancel:?}"
        );
    } else {
        assert_eq!(cancel.1["error"]["code"], -32002, "{cancel:?}");
        assert_eq!(
            state(&end),
            "TASK_STATE_COMPLETED",
            "{follow:?} {cancel:?} {end}"
        );
        assert_eq!(
            state(&follow.1["result"]["task"]),
            "TASK_STATE_COMPLETED",
            "{follow:?}"
        );
    }
    for s in servers {
        s.shutdown().await;
    }
}
