//! Runtime configuration (also the TOML schema of the binary's `--config` file).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::settings::Dur;
#[cfg(feature = "cli")]
use crate::settings::Note;
use crate::settings::{Alias, Origin, Value};

/// The flag type of a config field: the field's type unless the list names another
/// (`Option<String> => String`: the flag takes a string).
#[cfg(feature = "cli")]
macro_rules! flag_type {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty, $fty:ty) => {
        $fty
    };
}

/// Defines [`AgentConfig`] (the TOML schema) and [`ConfigArgs`] (its flags and env vars) from one
/// list, so that every field is a TOML key, a flag and an env var and they cannot drift.
macro_rules! agent_config {
    ($(
        $(#[doc = $doc:expr])*
        $([$($arg:tt)*])?
        $field:ident : $ty:ty $(=> $fty:ty)? = $default:expr;
    )*) => {
        /// Every option of the runtime, with the Camel guide's defaults. Each field is a TOML key
        /// (snake_case), a flag (`--kebab-case`) and an env var (`A2A_AGENT_UPPER_CASE`): see
        /// [`ConfigArgs`].
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(default, rename_all = "snake_case", deny_unknown_fields)]
        pub struct AgentConfig {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for AgentConfig {
            fn default() -> Self {
                AgentConfig { $( $field: $default, )* }
            }
        }

        /// The flags of every [`AgentConfig`] field (`--kebab-case`; the env var
        /// `A2A_AGENT_<FIELD>` is attached by [`ConfigArgs::with_env`]). A flag given overrides
        /// the env var, which overrides the TOML file, which overrides the default.
        #[cfg(feature = "cli")]
        #[derive(Debug, Clone, Default, clap::Args)]
        pub struct ConfigArgs {
            $(
                $(#[doc = $doc])*
                #[arg(long $(, $($arg)*)?)]
                pub $field: Option<flag_type!($ty $(, $fty)?)>,
            )*
        }

        #[cfg(feature = "cli")]
        impl ConfigArgs {
            /// The field names (= TOML keys), in order.
            pub const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Write every given value over `cfg`.
            pub fn apply(&self, cfg: &mut AgentConfig) {
                $( if let Some(v) = self.$field.clone() { cfg.$field = v.into(); } )*
            }
        }
    };
}

agent_config! {
    /// Path prefix of every endpoint (JSON-RPC is `POST {base_path}/`). Default: "" (root).
    base_path: String = String::new();
    /// Require authentication on operations (the card stays public). Default: true. With no
    /// security scheme in the card every operation is refused (fail closed).
    validate_auth: bool = true;
    /// The API key accepted by an `apiKey` scheme.
    api_key: Option<String> => String = None;
    /// Header carrying the API key when the scheme names none. Default: `Authorization`.
    api_key_header: String = "Authorization".into();
    /// The static bearer token accepted by an HTTP bearer scheme.
    bearer_token: Option<String> => String = None;
    /// Endpoint default for sends: return the SUBMITTED task at once. Default: false.
    return_immediately: bool = false;
    /// A task running longer fails. Default: 5m.
    async_timeout: Dur = Dur::from_secs(300);
    /// Maximum concurrently running tasks, 0 = unlimited. Default: 0.
    max_concurrent_tasks: usize = 0;
    /// Queue for async sends when every slot is busy, 0 = no queue. Default: 0.
    task_queue_size: usize = 0;
    /// Maximum request body (bytes). Default: 6291456 (6 MiB).
    max_payload_size: usize = 6_291_456;
    /// SSE heartbeat comment interval. Default: 15s.
    sse_heartbeat_interval: Dur = Dur::from_secs(15);
    /// Events queued per SSE connection; a client further behind gets the task snapshot and its
    /// stream ends. Default: 1000.
    sse_queue_capacity: usize = 1000;
    /// Bytes queued per streaming connection (JSON size of the events), 0 = unlimited; a client
    /// that falls further behind gets the task snapshot and its stream ends. Default: 4194304.
    sse_queue_max_bytes: usize = 4 * 1024 * 1024;
    /// CORS allowed origins; empty = CORS off, `*` = any. Default: empty.
    [alias = "cors-origin"]
    cors_allowed_origins: Vec<String> => List = Vec::new();
    /// `Cache-Control: max-age` of the agent card (whole seconds). Default: 5m.
    card_max_age: Dur = Dur::from_secs(300);
    /// SQLite database for tasks; unset = the bounded in-memory store (or `store`).
    sqlite_path: Option<PathBuf> => PathBuf = None;
    /// Where tasks, push configs, sends and replayable events live: a PostgreSQL URL
    /// (`postgres://user:pass@host:port/db`, one database several replicas share; feature
    /// `postgres`) or `memory`; unset = `sqlite_path`'s file, else memory. Giving both this and
    /// `sqlite_path` is refused.
    store: Option<String> => String = None;
    /// With `store = "postgres://…"`: how long a replica's tasks stay its own after it last
    /// renewed its lease (it renews every third of it). When a replica dies, another one ends
    /// (FAILED, or re-runs through `Handler::resume`) its unfinished tasks within about this
    /// long plus a third. Default: 10s (at least 150ms).
    replica_lease: Dur = Dur::from_secs(10);
    /// In-memory store capacity (tasks). Default: 10000.
    memory_store_cap: usize = 10_000;
    /// How long terminal tasks stay in the in-memory store. Default: 1h.
    terminal_task_ttl: Dur = Dur::from_secs(3600);
    /// In-memory store bound in bytes (JSON size of every task), 0 = unlimited. Oldest terminal
    /// tasks are evicted first; a new task is refused (ResourceExhausted) while unfinished tasks
    /// fill it. Default: 268435456 (256 MiB).
    memory_store_max_bytes: usize = 256 * 1024 * 1024;
    /// Largest task in bytes (JSON size), 0 = unlimited; a message that would exceed it is
    /// refused with InvalidParams before it is stored (any store). Default: 16777216 (16 MiB).
    max_task_bytes: usize = 16 * 1024 * 1024;
    /// Most messages kept in a task's history (oldest dropped first), 0 = unlimited.
    /// Default: 1000.
    max_history_length: usize = 1000;
    /// On shutdown, how long running tasks may finish before they fail. Default: 10s.
    shutdown_grace: Dur = Dur::from_secs(10);
    /// Time allowed for a request's headers to arrive (a connection's first request: from
    /// the accept); the connection is closed beyond. Default: 10s.
    header_read_timeout: Dur = Dur::from_secs(10);
    /// Time allowed for a request's whole body to arrive; 408 beyond. Default: 30s.
    body_read_timeout: Dur = Dur::from_secs(30);
    /// A keep-alive connection with no request in flight is closed after this. Default: 1m.
    idle_timeout: Dur = Dur::from_secs(60);
    /// Open connections at most (0 = derived from the fd limit); beyond it new connections get
    /// 503 and are closed. Always kept below `RLIMIT_NOFILE` minus a margin. Default: 10000.
    max_connections: usize = 10_000;
    /// Public base URL written into the card's interfaces; unset = the listening address.
    public_url: Option<String> => String = None;
    /// Push delivery retries after the first attempt (5xx and I/O errors only). Default: 3.
    push_retry_attempts: u32 = 3;
    /// Push retry base backoff; retry n waits `backoff x 2^n`. Default: 1s.
    push_retry_backoff: Dur = Dur::from_secs(1);
    /// Timeout of one push delivery attempt. Default: 10s.
    push_timeout: Dur = Dur::from_secs(10);
    /// Permit loopback webhook URLs, plain http allowed (development only). Default: false.
    allow_local_webhook_urls: bool = false;
    /// OAuth/OIDC: expected token issuer; its discovery document gives the JWKS.
    oidc_issuer: Option<String> => String = None;
    /// OAuth/OIDC: JWKS URL (instead of discovery).
    oidc_jwks_url: Option<String> => String = None;
    /// OAuth/OIDC: accepted audiences; empty = not checked.
    oidc_audience: Vec<String> => List = Vec::new();
    /// RFC 7662 introspection endpoint for opaque tokens.
    oidc_introspection_url: Option<String> => String = None;
    /// Client id for introspection (HTTP Basic).
    oidc_client_id: Option<String> => String = None;
    /// Client secret for introspection.
    oidc_client_secret: Option<String> => String = None;
    /// Minimum interval between JWKS fetches. Default: 30s.
    oidc_min_refresh: Dur = Dur::from_secs(30);
    /// HTTP+JSON error statuses: `spec` (the spec 1.0 table: 400 for a terminal cancel, an
    /// operation on a terminal task, a wrong content type) or `camel` (the Camel guide's table:
    /// 409 / 405 / 415). Default: spec.
    rest_status_table: crate::error::RestStatusTable = crate::error::RestStatusTable::Spec;
    /// Which bindings are served: `both`, `jsonrpc` (JSON-RPC only) or `rest` (HTTP+JSON only).
    /// The other binding answers 404 in its own form, and the default card lists only the
    /// served bindings' interfaces. Default: both.
    binding: ServedBindings = ServedBindings::Both;
    /// Also serve the A2A 1.0 gRPC binding (`lf.a2a.v1.A2AService`) on the same port: HTTP/2
    /// requests with `content-type: application/grpc*` go to it, whatever the base path. The
    /// default card then lists a `GRPC` 1.0 interface (`host:port`). Default: false.
    grpc: bool = false;
    /// What a slow stream subscriber loses when its queue is full (`sse_queue_capacity` /
    /// `sse_queue_max_bytes`): `drop-newest` (the Camel guide: new events are dropped),
    /// `drop-oldest`, `snapshot` (the queue collapses into one Task snapshot) or `disconnect`
    /// (the stream ends so that the client resubscribes). The final event is always
    /// delivered. Default: drop-newest.
    sse_overflow_policy: OverflowPolicy = OverflowPolicy::DropNewest;
    /// Stream events kept per task so that a client that reconnects with `Last-Event-ID` gets
    /// what it missed: with the task in memory (counted in `memory_store_max_bytes`, expired
    /// with the task), or in the SQLite file with `sqlite_path` or the database with `store`,
    /// where they survive a restart.
    /// 0 keeps none (a resume then gets the task snapshot). Default: 256.
    replay_events_per_task: usize = 256;
    /// A SendMessage repeating a `messageId` the caller used within this long answers
    /// from the first send (same task, or same direct message) without running the handler
    /// again; the same `messageId` with a different message is InvalidParams. Kept in memory,
    /// or in the SQLite file with `sqlite_path` or the database with `store`. 0 = off. Records are per authenticated caller:
    /// leave it off behind a proxy that calls this agent for many users with one credential
    /// (a gateway), whose users could otherwise reach each other's sends by `messageId`.
    /// Default: 0 (off); e.g. 1h.
    idempotency_window: Dur = Dur::ZERO;
    /// Threads of the `a2a-agent` binary's async runtime, 0 = one per CPU the process may use
    /// (a program using the library runs the server on its own runtime). On a machine shared
    /// with busy neighbours fewer threads spend less CPU per request. Default: 0.
    workers: usize = 0;
    /// The `a2a-agent` binary's OTLP trace export: the collector's base URL (`http://host:4318`;
    /// `/v1/traces` is added for http/protobuf). Unset here and in `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` = no export. Default: unset.
    otlp_endpoint: Option<String> => String = None;
    /// OTLP transport: `http/protobuf` or `grpc`; unset = `OTEL_EXPORTER_OTLP_PROTOCOL`, else
    /// http/protobuf.
    otlp_protocol: Option<String> => String = None;
    /// Headers of each OTLP export, `k=v,k2=v2` (values percent-decoded); unset =
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    otlp_headers: Option<String> => String = None;
    /// The exported spans' `service.name`; unset = `OTEL_SERVICE_NAME`, else `a2a-agent`.
    service_name: Option<String> => String = None;
    /// The `a2a-agent` binary's log filter: a level (error, warn, info, debug, trace) or
    /// tracing directives such as `info,a2a_agent=debug`; unset = `A2A_AGENT_LOG`, else info.
    log_level: Option<String> => String = None;
}

impl AgentConfig {
    /// The trace settings of this configuration ([`crate::otel`]).
    pub fn otlp(&self) -> crate::otel::Settings<'_> {
        crate::otel::Settings {
            endpoint: self.otlp_endpoint.as_deref(),
            protocol: self.otlp_protocol.as_deref(),
            headers: self.otlp_headers.as_deref(),
            service_name: self.service_name.as_deref(),
        }
    }
}

/// A comma-separated list flag value (`--cors-allowed-origins a,b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List(pub Vec<String>);

impl std::str::FromStr for List {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(List(
            s.split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect(),
        ))
    }
}

impl From<List> for Vec<String> {
    fn from(l: List) -> Self {
        l.0
    }
}

#[cfg(feature = "cli")]
impl ConfigArgs {
    /// The env var of field `name`: `A2A_AGENT_` and the name in upper case.
    pub fn env_name(name: &str) -> String {
        format!("A2A_AGENT_{}", name.to_ascii_uppercase())
    }

    /// Attach the env var of every config flag to `cmd` (a command holding [`ConfigArgs`]),
    /// and note it in the help.
    pub fn with_env(mut cmd: clap::Command) -> clap::Command {
        for f in Self::FIELDS {
            let env: &'static str = Box::leak(Self::env_name(f).into_boxed_str());
            cmd = cmd.mut_arg(*f, |a| a.env(env));
        }
        cmd
    }
}

/// What a subscriber whose queue is full loses (`sse_overflow_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverflowPolicy {
    /// The new event is dropped (the Camel guide). The default.
    #[default]
    DropNewest,
    /// The oldest queued events are dropped to make room.
    DropOldest,
    /// The queue collapses into one `Task` snapshot of the task as it stands.
    Snapshot,
    /// The stream ends after what is queued; the client can resubscribe.
    Disconnect,
}

impl std::str::FromStr for OverflowPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "drop-newest" => Ok(OverflowPolicy::DropNewest),
            "drop-oldest" => Ok(OverflowPolicy::DropOldest),
            "snapshot" => Ok(OverflowPolicy::Snapshot),
            "disconnect" => Ok(OverflowPolicy::Disconnect),
            o => Err(format!(
                "sse_overflow_policy must be drop-newest, drop-oldest, snapshot or disconnect, not {o:?}"
            )),
        }
    }
}

/// The bindings a server answers on (`binding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServedBindings {
    /// JSON-RPC and HTTP+JSON.
    #[default]
    Both,
    /// JSON-RPC only (also written `JSONRPC`, as the Camel guide does).
    #[serde(alias = "JSONRPC", alias = "json-rpc")]
    Jsonrpc,
    /// HTTP+JSON only (also written `HTTP+JSON`).
    #[serde(alias = "HTTP+JSON", alias = "http+json")]
    Rest,
}

impl ServedBindings {
    /// Whether JSON-RPC is served.
    pub fn jsonrpc(self) -> bool {
        self != ServedBindings::Rest
    }
    /// Whether HTTP+JSON is served.
    pub fn rest(self) -> bool {
        self != ServedBindings::Jsonrpc
    }
}

impl std::str::FromStr for ServedBindings {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "both" => Ok(ServedBindings::Both),
            "jsonrpc" | "json-rpc" => Ok(ServedBindings::Jsonrpc),
            "rest" | "http+json" => Ok(ServedBindings::Rest),
            o => Err(format!("binding must be jsonrpc, rest or both, not {o:?}")),
        }
    }
}

impl AgentConfig {
    /// Parse a TOML document: our keys, the deprecated ones and the Camel guide's
    /// ([`ALIASES`]). What the alias pass notes (deprecated names) is logged at warn.
    #[cfg(feature = "cli")]
    pub fn from_toml(s: &str) -> Result<Self, toml::de::Error> {
        use serde::de::Error;
        let table: toml::Table = toml::from_str(s)?;
        let (cfg, notes) = Self::from_table(table).map_err(toml::de::Error::custom)?;
        crate::settings::log_notes(&notes);
        Ok(cfg)
    }

    /// The settings of a parsed TOML file read through [`ALIASES`], and what the pass noticed.
    #[cfg(feature = "cli")]
    pub fn from_table(table: toml::Table) -> Result<(Self, Vec<Note>), String> {
        let (table, notes) = crate::settings::rename_table(table, ALIASES, &["camel"])?;
        let cfg = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| e.to_string())?;
        Ok((cfg, notes))
    }

    /// The normalized base path (`""` or `/x`).
    pub fn base(&self) -> String {
        let b = self.base_path.trim_end_matches('/');
        if b.is_empty() {
            String::new()
        } else if b.starts_with('/') {
            b.to_string()
        } else {
            format!("/{b}")
        }
    }

    /// The token validation settings, when any OAuth/OIDC option is set.
    #[cfg(feature = "oidc")]
    pub fn oidc(&self) -> Option<crate::oidc::OidcConfig> {
        (self.oidc_issuer.is_some()
            || self.oidc_jwks_url.is_some()
            || self.oidc_introspection_url.is_some())
        .then(|| crate::oidc::OidcConfig {
            issuer: self.oidc_issuer.clone(),
            jwks_url: self.oidc_jwks_url.clone(),
            audience: self.oidc_audience.clone(),
            introspection_url: self.oidc_introspection_url.clone(),
            client_id: self.oidc_client_id.clone(),
            client_secret: self.oidc_client_secret.clone(),
            min_refresh_interval: self.oidc_min_refresh.get(),
            ..Default::default()
        })
    }

    /// The connection-level limits of [`crate::listen`].
    pub fn listen(&self) -> crate::listen::ListenConfig {
        crate::listen::ListenConfig {
            header_read_timeout: self.header_read_timeout.get().max(Duration::from_millis(1)),
            body_read_timeout: self.body_read_timeout.get().max(Duration::from_millis(1)),
            idle_timeout: self.idle_timeout.get().max(Duration::from_millis(1)),
            max_connections: self.max_connections,
            max_buffered_body: self.max_payload_size,
        }
    }

    /// The byte and history bounds of stored tasks.
    pub fn store_limits(&self) -> crate::bounds::StoreLimits {
        crate::bounds::StoreLimits {
            max_task_bytes: self.max_task_bytes,
            max_history_length: self.max_history_length,
        }
    }

    pub(crate) fn async_timeout(&self) -> Duration {
        self.async_timeout.get()
    }
}

/// The boolean settings, switches on the command line (`--grpc`, `--no-grpc`).
pub const SWITCHES: &[&str] = &[
    "validate_auth",
    "return_immediately",
    "allow_local_webhook_urls",
    "grpc",
];

/// Card identity keys of the Camel guide a file may hold (route parameters): the binary reads
/// them as `--name`, `--description` and `--agent-version`; [`AgentConfig`] has no such keys.
pub const CARD_KEYS: &[&str] = &["name", "description", "version"];

const fn old(name: &'static str, ours: &'static str, value: Value) -> Alias {
    Alias::old(name, ours, value)
}

const fn camel(name: &'static str, ours: &'static str, value: Value) -> Alias {
    Alias::foreign(Origin::Camel, name, ours, value)
}

/// Every other name an agent setting is read by: our former names (durations with a unit in
/// the name, read for one release with a warning) and the Camel guide's route parameters, as
/// written (docs/settings-map.md).
pub const ALIASES: &[Alias] = &[
    old("async_timeout_ms", "async_timeout", Value::Millis),
    old(
        "sse_heartbeat_interval_ms",
        "sse_heartbeat_interval",
        Value::Millis,
    ),
    old("card_max_age_s", "card_max_age", Value::Secs),
    old("terminal_task_ttl_s", "terminal_task_ttl", Value::Secs),
    old("shutdown_grace_ms", "shutdown_grace", Value::Millis),
    old(
        "header_read_timeout_ms",
        "header_read_timeout",
        Value::Millis,
    ),
    old("body_read_timeout_ms", "body_read_timeout", Value::Millis),
    old("idle_timeout_ms", "idle_timeout", Value::Millis),
    old("push_retry_backoff_ms", "push_retry_backoff", Value::Millis),
    old("push_timeout_ms", "push_timeout", Value::Millis),
    old("oidc_min_refresh_ms", "oidc_min_refresh", Value::Millis),
    old("idempotency_window_s", "idempotency_window", Value::Secs),
    camel("validateAuth", "validate_auth", Value::Bool),
    camel("apiKey", "api_key", Value::Same),
    camel("apiKeyHeader", "api_key_header", Value::Same),
    camel("bearerToken", "bearer_token", Value::Same),
    camel("basePath", "base_path", Value::Same),
    camel(
        "protocolBinding",
        "binding",
        Value::Map(&[
            ("HTTP+JSON", "rest"),
            ("JSONRPC", "jsonrpc"),
            ("rest", "rest"),
            ("json-rpc", "jsonrpc"),
        ]),
    ),
    camel("returnImmediately", "return_immediately", Value::Bool),
    camel("asyncTimeout", "async_timeout", Value::Millis),
    camel("maxConcurrentTasks", "max_concurrent_tasks", Value::Int),
    camel("taskQueueSize", "task_queue_size", Value::Int),
    camel("maxPayloadSize", "max_payload_size", Value::Int),
    camel(
        "sseHeartbeatInterval",
        "sse_heartbeat_interval",
        Value::Millis,
    ),
    camel("sseQueueCapacity", "sse_queue_capacity", Value::Int),
    camel("pushRetryAttempts", "push_retry_attempts", Value::Int),
    camel("pushRetryBackoffMs", "push_retry_backoff", Value::Millis),
    camel(
        "allowLocalWebhookUrls",
        "allow_local_webhook_urls",
        Value::Bool,
    ),
    camel(
        "camel.rest.enableCors",
        "cors_allowed_origins",
        Value::AnyOrigin,
    ),
    camel("camel.oauth.*.client-id", "oidc_client_id", Value::Same),
    camel(
        "camel.oauth.*.client-secret",
        "oidc_client_secret",
        Value::Same,
    ),
    camel(
        "camel.oauth.*.token-endpoint",
        "",
        Value::Refuse(
            "the agent validates tokens and never obtains one; remove it (token introspection: \
             oidc_introspection_url)",
        ),
    ),
    camel(
        "oauthProfile",
        "",
        Value::Refuse(
            "there are no camel-oauth profiles here: give the token validation settings \
             directly (oidc_issuer, oidc_jwks_url, oidc_audience, oidc_introspection_url)",
        ),
    ),
    camel(
        "agentCard",
        "",
        Value::Refuse("a registry bean cannot be named here: give the card file with --card"),
    ),
    camel(
        "dataFormat",
        "",
        Value::NoEffect(
            &["PAYLOAD", "POJO", "RAW"],
            "every request gives all three views (the text, the typed message, the raw JSON; \
             --exec: the text on stdin, the message JSON in $A2A_MESSAGE)",
        ),
    ),
    camel(
        "httpServerComponent",
        "",
        Value::NoEffect(
            &["platform-http", "jetty", "undertow"],
            "one built-in HTTP server, whose router takes colon paths literally",
        ),
    ),
];
