//! The governed card's `Last-Modified` beside its ETag (with `If-Modified-Since`), the address
//! it names when the gateway listens on port 0, and `admin agent-add`, which says "saved" only
//! once the registration is saved (issue 40, item 7).

use crate::common;

use a2a_gateway::errors::Version;
use common::*;
use serde_json::Value;

async fn card(env: &Env, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut r = env
        .http
        .get(env.url("/a2a/echo/.well-known/agent-card.json"))
        .bearer_auth(&env.key);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.send().await.unwrap()
}

fn header(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_governed_card_carries_last_modified() {
    let env = env(Version::V1).await;
    let first = card(&env, &[]).await;
    assert_eq!(first.status(), 200);
    let etag = header(&first, "etag").expect("ETag");
    let modified = header(&first, "last-modified").expect("Last-Modified");
    assert!(
        modified.ends_with(" GMT") && modified.len() == 29,
        "{modified}"
    );
    // The date stays while the card does.
    let again = card(&env, &[]).await;
    assert_eq!(
        header(&again, "last-modified").as_deref(),
        Some(modified.as_str())
    );
    assert_eq!(header(&again, "etag").as_deref(), Some(etag.as_str()));
    // If-Modified-Since: 304 for that date or later, the card for an earlier one.
    let r = card(&env, &[("If-Modified-Since", &modified)]).await;
    assert_eq!(r.status(), 304);
    assert_eq!(
        header(&r, "last-modified").as_deref(),
        Some(modified.as_str())
    );
    let r = card(
        &env,
        &[("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")],
    )
    .await;
    assert_eq!(r.status(), 200);
    // Not a date: ignored. With If-None-Match, If-Modified-Since does not count.
    let r = card(&env, &[("If-Modified-Since", "yesterday")]).await;
    assert_eq!(r.status(), 200);
    let r = card(
        &env,
        &[
            ("If-None-Match", "\"other\""),
            ("If-Modified-Since", &modified),
        ],
    )
    .await;
    assert_eq!(r.status(), 200);
    let r = card(&env, &[("If-None-Match", &etag)]).await;
    assert_eq!(r.status(), 304);
    // The card changes (a skill allow-list): a new ETag, and the old date no longer matches.
    let endpoint = env.peers[0].url.clone();
    env.register("ws1", "echo", &endpoint, Some(vec!["none"]));
    let changed = card(&env, &[("If-Modified-Since", &modified)]).await;
    assert_eq!(changed.status(), 200);
    assert_ne!(header(&changed, "etag").as_deref(), Some(etag.as_str()));
    let new_date = header(&changed, "last-modified").expect("Last-Modified");
    assert!(
        time_of(&new_date) >= time_of(&modified),
        "{new_date} < {modified}"
    );
    // Each version's card has its own date and ETag.
    let v03 = card(&env, &[("A2A-Version", "0.3")]).await;
    assert!(header(&v03, "last-modified").is_some());
    assert_ne!(header(&v03, "etag"), header(&changed, "etag"));
    env.stop().await;
}

/// Unix seconds of an HTTP date.
fn time_of(d: &str) -> i64 {
    let f = time::format_description::parse_borrowed::<2>(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT",
    )
    .unwrap();
    time::PrimitiveDateTime::parse(d, &f)
        .unwrap()
        .assume_utc()
        .unix_timestamp()
}

/// A database with workspace `ws`, agent `echo` at `endpoint` and a key of `ws`.
fn database(db: &std::path::Path, endpoint: &str) -> String {
    let store = a2a_gateway::store::Store::open(db).unwrap();
    store.create_workspace("ws", "W").unwrap();
    store
        .upsert_agent(&a2a_gateway::store::Agent {
            workspace_id: "ws".into(),
            agent_id: "echo".into(),
            endpoint: endpoint.into(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .unwrap();
    store.create_key("ws", &[], None, None).unwrap().1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_on_port_0_publishes_the_bound_port() {
    let peer = common::echo::start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        Version::V1,
        None,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = database(&db, &peer.url);
    let (mut child, base) = spawn_serve(&db, &["--serve-grpc"]);
    let authority = base.trim_start_matches("http://").to_owned();
    assert!(!authority.ends_with(":0"), "{base}");
    for version in ["1.0", "0.3"] {
        let c: Value = reqwest::Client::new()
            .get(format!("{base}/a2a/echo/.well-known/agent-card.json"))
            .bearer_auth(&key)
            .header("A2A-Version", version)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let text = c.to_string();
        assert!(
            !text.contains(":0/") && !text.contains(":0\""),
            "{version}: {text}"
        );
        let urls: Vec<String> = c["supportedInterfaces"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(c["additionalInterfaces"].as_array().into_iter().flatten())
            .filter_map(|i| i["url"].as_str().map(str::to_owned))
            .chain(c["url"].as_str().map(str::to_owned))
            .collect();
        assert!(!urls.is_empty(), "{version}: {c}");
        for u in &urls {
            assert!(
                u.contains(&authority),
                "{version}: {u} does not name {authority}"
            );
        }
        if version == "1.0" {
            let grpc = c["supportedInterfaces"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["protocolBinding"] == "GRPC")
                .expect("GRPC interface");
            assert_eq!(grpc["url"], authority.as_str(), "{c}");
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_agent_add_says_saved_only_after_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    a2a_gateway::store::Store::open(&db)
        .unwrap()
        .create_workspace("ws", "W")
        .unwrap();
    // A peer that does not answer: its card cannot be read (a warning, not a refusal).
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let add = |workspace: &str| {
        let db = db.clone();
        let endpoint = endpoint.clone();
        let workspace = workspace.to_owned();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
                .arg("admin")
                .arg("--database")
                .arg(&db)
                .args(["agent-add", &workspace, "late", &endpoint, "--dev"])
                .env_remove("A2A_GATEWAY_DEV")
                .output()
                .unwrap()
        })
    };
    // The save fails (no such workspace): nothing says it was saved.
    let out = add("nope").await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(!err.contains("saved"), "{err}");
    assert!(err.contains("workspace nope"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The save succeeds: the warning says so, after it.
    let out = add("ws").await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("saved without the binding check"), "{err}");
    let store = a2a_gateway::store::Store::open(&db).unwrap();
    assert!(store.agent("ws", "late").unwrap().is_some());
}
