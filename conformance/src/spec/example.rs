//! Extraction of the JSON examples (```` ```json ```` blocks, SSE events, ```` ```http ```` bodies) of the specification markdown.

/// One JSON example of a specification text.
#[derive(Debug, Clone)]
pub struct Example {
    /// `1.0` or `0.3`: which specification it comes from.
    pub spec: &'static str,
    /// 1-based index of the json block in its file.
    pub block: usize,
    /// 1-based event number for SSE blocks, `None` otherwise.
    pub event: Option<usize>,
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The closest heading above the block.
    pub heading: String,
    /// The JSON text.
    pub text: String,
    /// For the body of an ```` ```http ```` block: its first line (`POST /message:send HTTP/1.1`
    /// or `HTTP/1.1 200 OK`).
    pub http: Option<String>,
}

impl Example {
    /// Stable id, e.g. `v1.0#13` or `v0.3#8.2`.
    pub fn id(&self) -> String {
        let kind = if self.http.is_some() { "http" } else { "" };
        match self.event {
            Some(e) => format!("v{}#{kind}{}.{e}", self.spec, self.block),
            None => format!("v{}#{kind}{}", self.spec, self.block),
        }
    }

    /// Where it is, for messages: `v1.0#13 (line 2299, #### 9.4.1. SendMessage)`.
    pub fn location(&self) -> String {
        format!("{} (line {}, {})", self.id(), self.line, self.heading)
    }
}

/// The two specification texts, embedded.
pub fn spec_texts() -> [(&'static str, &'static str); 2] {
    [
        ("1.0", include_str!("../../spec/v1.0-specification.md")),
        ("0.3", include_str!("../../spec/v0.3-specification.md")),
    ]
}

/// Every json example of both specification texts, in order.
pub fn all_examples() -> Vec<Example> {
    spec_texts()
        .into_iter()
        .flat_map(|(v, t)| extract(v, t))
        .collect()
}

/// Extracts every ```` ```json ```` block of `markdown` (indented fences included; the fence's indent is removed).
pub fn extract(spec: &'static str, markdown: &str) -> Vec<Example> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut block = 0;
    let mut http_block = 0;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with('#') {
            heading = l.trim().to_string();
        }
        let trimmed = l.trim_start();
        if trimmed.trim_end() == "```http" {
            http_block += 1;
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim() != "```" {
                j += 1;
            }
            let blk = &lines[i + 1..j.min(lines.len())];
            let first = blk
                .first()
                .map(|f| f.trim().to_string())
                .unwrap_or_default();
            // The body follows the first blank line (after the headers).
            if let Some(blank) = blk.iter().position(|b| b.trim().is_empty()) {
                let body = blk[blank + 1..].join("\n").trim().to_string();
                if !body.is_empty() {
                    let events = if body.starts_with("data:") {
                        split_sse(&body).into_iter().map(Some).collect()
                    } else {
                        vec![None]
                    };
                    let sse = events.len() > 1 || events.first().is_some_and(Option::is_some);
                    for (k, ev) in events.into_iter().enumerate() {
                        out.push(Example {
                            spec,
                            block: http_block,
                            event: sse.then_some(k + 1),
                            line: i + 1,
                            heading: heading.clone(),
                            text: ev.unwrap_or_else(|| body.clone()),
                            http: Some(first.clone()),
                        });
                    }
                }
            }
            i = j + 1;
            continue;
        }
        if trimmed.trim_end() == "```json" {
            let indent = l.len() - trimmed.len();
            block += 1;
            let start = i + 1;
            let mut j = start;
            while j < lines.len() && lines[j].trim() != "```" {
                j += 1;
            }
            let body: Vec<&str> = lines[start..j.min(lines.len())]
                .iter()
                .map(|s| {
                    if s.len() >= indent && s[..indent].trim().is_empty() {
                        &s[indent..]
                    } else {
                        s.trim_start()
                    }
                })
                .collect();
            let text = body.join("\n");
            if text.trim_start().starts_with("data:") {
                for (k, ev) in split_sse(&text).into_iter().enumerate() {
                    out.push(Example {
                        spec,
                        block,
                        event: Some(k + 1),
                        line: i + 1,
                        heading: heading.clone(),
                        text: ev,
                        http: None,
                    });
                }
            } else {
                out.push(Example {
                    spec,
                    block,
                    event: None,
                    line: i + 1,
                    heading: heading.clone(),
                    text,
                    http: None,
                });
            }
            i = j;
        }
        i += 1;
    }
    out
}

/// Splits an SSE transcript into the data of each event.
fn split_sse(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("data:") {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            cur = Some(rest.trim_start().to_string());
        } else if let Some(c) = cur.as_mut() {
            c.push('\n');
            c.push_str(line);
        }
    }
    out.extend(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
