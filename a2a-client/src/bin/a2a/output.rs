//! Printing results: readable text, or the 1.0 JSON with `--json`.

use std::io::Write;

use a2a_client::ClientError;
use a2a_client::select::{Binding, SelectedInterface, Version};
use a2a_client::transport::EventStream;
use a2a_types::v1;
use anyhow::Result;
use futures_util::StreamExt;

/// Output formatting (readable or `--json`).
pub(crate) struct Out {
    /// Print JSON documents instead of text.
    pub(crate) json: bool,
}

fn state_name(s: v1::TaskState) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .map(|n| n.trim_start_matches("TASK_STATE_").to_ascii_lowercase())
        .unwrap_or_else(|| format!("{s:?}"))
}

fn parts_text(parts: &[v1::Part]) -> String {
    parts
        .iter()
        .map(|p| match &p.content {
            v1::PartContent::Text(t) => t.clone(),
            v1::PartContent::Data(d) => d.to_string(),
            v1::PartContent::Url(u) => format!("<{u}>"),
            v1::PartContent::Raw(b) => format!(
                "[{} {} bytes]",
                p.filename.as_deref().unwrap_or("file"),
                b.decode().map(|d| d.len()).unwrap_or(0)
            ),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Out {
    pub(crate) fn json_line<T: serde::Serialize>(&mut self, v: &T) -> Result<()> {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer(&mut stdout, v)?;
        writeln!(stdout)?;
        stdout.flush()?;
        Ok(())
    }

    pub(crate) fn task(&mut self, t: &v1::Task) -> Result<()> {
        if self.json {
            return self.json_line(t);
        }
        println!(
            "task {} ({}){}",
            t.id,
            state_name(t.status.state),
            t.context_id
                .as_deref()
                .map(|c| format!(" context {c}"))
                .unwrap_or_default()
        );
        if let Some(m) = &t.status.message {
            println!("  status: {}", parts_text(&m.parts));
        }
        for a in &t.artifacts {
            println!(
                "  artifact {}: {}",
                a.name.as_deref().unwrap_or(&a.artifact_id),
                parts_text(&a.parts)
            );
        }
        Ok(())
    }

    pub(crate) fn message(&mut self, m: &v1::Message) -> Result<()> {
        if self.json {
            return self.json_line(m);
        }
        println!("{}", parts_text(&m.parts));
        Ok(())
    }

    pub(crate) fn push(&mut self, c: &v1::TaskPushNotificationConfig) -> Result<()> {
        if self.json {
            return self.json_line(c);
        }
        println!(
            "push config {} of task {} -> {}{}",
            c.id.as_deref().unwrap_or("-"),
            c.task_id.as_deref().unwrap_or("-"),
            c.url,
            c.authentication
                .as_ref()
                .map(|a| format!(" (auth {})", a.scheme))
                .unwrap_or_default()
        );
        Ok(())
    }

    pub(crate) fn card(
        &mut self,
        card: &v1::AgentCard,
        chosen: Option<Result<SelectedInterface, &ClientError>>,
    ) -> Result<()> {
        if self.json {
            return self.json_line(card);
        }
        println!("{} (version {})", card.name, card.version);
        if !card.description.is_empty() {
            println!("  {}", card.description);
        }
        println!("interfaces:");
        for i in &card.supported_interfaces {
            let mark = match &chosen {
                Some(Ok(sel))
                    if sel
                        .offer
                        .as_ref()
                        .map_or(sel.url.as_str(), |o| o.url.as_str())
                        .trim_end_matches('/')
                        == i.url.trim_end_matches('/')
                        && Some(sel.binding) == Binding::parse(&i.protocol_binding)
                        && Version::from_declared(&i.protocol_version) == Some(sel.version) =>
                {
                    "*"
                }
                _ => " ",
            };
            println!(
                " {mark} {} {} {}{}",
                i.protocol_binding,
                i.protocol_version,
                i.url,
                i.tenant
                    .as_deref()
                    .map(|t| format!(" tenant {t}"))
                    .unwrap_or_default()
            );
        }
        if let Some(Err(e)) = &chosen {
            println!("  (no usable interface: {e})");
        }
        let caps = &card.capabilities;
        println!(
            "capabilities: streaming={} pushNotifications={} extendedAgentCard={}",
            caps.streaming.unwrap_or(false),
            caps.push_notifications.unwrap_or(false),
            caps.extended_agent_card.unwrap_or(false)
        );
        if !card.skills.is_empty() {
            println!("skills:");
            for s in &card.skills {
                println!("  {}: {}", s.id, s.name);
            }
        }
        Ok(())
    }

    pub(crate) async fn events(&mut self, mut stream: EventStream) -> Result<()> {
        while let Some(ev) = stream.next().await {
            let ev = ev?;
            if self.json {
                self.json_line(&ev)?;
                continue;
            }
            match &ev {
                v1::StreamResponse::Task(t) => {
                    println!("[task] {} ({})", t.id, state_name(t.status.state));
                }
                v1::StreamResponse::Message(m) => println!("[message] {}", parts_text(&m.parts)),
                v1::StreamResponse::StatusUpdate(s) => println!(
                    "[status] {}{}",
                    state_name(s.status.state),
                    s.status
                        .message
                        .as_ref()
                        .map(|m| format!(": {}", parts_text(&m.parts)))
                        .unwrap_or_default()
                ),
                v1::StreamResponse::ArtifactUpdate(a) => println!(
                    "[artifact] {}{}: {}",
                    a.artifact
                        .name
                        .as_deref()
                        .unwrap_or(&a.artifact.artifact_id),
                    if a.is_append() { " (+)" } else { "" },
                    parts_text(&a.artifact.parts)
                ),
            }
            std::io::stdout().flush()?;
        }
        Ok(())
    }
}
