//! `a2a-gateway demo`'s extension agents: a2a-agent echo agents whose cards require an
//! extension, registered in the demo workspace (the demo's own echo agent is a2a-agent's too).

use serde_json::json;
use tokio::net::TcpListener;

/// The extension the demo workspace allows; `echo-ext-required` requires it.
pub const DEMO_EXT_ALLOWED: &str = "https://a2a-rs.dev/extensions/demo-allowed/v1";
/// An extension the demo workspace does not allow; `echo-ext-forbidden` requires it.
pub const DEMO_EXT_FORBIDDEN: &str = "https://a2a-rs.dev/extensions/demo-forbidden/v1";

/// Starts the demo's extension agents (a2a-agent echo agents whose cards require an extension)
/// and registers them in `workspace`, which is made to allow [`DEMO_EXT_ALLOWED`]:
/// `echo-ext-required` (requires it: -32008 without `A2A-Extensions`, the echo with it) and
/// `echo-ext-forbidden` (requires [`DEMO_EXT_FORBIDDEN`]: `a2a_extension_not_allowed`). The
/// conformance fixtures of the extension errors call them.
pub async fn start_extension_agents(
    store: &crate::store::Store,
    workspace: &str,
) -> Result<Vec<a2a_agent::server::ServerHandle>, String> {
    let mut out = Vec::new();
    for (id, uri) in [
        ("echo-ext-required", DEMO_EXT_ALLOWED),
        ("echo-ext-forbidden", DEMO_EXT_FORBIDDEN),
    ] {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| e.to_string())?;
        let url = format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let mut card = a2a_agent::demo::echo_card().json().clone();
        card["supportedInterfaces"] =
            json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
        card["capabilities"]["extensions"] = json!([{"uri": uri, "required": true}]);
        let card = a2a_agent::card::AgentCard::from_json(card).map_err(|e| e.to_string())?;
        let server = a2a_agent::AgentServer::new(card, a2a_agent::demo::echo_handler())
            .validate_auth(false)
            .serve(listener)
            .await
            .map_err(|e| e.to_string())?;
        store
            .upsert_agent(&crate::store::Agent {
                workspace_id: workspace.into(),
                agent_id: id.into(),
                endpoint: url,
                credential: None,
                skills: None,
                pinned_card_key: None,
            })
            .map_err(|e| e.to_string())?;
        out.push(server);
    }
    let mut s = store
        .workspace_settings(workspace)
        .map_err(|e| e.to_string())?;
    if !s.allows_extension(DEMO_EXT_ALLOWED) {
        s.extensions_allowed.push(DEMO_EXT_ALLOWED.into());
    }
    store
        .put_workspace_settings(workspace, &s)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The companions of a SQLite database file the gateway creates beside it: WAL, shared memory,
/// the intent journal and its lock.
const DATABASE_SUFFIXES: [&str; 5] = ["", "-wal", "-shm", ".intents", ".intents.lock"];

/// The demo's temporary database in `dir`, named after this process
/// (`a2a-gateway-demo-PID.db`). Files an earlier demo left there when it could not clean up
/// (killed with SIGKILL, or its machine stopped) are removed first: those whose process no
/// longer runs. Another demo still running keeps its files.
pub fn temporary_database(dir: &std::path::Path) -> std::path::PathBuf {
    sweep_stale(dir, process_runs);
    dir.join(format!("a2a-gateway-demo-{}.db", std::process::id()))
}

/// Removes a database file and its companions; missing files are not an error.
pub fn remove_database(db: &std::path::Path) {
    for suffix in DATABASE_SUFFIXES {
        let mut p = db.to_path_buf().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// Removes the demo databases in `dir` whose process `runs` says has ended.
fn sweep_stale(dir: &std::path::Path, runs: impl Fn(u32) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("a2a-gateway-demo-"))
            .and_then(|n| n.split_once(".db"))
            .and_then(|(pid, rest)| {
                DATABASE_SUFFIXES
                    .contains(&rest)
                    .then(|| pid.parse::<u32>().ok())
                    .flatten()
            })
        else {
            continue;
        };
        if pid != std::process::id() && !runs(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this id runs (Linux: `/proc/PID`; elsewhere every process is taken
/// to run, so nothing is swept).
fn process_runs(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        std::path::Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_demo_databases_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let names = [
            "a2a-gateway-demo-11.db",
            "a2a-gateway-demo-11.db-wal",
            "a2a-gateway-demo-11.db.intents.lock",
            "a2a-gateway-demo-22.db",
            "a2a-gateway-demo-22.db-shm",
            "a2a-gateway-demo-33.db.backup",
            "a2a-gateway-demo-x.db",
            "other.db",
        ];
        for n in names {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        sweep_stale(dir.path(), |pid| pid == 22);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "a2a-gateway-demo-22.db",
                "a2a-gateway-demo-22.db-shm",
                "a2a-gateway-demo-33.db.backup",
                "a2a-gateway-demo-x.db",
                "other.db"
            ]
        );
        let db = dir.path().join("a2a-gateway-demo-22.db");
        remove_database(&db);
        assert!(!db.exists());
        assert!(!dir.path().join("a2a-gateway-demo-22.db-shm").exists());
    }

    #[test]
    fn this_process_runs() {
        assert!(process_runs(std::process::id()));
    }
}
