//! What the two binaries (`a2a-agent`, `a2a-gateway`) share besides logging ([`crate::logs`]):
//! the commented sample configuration (`config sample`), the container healthcheck
//! (`healthcheck`), the start of `serve` ([`serve_traced`]: runtime, trace export, logs) and the
//! process's part of a configuration reload ([`stage_reload`]: log filter, trace export).
//!
//! The sample is generated, never written by hand: the keys and default values come from the
//! binary's own settings type (serialized defaults), and each comment is the help of the flag
//! that sets the key, so a setting added to the type and its flag shows up in the sample. A key
//! without a flag must be given a comment ([`Extra`]); otherwise rendering fails, which the
//! binaries' tests catch.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How a key that has no flag of the same name is described in the sample.
#[derive(Debug, Clone, Copy)]
pub enum Extra {
    /// The flag that sets the key has another name (`streaming_enabled` is `--streaming`).
    Flag(&'static str),
    /// The key has no flag (TOML only): this comment.
    Comment(&'static str),
}

/// Longest comment line of the sample.
const WIDTH: usize = 96;

/// A commented TOML document holding every key of `defaults` (the settings type's default,
/// serialized as JSON): `header` first (wrapped into comments), then each key with its
/// flag's help, its flag and environment variable, and its default value. An unset key (JSON
/// `null`) is written commented out with an empty string. Nested objects become `[tables]`.
/// Fails when a key has no flag in `cmd` (the `serve` command) and no [`Extra`].
pub fn sample_toml(
    header: &str,
    defaults: &serde_json::Value,
    cmd: &clap::Command,
    extra: &[(&str, Extra)],
) -> Result<String, String> {
    let top = defaults
        .as_object()
        .ok_or("the defaults are not a JSON object")?;
    let mut out = String::new();
    for (i, paragraph) in header.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str("#\n");
        }
        wrap(&mut out, paragraph);
    }
    let (tables, scalars): (Vec<_>, Vec<_>) = top.iter().partition(|(_, v)| v.is_object());
    for (key, value) in in_help_order(scalars, cmd, extra) {
        setting(&mut out, key, value, cmd, extra)?;
    }
    for (name, table) in tables {
        let _ = write!(out, "\n[{name}]\n");
        let keys = table.as_object().into_iter().flatten().collect();
        for (key, value) in in_help_order(keys, cmd, extra) {
            setting(&mut out, key, value, cmd, extra)?;
        }
    }
    Ok(out)
}

/// The flag a key is set with (its own name unless [`Extra`] says otherwise).
fn flag_of<'a>(key: &'a str, extra: &[(&str, Extra)]) -> Option<&'a str> {
    match extra.iter().find(|(k, _)| *k == key).map(|(_, e)| *e) {
        Some(Extra::Flag(f)) => Some(f),
        Some(Extra::Comment(_)) => None,
        None => Some(key),
    }
}

/// The keys in the order of their flags in `--help` (related settings stay together), keys
/// without a flag last.
fn in_help_order<'a>(
    mut keys: Vec<(&'a String, &'a serde_json::Value)>,
    cmd: &clap::Command,
    extra: &[(&str, Extra)],
) -> Vec<(&'a String, &'a serde_json::Value)> {
    let position = |key: &str| {
        flag_of(key, extra)
            .and_then(|f| cmd.get_arguments().position(|a| a.get_id() == f))
            .unwrap_or(usize::MAX)
    };
    keys.sort_by_key(|(k, _)| position(k));
    keys
}

/// One key: comment lines, then `key = value` (or `# key = ""` when unset).
fn setting(
    out: &mut String,
    key: &str,
    value: &serde_json::Value,
    cmd: &clap::Command,
    extra: &[(&str, Extra)],
) -> Result<(), String> {
    let given = extra.iter().find(|(k, _)| *k == key).map(|(_, e)| *e);
    let arg = flag_of(key, extra).and_then(|id| cmd.get_arguments().find(|a| a.get_id() == id));
    out.push('\n');
    match (arg, given) {
        (Some(arg), _) => {
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            wrap(out, &help);
            let mut how = Vec::new();
            if let Some(long) = arg.get_long() {
                how.push(format!("flag --{long}"));
            }
            if let Some(env) = arg.get_env() {
                how.push(format!("env {}", env.to_string_lossy()));
            }
            if !how.is_empty() {
                let _ = writeln!(out, "# ({})", how.join(", "));
            }
        }
        (None, Some(Extra::Comment(text))) => {
            wrap(out, text);
            out.push_str("# (TOML only: no flag or environment variable)\n");
        }
        (None, _) => {
            return Err(format!(
                "setting `{key}` has no flag of that name in `{}` and no comment: give it one \
                 (a2a_agent::cli_tools::Extra)",
                cmd.get_name()
            ));
        }
    }
    if value.is_null() {
        let _ = writeln!(out, "# {key} = \"\"");
    } else {
        let v = toml::Value::try_from(value).map_err(|e| format!("setting `{key}`: {e}"))?;
        let _ = writeln!(out, "{key} = {v}");
    }
    Ok(())
}

/// `# line`, or `#` for an empty line.
fn comment(line: &str) -> String {
    if line.is_empty() {
        "#".into()
    } else {
        format!("# {line}")
    }
}

/// `text` as comment lines of at most [`WIDTH`] characters (paragraphs kept).
fn wrap(out: &mut String, text: &str) {
    for paragraph in text.split("\n\n") {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > WIDTH - 2 {
                out.push_str(&comment(&line));
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            out.push_str(&comment(&line));
            out.push('\n');
        }
    }
}

/// The readiness URL of a server listening on `listen`: an unspecified address (`0.0.0.0`,
/// `::`) is probed on loopback.
pub fn readyz_url(listen: SocketAddr) -> String {
    let mut addr = listen;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{addr}/readyz")
}

/// `GET url` (plain `http://`) with HTTP/1.1: `Ok` when the answer's status is 200 within
/// `timeout`, otherwise the reason. For container health checks, where the image has no curl.
pub fn healthcheck(url: &str, timeout: Duration) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    if parsed.scheme() != "http" {
        return Err(format!("{url}: only http:// URLs are probed"));
    }
    let host = parsed.host_str().ok_or_else(|| format!("{url}: no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = (host.trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|e| format!("{url}: {e}"))?
        .collect();
    let mut last = format!("{url}: no address");
    for addr in addrs {
        match probe(addr, &parsed, timeout) {
            Ok(()) => return Ok(()),
            Err(e) => last = format!("{url}: {e}"),
        }
    }
    Err(last)
}

/// One attempt at `addr`.
fn probe(addr: SocketAddr, url: &url::Url, timeout: Duration) -> Result<(), String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let host = url.host_str().unwrap_or_default();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nUser-Agent: healthcheck\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 64];
    let mut read = 0;
    while read < 12 {
        match stream.read(&mut head[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) => return Err(e.to_string()),
        }
    }
    let status_line = String::from_utf8_lossy(&head[..read]);
    let status = status_line.split_whitespace().nth(1).unwrap_or("none");
    if status == "200" {
        Ok(())
    } else {
        Err(format!("status {status}"))
    }
}

/// Runs `main` (a binary's `serve`) on the runtime of `workers` threads (0: one per CPU), with
/// the process's logs (`format`, `filter`) and its trace export ([`crate::otel`], installed as
/// [`crate::otel::process`]: on with `export`, off otherwise, and switchable by a reload,
/// [`stage_reload`]); the spans still queued are sent before it returns (SIGTERM included).
///
/// # Safety
/// The OTLP header variables are removed from the environment
/// ([`crate::otel::take_header_variables`]): call it before the process has any other thread.
pub unsafe fn serve_traced<F: std::future::Future>(
    export: Option<crate::otel::Export>,
    workers: usize,
    format: crate::logs::LogFormat,
    filter: tracing_subscriber::EnvFilter,
    main: F,
) -> std::io::Result<F::Output> {
    // SAFETY: the caller's promise (no other thread yet; the runtime starts below).
    unsafe { crate::otel::take_header_variables() };
    let rt = crate::listen::runtime(workers)?;
    // Started inside the runtime (the gRPC exporter's channel lives there).
    let traces = match &export {
        Some(e) => rt
            .block_on(async { crate::otel::Tracing::start(e) })
            .map_err(std::io::Error::other)?,
        None => crate::otel::Tracing::off(),
    };
    let traces = crate::otel::install(traces)
        .ok_or_else(|| std::io::Error::other("the trace export is installed already"))?;
    crate::logs::init(format, filter, Some(traces));
    let done = rt.block_on(main);
    traces.shutdown();
    Ok(done)
}

/// The part of a configuration reload that belongs to the process rather than to the server,
/// the same in both binaries: a new log filter and a new trace export, both checked and built
/// by [`stage_reload`] before anything changes, then put in place by [`ProcessReload::commit`].
#[derive(Debug)]
pub struct ProcessReload {
    filter: Option<tracing_subscriber::EnvFilter>,
    traces: Option<crate::otel::Staged>,
}

/// A log level that changed: the new one (`None`: unset), the binary's variable read then,
/// and its default.
#[derive(Debug, Clone, Copy)]
pub struct LogLevel<'a> {
    /// The level now set.
    pub level: Option<&'a str>,
    /// The environment variable read when it is unset.
    pub env_var: &'a str,
    /// The default when neither is set.
    pub default: &'a str,
}

/// Checks and builds what a reload changes in the process: `log` when the log level changed,
/// `otlp` (the trace settings and the binary's default service name) when a trace setting
/// changed. Call it inside the runtime (a gRPC exporter's channel lives there). A bad level or
/// export is an error, and nothing changed.
pub fn stage_reload(
    log: Option<LogLevel<'_>>,
    otlp: Option<(crate::otel::Settings<'_>, &str)>,
) -> Result<ProcessReload, String> {
    let filter = log
        .map(|l| crate::logs::filter(l.level, l.env_var, l.default))
        .transpose()?;
    let traces = match otlp {
        Some((s, service)) => {
            let export = crate::otel::Export::from_env(&s, service)?;
            Some(crate::otel::Tracing::stage(export.as_ref())?)
        }
        None => None,
    };
    Ok(ProcessReload { filter, traces })
}

impl ProcessReload {
    /// Puts the new log filter and trace export in place.
    pub fn commit(self) -> Result<(), String> {
        if let Some(f) = self.filter {
            crate::logs::set_filter(f)?;
        }
        if let Some(t) = self.traces {
            crate::otel::process()
                .ok_or_else(|| "the trace export is not set up".to_owned())?
                .switch(t);
        }
        Ok(())
    }
}

/// Reports a SIGHUP reload: on stderr and as a log event, what was applied and what needs a
/// restart (`done`), or why the file was refused (`refused`, on one line: a TOML error spans
/// several) with the running settings kept.
pub fn report_reload(outcome: Result<&dyn std::fmt::Display, &dyn std::fmt::Display>) {
    match outcome {
        Ok(done) => {
            eprintln!("config reloaded: {done}");
            tracing::info!(%done, "config reloaded");
        }
        Err(refused) => {
            let why = refused.to_string();
            let why: Vec<&str> = why
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let why = why.join(" | ");
            eprintln!("config reload refused: {why}; the running settings stay");
            tracing::error!("config reload refused: {why}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd() -> clap::Command {
        clap::Command::new("serve")
            .arg(
                clap::Arg::new("port")
                    .long("port")
                    .env("X_PORT")
                    .help("Port to bind [default: 80]."),
            )
            .arg(clap::Arg::new("streaming").long("streaming"))
    }

    #[test]
    fn sample_has_every_key_with_its_flag_and_default() {
        let defaults = serde_json::json!({
            "port": 80, "token": null, "streaming_enabled": true,
            "limits": {"max_bytes": 1024}, "names": ["a"]
        });
        let extra = [
            ("streaming_enabled", Extra::Flag("streaming")),
            ("token", Extra::Comment("A secret.")),
            ("max_bytes", Extra::Comment("Bytes at most.")),
            ("names", Extra::Comment("Names.")),
        ];
        let text = sample_toml("Title\n\nmore", &defaults, &cmd(), &extra).unwrap();
        assert!(text.starts_with("# Title\n#\n# more\n"), "{text}");
        assert!(
            text.contains(
                "# Port to bind [default: 80].\n# (flag --port, env X_PORT)\nport = 80\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "# A secret.\n# (TOML only: no flag or environment variable)\n# token = \"\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("(flag --streaming)\nstreaming_enabled = true\n"),
            "{text}"
        );
        assert!(text.contains("names = [\"a\"]\n"), "{text}");
        // Tables come last, so that the top-level keys stay above them.
        let table = text.find("\n[limits]\n").unwrap();
        assert!(table > text.find("names =").unwrap());
        assert!(text[table..].contains("max_bytes = 1024\n"));
        // What it wrote is TOML and reads back as the defaults (the unset key left out).
        let back: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(back["port"].as_integer(), Some(80));
        assert_eq!(back["limits"]["max_bytes"].as_integer(), Some(1024));
        assert!(!back.contains_key("token"));
    }

    #[test]
    fn a_key_without_flag_or_comment_is_an_error() {
        let err = sample_toml("", &serde_json::json!({"new_setting": 1}), &cmd(), &[]).unwrap_err();
        assert!(err.contains("`new_setting`"), "{err}");
    }

    #[test]
    fn healthcheck_reads_the_status_line() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            for status in ["200 OK", "503 Service Unavailable"] {
                let (mut s, _) = listener.accept().unwrap();
                let mut buf = [0u8; 1024];
                let n = s.read(&mut buf).unwrap();
                assert!(String::from_utf8_lossy(&buf[..n]).starts_with("GET /readyz HTTP/1.1\r\n"));
                let _ = s.write_all(
                    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n").as_bytes(),
                );
            }
        });
        let url = readyz_url(SocketAddr::from(([0, 0, 0, 0], addr.port())));
        assert_eq!(url, format!("http://127.0.0.1:{}/readyz", addr.port()));
        assert_eq!(healthcheck(&url, Duration::from_secs(5)), Ok(()));
        let err = healthcheck(&url, Duration::from_secs(5)).unwrap_err();
        assert!(err.ends_with("status 503"), "{err}");
        server.join().unwrap();
        // Nothing listens any more: refused.
        assert!(healthcheck(&url, Duration::from_secs(5)).is_err());
        assert!(healthcheck("https://127.0.0.1/readyz", Duration::from_secs(1)).is_err());
    }
}
