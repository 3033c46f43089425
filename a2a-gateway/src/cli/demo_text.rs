//! What `a2a-gateway demo` prints: commands that run as printed and can be edited and run
//! again (a fresh `messageId` per run of a command, the key exported under the name the `a2a`
//! CLI reads, the CLI by a path that exists or through `cargo run`).

use std::fmt::Write;

/// What the printed commands name.
pub struct DemoText<'a> {
    /// The gateway's base URL (`http://127.0.0.1:PORT`).
    pub base: &'a str,
    /// The echo agent's own URL (no gateway).
    pub echo_url: &'a str,
    /// The demo workspace's key.
    pub key: &'a str,
    /// The A2A version the echo agent speaks.
    pub echo_version: &'a str,
    /// The demo's database and whether it is removed on exit.
    pub database: &'a str,
    /// Whether the database is a temporary file removed on exit.
    pub temporary: bool,
    /// How to run the `a2a` CLI ([`a2a_cli`]).
    pub cli: &'a str,
}

/// A `messageId` fresh each time the command runs (seconds and nanoseconds where `date` has
/// them, and the shell's process id): a command edited and run again is a new message, not a
/// changed duplicate of the last one.
const FRESH_ID: &str = r#"demo-'"$(date +%s%N)-$$"'"#;

/// How to run the `a2a` CLI: the binary beside this one when it was built (a workspace
/// build), else through cargo from the repository.
pub fn a2a_cli() -> String {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("a2a")))
        .filter(|p| p.exists());
    match beside {
        Some(p) => p.display().to_string(),
        None => "cargo run -q --release -p a2ars-client --bin a2a --".into(),
    }
}

impl DemoText<'_> {
    /// The text printed after the gateway listens (ends with the `LISTENING` line's block).
    pub fn render(&self) -> String {
        let (base, cli) = (self.base, self.cli);
        let mut o = String::new();
        let _ = writeln!(
            o,
            "a2a-gateway demo: workspace `demo`, agent `echo` (built-in echo agent, A2A {}), database {}{}",
            self.echo_version,
            self.database,
            if self.temporary {
                " (removed on exit)"
            } else {
                ""
            }
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "export A2A_GATEWAY_KEY={}", self.key);
        let _ = writeln!(
            o,
            "export A2A_BEARER=\"$A2A_GATEWAY_KEY\"   # the a2a CLI reads A2A_BEARER"
        );
        let _ = writeln!(o, "LISTENING {base}");
        let _ = writeln!(
            o,
            "# The echo agent itself (direct, no gateway): {}",
            self.echo_url
        );
        let auth = r#"-H "Authorization: Bearer $A2A_GATEWAY_KEY""#;
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "# The governed Agent Card (A2A 1.0; add -H 'A2A-Version: 0.3' for the 0.3 card):"
        );
        let _ = writeln!(
            o,
            "curl -s {base}/a2a/echo/.well-known/agent-card.json {auth}"
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "# Send a message, A2A 0.3 (no version header):");
        let _ = writeln!(
            o,
            "curl -s {base}/a2a/echo {auth} -H 'Content-Type: application/json' \\"
        );
        let _ = writeln!(
            o,
            r#"  -d '{{"jsonrpc":"2.0","id":"1","method":"message/send","params":{{"message":{{"kind":"message","messageId":"{FRESH_ID}","role":"user","parts":[{{"kind":"text","text":"hello"}}]}}}}}}'"#
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "# Send a message, A2A 1.0:");
        let _ = writeln!(
            o,
            "curl -s {base}/a2a/echo {auth} -H 'A2A-Version: 1.0' -H 'Content-Type: application/json' \\"
        );
        let _ = writeln!(
            o,
            r#"  -d '{{"jsonrpc":"2.0","id":"1","method":"SendMessage","params":{{"message":{{"messageId":"{FRESH_ID}","role":"ROLE_USER","parts":[{{"text":"hello"}}]}}}}}}'"#
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "# Stream, over the HTTP+JSON binding (A2A 1.0):");
        let _ = writeln!(
            o,
            "curl -sN {base}/a2a/echo/v1/message:stream {auth} -H 'A2A-Version: 1.0' -H 'Content-Type: application/a2a+json' \\"
        );
        let _ = writeln!(
            o,
            r#"  -d '{{"message":{{"messageId":"{FRESH_ID}","role":"ROLE_USER","parts":[{{"text":"hello"}}]}}}}'"#
        );
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "# With the a2a CLI (a2a-client; it reads the governed card with the key and picks the"
        );
        let _ = writeln!(o, "# first interface it speaks):");
        let _ = writeln!(o, "{cli} card {base}/a2a/echo");
        let _ = writeln!(o, "{cli} send {base}/a2a/echo 'hello'");
        let _ = writeln!(o, "{cli} send --stream {base}/a2a/echo 'stream hello'");
        let _ = writeln!(
            o,
            "{cli} --no-card --binding jsonrpc --a2a-version 0.3 send {base}/a2a/echo 'hello in 0.3'"
        );
        let _ = writeln!(
            o,
            "{cli} --no-card --binding rest --a2a-version 1.0 send {base}/a2a/echo/v1 'hello over HTTP+JSON'"
        );
        let _ = writeln!(
            o,
            "{cli} --binding grpc send {base}/a2a/echo 'hello over gRPC'   # tenant = agent id, from the card"
        );
        o
    }
}
