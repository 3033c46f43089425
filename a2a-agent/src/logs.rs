//! Process logging for the binaries (`a2a-agent`, `a2a-gateway`): one setup, the same flags.
//!
//! - format: `text` (human lines) or `json` (one JSON object per line, for log shippers);
//! - level: a `tracing` filter (`info`, `warn,a2a_gateway=debug`, …) from `--log-level`, else
//!   the binary's environment variable (`A2A_AGENT_LOG`, `RUST_LOG` for the gateway), else the
//!   binary's default;
//! - colour: ANSI codes only when stderr is a terminal (never in files or pipes);
//! - traces: with an OTLP endpoint set, spans are exported too ([`crate::otel`]).

use std::io::IsTerminal;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Registry, reload};

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("log format {other:?}: expected text or json")),
        }
    }
}

impl std::fmt::Display for LogFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LogFormat::Text => "text",
            LogFormat::Json => "json",
        })
    }
}

/// The filter: `level` if given, else `env_var`'s value, else `default`. A filter that does
/// not parse is an error naming it.
pub fn filter(level: Option<&str>, env_var: &str, default: &str) -> Result<EnvFilter, String> {
    match level {
        Some(l) => EnvFilter::try_new(l).map_err(|e| format!("log level {l:?}: {e}")),
        None => Ok(EnvFilter::try_from_env(env_var).unwrap_or_else(|_| EnvFilter::new(default))),
    }
}

/// The installed filter, for [`set_filter`].
static FILTER: std::sync::OnceLock<reload::Handle<EnvFilter, Registry>> =
    std::sync::OnceLock::new();

/// Installs the process's subscriber writing to stderr (see the module doc), and, given
/// `traces`, the layer exporting spans over OTLP ([`crate::otel`]). Call once, first. The log
/// filter can be replaced later ([`set_filter`]).
pub fn init(format: LogFormat, filter: EnvFilter, traces: Option<&crate::otel::Tracing>) {
    use tracing_subscriber::Layer as _;
    let (filter, handle) = reload::Layer::new(filter);
    let _ = FILTER.set(handle);
    // The log filter applies to the log lines only: the spans exported are chosen by the
    // export layer (target `a2a_otel`), whatever the log level.
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let fmt: Box<dyn tracing_subscriber::Layer<Registry> + Send + Sync> = match format {
        LogFormat::Json => fmt.json().with_ansi(false).boxed(),
        LogFormat::Text => fmt.with_ansi(std::io::stderr().is_terminal()).boxed(),
    };
    let registry = tracing_subscriber::registry().with(fmt.with_filter(filter));
    match traces {
        Some(t) => registry.with(t.layer()).init(),
        None => registry.init(),
    }
}

/// Replaces the filter [`init`] installed (a configuration reload); an error when [`init`] was
/// not called.
pub fn set_filter(filter: EnvFilter) -> Result<(), String> {
    FILTER
        .get()
        .ok_or_else(|| "logging is not set up".to_owned())?
        .reload(filter)
        .map_err(|e| format!("log level not changed: {e}"))
}
