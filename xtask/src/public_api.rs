//! `cargo xtask public-api [--check]`: the public-API snapshot of each library crate, kept in
//! `docs/public-api/{package}.txt` so that a change to a crate's surface shows in review.
//!
//! rustdoc's JSON output (what `cargo public-api` reads) needs a nightly toolchain, so this is a
//! source listing instead: every `pub` item of every library source file (not `pub(crate)`, not
//! binaries, not `#[cfg(test)] mod tests`), by module, with the `#[doc(hidden)]` and
//! `#[cfg(feature = ..)]` attributes in front of it, and the `pub fn`s of `impl` blocks under
//! their `impl` line. Items a macro generates are not listed (the macro call is part of the
//! source, and of the diff). `--check` fails when a snapshot differs from the sources (run by
//! `cargo xtask test`); without it the snapshots are rewritten.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::root;

/// The library crates with a snapshot: (package, source folder).
const LIBRARIES: &[(&str, &str)] = &[
    ("a2ars-types", "a2a-types/src"),
    ("a2ars-translate", "a2a-translate/src"),
    ("a2ars-client", "a2a-client/src"),
    ("a2ars-agent", "a2a-agent/src"),
    ("a2ars-pg", "a2a-pg/src"),
];

/// Writes (or with `check`, compares) every snapshot.
pub fn public_api(check: bool) -> Result<()> {
    let dir = root().join("docs/public-api");
    let mut stale = Vec::new();
    for (package, src) in LIBRARIES {
        let listing = listing(&root().join(src))?;
        let file = dir.join(format!("{package}.txt"));
        if check {
            let old = std::fs::read_to_string(&file).unwrap_or_default();
            if old != listing {
                stale.push(package.to_string());
            }
        } else {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(&file, listing)
                .with_context(|| format!("writing {}", file.display()))?;
            eprintln!("xtask: wrote {}", file.display());
        }
    }
    if !stale.is_empty() {
        bail!(
            "the public API of {} changed: run `cargo xtask public-api` and commit \
             docs/public-api/ (the diff is the API change to review)",
            stale.join(", ")
        );
    }
    Ok(())
}

/// The snapshot of the crate whose sources are under `src`.
pub fn listing(src: &Path) -> Result<String> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    files.sort();
    let mut out = String::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f);
        let text = std::fs::read_to_string(&f)?;
        let items = items(&text);
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "# {}", module_path(rel));
        for i in items {
            let _ = writeln!(out, "{i}");
        }
        out.push('\n');
    }
    Ok(out)
}

/// Every `.rs` file under `dir`, without `bin/` and test-only files.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "bin" {
                collect(&p, out)?;
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(p);
        }
    }
    Ok(())
}

/// `a/b.rs` -> `crate::a::b`; `a/mod.rs` -> `crate::a`; `lib.rs` -> `crate`.
fn module_path(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    std::iter::once("crate".to_string())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("::")
}

/// The public items of one file, one line each.
pub fn items(text: &str) -> Vec<String> {
    const KINDS: &[&str] = &[
        "fn ",
        "async fn ",
        "unsafe fn ",
        "const fn ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "const ",
        "static ",
        "mod ",
        "use ",
        "macro ",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut attrs: Vec<String> = Vec::new();
    let mut current_impl: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        let indent = line.len() - line.trim_start().len();
        if t == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|n| n.trim() == "mod tests {") {
            break;
        }
        if t.starts_with("#[doc(hidden)]")
            || t.starts_with("#[cfg(")
            || t.starts_with("#[cfg_attr(feature")
        {
            attrs.push(t.to_string());
            i += 1;
            continue;
        }
        if indent == 0 && t.starts_with("impl") {
            current_impl = Some(t.trim_end_matches('{').trim().to_string());
        }
        if let Some(rest) = t.strip_prefix("pub ")
            && KINDS.iter().any(|k| rest.starts_with(k))
            && (indent == 0 || (indent == 4 && current_impl.is_some()))
        {
            // The declaration up to its body or end (several lines for `pub use a::{..};`).
            let mut decl = t.to_string();
            let mut j = i;
            while !decl.contains('{') && !decl.ends_with(';') && j + 1 < lines.len() {
                j += 1;
                decl.push(' ');
                decl.push_str(lines[j].trim());
            }
            if decl.starts_with("pub use") {
                while !decl.ends_with(';') && j + 1 < lines.len() {
                    j += 1;
                    decl.push(' ');
                    decl.push_str(lines[j].trim());
                }
                decl = decl
                    .replace("{ ", "{")
                    .replace(", }", "}")
                    .replace(",}", "}");
            } else if let Some(k) = decl.find('{') {
                decl.truncate(k);
            }
            let decl = decl.trim().trim_end_matches(';').trim().to_string();
            let prefix = if attrs.is_empty() {
                String::new()
            } else {
                format!("{} ", attrs.join(" "))
            };
            if indent == 4 {
                let imp = current_impl.as_deref().unwrap_or("impl");
                out.push(format!("  [{imp}] {prefix}{decl}"));
            } else {
                out.push(format!("{prefix}{decl}"));
            }
            attrs.clear();
            i = j + 1;
            continue;
        }
        if !t.starts_with("#[") && !t.starts_with("///") && !t.starts_with("//") && !t.is_empty() {
            attrs.clear();
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_public_items_with_their_gates_and_skips_private_ones() {
        let src = "\
//! docs
#[doc(hidden)]
pub mod internal;
pub(crate) fn hidden() {}
/// A thing.
#[cfg(feature = \"x\")]
pub struct Thing {
    pub field: u8,
}
impl Thing {
    /// New.
    pub fn new() -> Self {
        Thing { field: 0 }
    }
    fn private(&self) {}
}
pub use a::{
    B, C,
};
#[cfg(test)]
mod tests {
    pub fn not_listed() {}
}
";
        assert_eq!(
            items(src),
            [
                "#[doc(hidden)] pub mod internal",
                "#[cfg(feature = \"x\")] pub struct Thing",
                "  [impl Thing] pub fn new() -> Self",
                "pub use a::{B, C}",
            ]
        );
        assert_eq!(module_path(Path::new("a/mod.rs")), "crate::a");
        assert_eq!(module_path(Path::new("a/b.rs")), "crate::a::b");
        assert_eq!(module_path(Path::new("lib.rs")), "crate");
    }
}
