//! The sample load-balancer configurations of docs/replicas.md ("Load balancer"):
//! `dist/a2a-gateway/lb/nginx.conf` and `dist/a2a-gateway/lb/haproxy.cfg`, run as they are (only the listen address and
//! the replicas' addresses rewritten for loopback) by the real nginx and HAProxy in front of two
//! `a2a-gateway serve --database postgres://…` replicas. Through each: sends reach both
//! replicas; a stream's events pass one by one as the peer sends them (no buffering: the peer
//! sends the next event only when the test has read the previous one); after `kill -9` of a
//! replica every send is still answered (the load balancer tries the other replica).
//!
//! Skipped, saying so, when nginx, HAProxy or PostgreSQL's server binaries are missing
//! (`cargo xtask setup` installs them). Every wait is a poll with a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Semaphore;

use crate::common::cluster::Cluster;
use crate::replica_streams::{STEPS, gated_peer, shape};
use crate::replicas_chaos::{Got, client, eventually, send, start};
use crate::replicas_chaos_held::Sse;

const NGINX: &str = include_str!("../../dist/a2a-gateway/lb/nginx.conf");
const HAPROXY: &str = include_str!("../../dist/a2a-gateway/lb/haproxy.cfg");
const DOCS: &str = include_str!("../../docs/replicas.md");

/// The sample addresses of the replicas, in the order the samples list them.
const SAMPLE_REPLICAS: [&str; 3] = ["10.0.0.11:8080", "10.0.0.12:8080", "10.0.0.13:8080"];

#[test]
fn the_docs_show_the_sample_configurations_as_they_are() {
    for (name, text) in [("nginx.conf", NGINX), ("haproxy.cfg", HAPROXY)] {
        assert!(
            DOCS.contains(text.trim_end()),
            "docs/replicas.md does not show dist/a2a-gateway/lb/{name} as it is"
        );
    }
}

/// A program from `PATH` or `/usr/sbin` (where Debian puts both).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.exists())
}

/// A loopback port nobody listens on (bound then released: the load balancer binds it next).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `sample` with `listen` (the sample's listen line) replaced by `listen_with`, and each sample
/// replica address replaced by one of `replicas` (lines naming an address beyond them dropped).
fn rewrite(sample: &str, listen: &str, listen_with: &str, replicas: &[String]) -> String {
    let mut out = String::new();
    let mut listened = false;
    for line in sample.lines() {
        let mut line = line.to_owned();
        if line.trim_start().starts_with(listen) {
            line = line.replacen(listen, listen_with, 1);
            listened = true;
        }
        if let Some(i) = SAMPLE_REPLICAS.iter().position(|a| line.contains(a)) {
            match replicas.get(i) {
                Some(addr) => line = line.replace(SAMPLE_REPLICAS[i], addr),
                None => continue,
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    assert!(listened, "the sample has no `{listen}` line");
    out
}

/// A load balancer process, killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// nginx in the foreground on `port` with the sample in its http context, its pid, logs and
/// temporary files in `dir`.
fn start_nginx(bin: &Path, dir: &Path, port: u16, replicas: &[String]) -> Proc {
    let site = rewrite(
        NGINX,
        "listen 8080;",
        &format!("listen 127.0.0.1:{port};"),
        replicas,
    );
    std::fs::write(dir.join("a2a.conf"), site).unwrap();
    let d = dir.display();
    let user = if is_root() { "user root;\n" } else { "" };
    let main = format!(
        "{user}daemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
         events {{ worker_connections 512; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  \
         proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  \
         uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  include {d}/a2a.conf;\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), main).unwrap();
    let child = Command::new(bin)
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap())
        .spawn()
        .unwrap();
    Proc(child)
}

/// HAProxy in the foreground (`-db`) on `port` with the sample, its log in `dir`.
fn start_haproxy(bin: &Path, dir: &Path, port: u16, replicas: &[String]) -> Proc {
    let cfg = rewrite(
        HAPROXY,
        "bind :8080",
        &format!("bind 127.0.0.1:{port}"),
        replicas,
    );
    std::fs::write(dir.join("haproxy.cfg"), cfg).unwrap();
    let child = Command::new(bin)
        .arg("-db")
        .arg("-f")
        .arg(dir.join("haproxy.cfg"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap())
        .spawn()
        .unwrap();
    Proc(child)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `a2a_requests_total` summed over its labels, read from one replica's `/metrics`.
async fn requests_of(http: &reqwest::Client, replica: &str) -> f64 {
    let text = http
        .get(format!("{replica}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|l| l.starts_with("a2a_requests_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What both samples must do for the replicas behind them (`lb`: the load balancer's URL).
async fn exercise(c: &mut Cluster, lb: &str, what: &str) {
    let http = client();
    eventually(&format!("{what} serves"), 20, || {
        let (http, lb) = (http.clone(), lb.to_owned());
        async move {
            matches!(http.get(format!("{lb}/readyz")).send().await, Ok(r) if r.status() == 200)
        }
    })
    .await;

    // Sends reach both replicas, each answered with its own echo.
    for i in 0..8 {
        let got = send(&http, lb, &c.key, &format!("{what}-send-{i}")).await;
        assert!(matches!(got, Got::Answered(_)), "{what}: send {i}: {got:?}");
    }
    for r in &c.replicas {
        let n = requests_of(&http, &r.url()).await;
        assert!(n >= 1.0, "{what}: replica {} served no request", r.url());
    }

    // A stream passes each event as the peer sends it: the peer sends step i only after the
    // test has read step i - 1 through the load balancer.
    let gate = Arc::new(Semaphore::new(0));
    let (peer, peer_task) = gated_peer(gate.clone()).await;
    c.register("steps", &peer).await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": format!("{what}-s"), "role": "ROLE_USER",
            "parts": [{"text": "go"}]}}});
    // The registration reaches each replica by notification (within a second): poll.
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut sse = loop {
        let resp = http
            .post(format!("{lb}/a2a/steps"))
            .bearer_auth(&c.key)
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let sse_type = resp
            .headers()
            .get("content-type")
            .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        if resp.status() == 200 && sse_type {
            break Sse::new(resp);
        }
        assert!(
            tokio::time::Instant::now() < until,
            "{what}: the steps agent is not served: {}",
            resp.status()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(shape(&sse.data(1).await[0]), "task", "{what}");
    for i in 0..STEPS {
        gate.add_permits(1);
        let f = sse.data(1).await;
        assert_eq!(shape(&f[0]), format!("step {i}"), "{what}");
    }
    assert_eq!(
        shape(&sse.data(1).await[0]),
        "TASK_STATE_COMPLETED",
        "{what}"
    );
    peer_task.abort();

    // kill -9 of a replica: the load balancer sends every request to the other one.
    c.kill(0);
    for i in 0..8 {
        let got = send(&http, lb, &c.key, &format!("{what}-after-{i}")).await;
        assert!(
            matches!(got, Got::Answered(_)),
            "{what}: send {i} after the kill: {got:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nginx_sample_balances_streams_and_survives_a_killed_replica() {
    let Some(bin) = program("nginx") else {
        eprintln!("SKIPPED: no nginx (install Debian's `nginx`; `cargo xtask setup` does)");
        return;
    };
    let Some((mut c, _echo)) = start(2).await else {
        return;
    };
    let dir = tempfile::Builder::new()
        .prefix("a2a-nginx-")
        .tempdir()
        .unwrap();
    make_world_usable(dir.path());
    let port = free_port();
    let addrs: Vec<String> = c.replicas.iter().map(|r| r.addr.to_string()).collect();
    let _nginx = start_nginx(&bin, dir.path(), port, &addrs);
    exercise(&mut c, &format!("http://127.0.0.1:{port}"), "nginx").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_haproxy_sample_balances_streams_and_survives_a_killed_replica() {
    let Some(bin) = program("haproxy") else {
        eprintln!("SKIPPED: no haproxy (install Debian's `haproxy`; `cargo xtask setup` does)");
        return;
    };
    let Some((mut c, _echo)) = start(2).await else {
        return;
    };
    let dir = tempfile::Builder::new()
        .prefix("a2a-haproxy-")
        .tempdir()
        .unwrap();
    let port = free_port();
    let addrs: Vec<String> = c.replicas.iter().map(|r| r.addr.to_string()).collect();
    let _haproxy = start_haproxy(&bin, dir.path(), port, &addrs);
    exercise(&mut c, &format!("http://127.0.0.1:{port}"), "haproxy").await;
}

/// nginx's workers may run as another user: they need to write their temporary files in `dir`.
fn make_world_usable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
}
