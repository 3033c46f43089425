//! The command line: flags and subcommands (clap derive).

use std::path::PathBuf;

use a2a_client::select::Binding;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Talk to an A2A agent from the command line.
///
/// URL is the agent's base URL: its card is fetched from URL/.well-known/agent-card.json and the
/// first interface this client can speak is used (force one with --binding / --a2a-version).
#[derive(Parser, Debug)]
#[command(name = "a2a", version)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Flags accepted by every command.
#[derive(Args, Debug)]
pub(crate) struct Global {
    /// Protocol version to speak: `1.0` or `0.3` (default: the card's first usable entry).
    #[arg(long = "a2a-version", global = true, value_name = "VERSION")]
    pub(crate) a2a_version: Option<String>,
    /// Binding to use: `jsonrpc`, `http+json` (alias `rest`) or `grpc` (1.0; TLS for `https` URLs).
    #[arg(long, global = true, value_enum)]
    pub(crate) binding: Option<BindingArg>,
    /// Do not fetch the card: URL is the interface itself (needs --binding and --a2a-version).
    #[arg(long, global = true)]
    pub(crate) no_card: bool,
    /// Tenant to send with --no-card (with a card, the selected entry's tenant is used).
    #[arg(long, global = true, value_name = "TENANT")]
    pub(crate) tenant: Option<String>,
    /// Extra request header `NAME:VALUE` (repeatable); replaces a header the client would set.
    #[arg(long = "header", short = 'H', global = true, value_name = "NAME:VALUE")]
    pub(crate) headers: Vec<String>,
    /// API key to send (see --api-key-name and --api-key-in).
    #[arg(
        long,
        global = true,
        env = "A2A_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub(crate) api_key: Option<String>,
    /// Name of the API key header, query parameter or cookie.
    #[arg(long, global = true, default_value = "X-API-Key", value_name = "NAME")]
    pub(crate) api_key_name: String,
    /// Where the API key goes.
    #[arg(long, global = true, value_enum, default_value = "header")]
    pub(crate) api_key_in: KeyIn,
    /// Bearer token (`Authorization: Bearer TOKEN`).
    #[arg(
        long,
        global = true,
        env = "A2A_BEARER",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub(crate) bearer: Option<String>,
    /// Extension URI to request via A2A-Extensions (repeatable).
    #[arg(long = "extension", global = true, value_name = "URI")]
    pub(crate) extensions: Vec<String>,
    /// Timeout of a unary call, in seconds (streams are not cut).
    #[arg(long, global = true, default_value_t = 100, value_name = "SECS")]
    pub(crate) timeout: u64,
    /// Print the raw 1.0 JSON result (one JSON document per line for streams).
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Also trust the CA certificates of this PEM file (every binding: cards, JSON-RPC,
    /// HTTP+JSON and gRPC over TLS), beside the system's roots.
    #[arg(long, global = true, value_name = "PEM_FILE", env = "A2A_CACERT")]
    pub(crate) cacert: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BindingArg {
    /// JSON-RPC 2.0.
    #[value(name = "jsonrpc")]
    JsonRpc,
    /// HTTP+JSON (REST).
    #[value(name = "http+json", alias = "rest")]
    HttpJson,
    /// gRPC (A2A 1.0; TLS for `https` interfaces, plaintext HTTP/2 for `http`).
    #[value(name = "grpc")]
    Grpc,
}

impl BindingArg {
    pub(crate) fn binding(self) -> Binding {
        match self {
            BindingArg::JsonRpc => Binding::JsonRpc,
            BindingArg::HttpJson => Binding::HttpJson,
            BindingArg::Grpc => Binding::Grpc,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum KeyIn {
    /// A request header.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Fetch and show the agent card (the selected interface is marked).
    Card {
        /// Agent base URL.
        url: String,
        /// Fetch the authenticated extended card instead.
        #[arg(long)]
        extended: bool,
    },
    /// Send a message (text plus optional data/file parts).
    Send(SendArgs),
    /// Task operations.
    #[command(subcommand)]
    Task(TaskCmd),
    /// Push notification config operations.
    #[command(subcommand)]
    Push(PushCmd),
}

#[derive(Args, Debug)]
pub(crate) struct SendArgs {
    /// Agent base URL.
    pub(crate) url: String,
    /// Message text.
    pub(crate) text: String,
    /// Stream the answer (SendStreamingMessage), printing events as they arrive.
    #[arg(long)]
    pub(crate) stream: bool,
    /// Add a data part with this JSON value.
    #[arg(long, value_name = "JSON")]
    pub(crate) data: Option<String>,
    /// Add a file part with this file's bytes.
    #[arg(long, value_name = "PATH")]
    pub(crate) file: Option<PathBuf>,
    /// Continue this task.
    #[arg(long, value_name = "ID")]
    pub(crate) task_id: Option<String>,
    /// Use this context.
    #[arg(long, value_name = "ID")]
    pub(crate) context_id: Option<String>,
    /// Return as soon as the task exists (returnImmediately / 0.3 blocking=false).
    #[arg(long)]
    pub(crate) no_wait: bool,
    /// At most this many history messages in the answer.
    #[arg(long, value_name = "N")]
    pub(crate) history_length: Option<i32>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum TaskCmd {
    /// Get a task.
    Get {
        /// Agent base URL.
        url: String,
        /// Task id.
        id: String,
        /// At most this many history messages.
        #[arg(long, value_name = "N")]
        history_length: Option<i32>,
    },
    /// List tasks (1.0 only).
    List {
        /// Agent base URL.
        url: String,
        /// Only tasks of this context.
        #[arg(long, value_name = "ID")]
        context_id: Option<String>,
        /// Only tasks in this state (e.g. TASK_STATE_WORKING or working).
        #[arg(long, value_name = "STATE")]
        status: Option<String>,
        /// Page size (1-100).
        #[arg(long, value_name = "N")]
        page_size: Option<i32>,
        /// Page token from a previous page.
        #[arg(long, value_name = "TOKEN")]
        page_token: Option<String>,
    },
    /// Cancel a task.
    Cancel {
        /// Agent base URL.
        url: String,
        /// Task id.
        id: String,
    },
    /// Subscribe to a task's events (printed as they arrive).
    Subscribe {
        /// Agent base URL.
        url: String,
        /// Task id.
        id: String,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum PushCmd {
    /// Create a push notification config for a task.
    Set {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
        /// Webhook URL the agent will POST to.
        webhook: String,
        /// Config id.
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        /// Token the agent echoes to the webhook.
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
        /// Authorization scheme the agent uses towards the webhook (e.g. Bearer).
        #[arg(long, value_name = "SCHEME")]
        auth_scheme: Option<String>,
        /// Credentials for --auth-scheme.
        #[arg(long, value_name = "CREDENTIALS", requires = "auth_scheme")]
        auth_credentials: Option<String>,
    },
    /// Get a push notification config.
    Get {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
        /// Config id.
        id: String,
    },
    /// List a task's push notification configs.
    List {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
    },
    /// Delete a push notification config.
    Delete {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
        /// Config id.
        id: String,
    },
}
