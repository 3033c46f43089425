//! `cargo xtask layers`: holds each crate's internal imports against the layer list written for it
//! in docs/architecture.md, from the source text alone (no compiler, no extra dependency).
//!
//! A crate is checked when the document has a fenced block whose info string is `layers` and the
//! crate's source folder relative to the repo root; one line per layer, the top layer first; each
//! entry a file (`app.rs`) or a folder (`edge`) relative to that folder; entries on one line are
//! siblings:
//!
//! ````text
//! ```layers a2a-gateway/src
//! cli
//! app.rs
//! console admin edge
//! protocol store
//! pii ids.rs keys.rs config.rs metrics.rs
//! ```
//! ````
//!
//! A folder entry `edge` covers every file under `edge/` and also `edge.rs`, the folder's module
//! file when the crate does not use `edge/mod.rs`. `lib.rs`, `main.rs` and `bin/**` are roots:
//! never listed, their imports not checked, and a path that resolves to the crate root is no edge.
//!
//! The rules (every problem is printed, then the command fails):
//! 1. every other `.rs` file is covered by exactly one entry; every entry covers a file;
//! 2. no upward import: a file may import files of its own layer and of the layers below it;
//! 3. no import loop, neither among files (an edge per importing pair of different files) nor among
//!    entries (A -> B when a file of A imports a file of B): any strongly connected component of
//!    more than one member is printed with a cycle through it, each step with its import line.
//!
//! An import of file F by file G is a `crate::`, `super::` or `self::` path in G, in a `use` tree
//! (grouped, `pub use`, over several lines) or inline anywhere in code, outside comments and string
//! literals, resolved against G's module path (inside inline `mod name { ... }` blocks too) to the
//! file of its longest module prefix that has one (`crate::a::b::C`: `a/b.rs` or `a/b/mod.rs`, else
//! `a.rs` or `a/mod.rs`). Not imports: `$crate::` paths in macros (the expansion site's business),
//! `pub(in crate::a)` visibilities, bare paths through a child module (`mod x; use x::Y;`) and
//! `#[path]` attributes. Test code is not exempt: imports in `#[cfg(test)] mod tests { ... }`
//! blocks and in `tests.rs` files count like any other.
//!
//! Without any `layers` block the command says that nothing is checked and passes. The summary
//! line of a crate counts its imports as distinct (importing file, imported file) pairs.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

mod graph;
mod imports;
mod lex;
mod parse;
#[cfg(test)]
mod tests;

use parse::Block;

/// What a check found: one summary line per checked crate, and every problem.
#[derive(Debug, Default)]
pub struct Report {
    /// `layers a2a-types/src: 12 entries, 7 layers, 51 imports, 0 upward, no loop`, or that nothing
    /// was checked.
    pub summaries: Vec<String>,
    /// Every problem, one line each, file paths relative to the repo root.
    pub problems: Vec<String>,
}

/// `cargo xtask layers`: checks the crates of `doc` (default `docs/architecture.md`) under `root`,
/// prints what it found and fails when there is any problem.
pub fn run(root: &Path, doc: Option<&Path>) -> Result<()> {
    let report = check(root, doc)?;
    for line in report.problems.iter().chain(&report.summaries) {
        println!("{line}");
    }
    if !report.problems.is_empty() {
        bail!(
            "layers: {} problem(s) against the layer lists",
            report.problems.len()
        );
    }
    Ok(())
}

/// Checks every crate that has a `layers` block in `doc` (default `root/docs/architecture.md`);
/// source folders are relative to `root`. Fails only when the document cannot be read.
pub fn check(root: &Path, doc: Option<&Path>) -> Result<Report> {
    let doc_path = doc.map_or_else(|| root.join("docs/architecture.md"), Path::to_path_buf);
    let text = std::fs::read_to_string(&doc_path)
        .with_context(|| format!("reading {}", doc_path.display()))?;
    let doc_name = doc_path
        .strip_prefix(root)
        .unwrap_or(&doc_path)
        .display()
        .to_string();
    let mut report = Report::default();
    let blocks = parse::blocks(&text, &doc_name, &mut report.problems);
    if blocks.is_empty() && report.problems.is_empty() {
        report.summaries.push(format!(
            "layers: {doc_name} has no layers block; nothing checked"
        ));
    }
    for block in &blocks {
        check_block(root, block, &doc_name, &mut report)?;
    }
    Ok(report)
}

fn check_block(root: &Path, block: &Block, doc_name: &str, report: &mut Report) -> Result<()> {
    let src = &block.src;
    let dir = root.join(src);
    if !dir.is_dir() {
        report.problems.push(format!(
            "{doc_name}:{}: layers block for {src}, which is not a folder",
            block.line
        ));
        return Ok(());
    }
    let files = parse::rust_files(&dir)?;
    let cover = parse::coverage(block, &files, doc_name, &mut report.problems);
    let pairs = imports::file_imports(&dir, src, &files)?;
    let krate = Crate {
        src,
        files: &files,
        cover: &cover,
        pairs: &pairs,
    };
    let upward = krate.upward(&mut report.problems);
    let loops = krate.loops(&mut report.problems);
    report.summaries.push(format!(
        "layers {src}: {} entries, {} layers, {} imports, {upward} upward, {}",
        cover.entries.len(),
        block.layers.len(),
        pairs.len(),
        match loops {
            0 => "no loop".to_string(),
            1 => "1 loop".to_string(),
            n => format!("{n} loops"),
        }
    ));
    Ok(())
}

/// One crate's files, entries and imports.
struct Crate<'a> {
    src: &'a str,
    files: &'a [String],
    cover: &'a parse::Coverage,
    /// (importing file, imported file) -> line of the first such import.
    pairs: &'a BTreeMap<(usize, usize), usize>,
}

impl Crate<'_> {
    /// A file's path relative to the repo root.
    fn path(&self, file: usize) -> String {
        format!("{}/{}", self.src, self.files[file])
    }

    /// The entry's layer and name.
    fn entry(&self, e: usize) -> (usize, &str) {
        let (layer, name) = &self.cover.entries[e];
        (*layer, name)
    }

    /// `path:line -> path` for an import pair.
    fn step(&self, from: usize, to: usize) -> String {
        let line = self.pairs[&(from, to)];
        format!("{}:{line} -> {}", self.path(from), self.path(to))
    }

    /// Rule 2: reports every import of a file by a file of a lower layer; returns their number.
    fn upward(&self, problems: &mut Vec<String>) -> usize {
        let mut n = 0;
        for &(from, to) in self.pairs.keys() {
            let (Some(ef), Some(et)) = (self.cover.entry_of[from], self.cover.entry_of[to]) else {
                continue;
            };
            let ((lf, nf), (lt, nt)) = (self.entry(ef), self.entry(et));
            if lf > lt {
                n += 1;
                problems.push(format!(
                    "upward import: {} ({nf} is below {nt})",
                    self.step(from, to)
                ));
            }
        }
        n
    }

    /// Rule 3: reports every loop among files and among entries; returns their number.
    fn loops(&self, problems: &mut Vec<String>) -> usize {
        let mut file_adj = vec![Vec::new(); self.files.len()];
        let mut entry_adj = vec![Vec::new(); self.cover.entries.len()];
        // (entry, entry) -> the first file pair behind that edge.
        let mut witness: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
        for &(from, to) in self.pairs.keys() {
            file_adj[from].push(to);
            if let (Some(ef), Some(et)) = (self.cover.entry_of[from], self.cover.entry_of[to])
                && ef != et
                && !witness.contains_key(&(ef, et))
            {
                witness.insert((ef, et), (from, to));
                entry_adj[ef].push(et);
            }
        }
        let file_loops = graph::loops(&file_adj);
        for comp in &file_loops {
            let members: Vec<String> = comp.iter().map(|&i| self.path(i)).collect();
            let steps: Vec<String> = around(&graph::cycle(&file_adj, comp))
                .map(|(a, b)| self.step(a, b))
                .collect();
            problems.push(format!(
                "import loop among files {}: {}",
                members.join(", "),
                steps.join("; ")
            ));
        }
        let entry_loops = graph::loops(&entry_adj);
        for comp in &entry_loops {
            let members: Vec<&str> = comp.iter().map(|&e| self.entry(e).1).collect();
            let steps: Vec<String> = around(&graph::cycle(&entry_adj, comp))
                .map(|(a, b)| {
                    let (from, to) = witness[&(a, b)];
                    let (na, nb) = (self.entry(a).1, self.entry(b).1);
                    format!("{na} -> {nb} ({})", self.step(from, to))
                })
                .collect();
            problems.push(format!(
                "import loop among entries {}: {}",
                members.join(", "),
                steps.join("; ")
            ));
        }
        file_loops.len() + entry_loops.len()
    }
}

/// The steps of a cycle given as its nodes: (n0, n1), (n1, n2), ..., (nk, n0).
fn around(cycle: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    (0..cycle.len()).map(|k| (cycle[k], cycle[(k + 1) % cycle.len()]))
}
