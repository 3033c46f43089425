//! The `layers` blocks of docs/architecture.md, and which entry of a block covers which file.

use std::path::Path;

use anyhow::{Context, Result};

/// One ```` ```layers <folder> ```` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The crate's source folder relative to the repo root, as written (no trailing `/`).
    pub src: String,
    /// The line of the opening fence in the document.
    pub line: usize,
    /// The layers, top first; each is its entries (file `app.rs` or folder `edge`).
    pub layers: Vec<Vec<String>>,
}

/// The `layers` blocks of `doc` (Markdown text); problems with the blocks themselves (a fence
/// without a folder, one left open, a folder named twice) go into `problems`.
pub fn blocks(doc: &str, doc_name: &str, problems: &mut Vec<String>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut lines = doc.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let words: Vec<&str> = info.split_whitespace().collect();
        // Any other fenced block: skip to its end so its text is not read as a fence.
        let is_layers = words.first() == Some(&"layers");
        let mut layers = Vec::new();
        let mut closed = false;
        for (_, body) in lines.by_ref() {
            if body.trim() == "```" {
                closed = true;
                break;
            }
            let entries: Vec<String> = body.split_whitespace().map(normal).collect();
            if !entries.is_empty() {
                layers.push(entries);
            }
        }
        if !is_layers {
            continue;
        }
        let at = format!("{doc_name}:{}", n + 1);
        if !closed {
            problems.push(format!("{at}: the layers block is never closed with ```"));
        }
        let src = match words.as_slice() {
            [_, src] => normal(src),
            _ => {
                problems.push(format!(
                    "{at}: a layers block names exactly one source folder (```layers a2a-types/src), found `{info}`"
                ));
                continue;
            }
        };
        if let Some(dup) = out.iter().find(|b| b.src == src) {
            problems.push(format!(
                "{at}: {src} already has a layers block (line {})",
                dup.line
            ));
            continue;
        }
        out.push(Block {
            src,
            line: n + 1,
            layers,
        });
    }
    out
}

/// `./a/b/` -> `a/b`.
fn normal(s: &str) -> String {
    let s = s.strip_prefix("./").unwrap_or(s);
    s.trim_end_matches('/').to_string()
}

/// Whether a file (relative to the source folder) is a crate root: never listed, never checked.
pub fn is_root(rel: &str) -> bool {
    rel == "lib.rs" || rel == "main.rs" || rel.starts_with("bin/")
}

/// Whether `entry` covers `file`: a `.rs` entry itself; a folder entry `edge` every file under
/// `edge/` and `edge.rs` (the folder's own module file).
pub fn covers(entry: &str, file: &str) -> bool {
    if entry.ends_with(".rs") {
        return file == entry;
    }
    file.strip_prefix(entry)
        .is_some_and(|rest| rest == ".rs" || rest.starts_with('/'))
}

/// The entries of a block and which of them covers each file.
#[derive(Debug, Default)]
pub struct Coverage {
    /// (layer, name) of every entry, top layer first.
    pub entries: Vec<(usize, String)>,
    /// For each file (same order as the file list), the entry covering it; `None` for roots and
    /// uncovered files.
    pub entry_of: Vec<Option<usize>>,
}

/// Rule 1: matches `files` (relative to the block's folder) with the block's entries, reporting
/// entries that are roots, repeated or cover nothing, and files covered by no entry or by several.
/// A repeated entry counts once.
pub fn coverage(
    block: &Block,
    files: &[String],
    doc_name: &str,
    problems: &mut Vec<String>,
) -> Coverage {
    let src = &block.src;
    let mut cover = Coverage::default();
    let mut usable = Vec::new();
    for (layer, names) in block.layers.iter().enumerate() {
        for name in names {
            let ok = if is_root(name) || name == "bin" {
                problems.push(format!(
                    "{src}: `{name}` in the layer list: lib.rs, main.rs and bin/ are roots, never listed"
                ));
                false
            } else if cover.entries.iter().any(|(_, n)| n == name) {
                problems.push(format!("{src}: `{name}` is in the layer list twice"));
                false
            } else if !files.iter().any(|f| covers(name, f)) {
                problems.push(format!("{src}: layer entry `{name}` covers no .rs file"));
                true
            } else {
                true
            };
            usable.push(ok);
            cover.entries.push((layer, name.clone()));
        }
    }
    for f in files {
        let covering: Vec<usize> = (0..cover.entries.len())
            .filter(|&e| usable[e] && covers(&cover.entries[e].1, f))
            .collect();
        cover.entry_of.push(covering.first().copied());
        match covering.len() {
            _ if is_root(f) => {}
            0 => problems.push(format!("{src}/{f}: not in the layer list of {doc_name}")),
            1 => {}
            _ => {
                let names: Vec<&str> = covering
                    .iter()
                    .map(|&e| cover.entries[e].1.as_str())
                    .collect();
                problems.push(format!(
                    "{src}/{f}: covered by more than one entry ({})",
                    names.join(", ")
                ));
            }
        }
    }
    cover
}

/// Every `.rs` file under `dir`, relative to it with `/` separators, sorted.
pub fn rust_files(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let rd = std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))?;
        for ent in rd {
            let path = ent?.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    Ok(out)
}
