//! Which files of a crate a source file imports: `crate::`, `super::` and `self::` paths (in `use`
//! trees, grouped or not, and inline anywhere in code), resolved against the file's module path
//! (inline `mod name { ... }` blocks included) to the file of the longest existing module prefix.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use super::lex::{Tok, Token, tokenize};

/// A module path (`["edge", "grpc"]`; the crate root is empty).
pub type ModPath = Vec<String>;

/// The imports between the files of a crate (`files` relative to its source folder `dir`, shown
/// as `src`): (importing file, imported file) -> the line of the first such import. Roots import
/// nothing here; paths to the crate root or to the importing file itself are no edge.
pub fn file_imports(
    dir: &Path,
    src: &str,
    files: &[String],
) -> Result<BTreeMap<(usize, usize), usize>> {
    let lib_module = |f: &String| module_of(f).filter(|_| !super::parse::is_root(f));
    let modules: BTreeMap<ModPath, String> = files
        .iter()
        .filter_map(|f| Some((lib_module(f)?, f.clone())))
        .collect();
    let mut pairs = BTreeMap::new();
    for (from, f) in files.iter().enumerate() {
        let Some(here) = lib_module(f) else {
            continue;
        };
        let text =
            std::fs::read_to_string(dir.join(f)).with_context(|| format!("reading {src}/{f}"))?;
        for found in paths_in(&text, &here) {
            let Some(target) = resolve(&found.path, &modules) else {
                continue;
            };
            let to = files
                .iter()
                .position(|g| g == target)
                .expect("a listed file");
            if to != from {
                let line = pairs.entry((from, to)).or_insert(found.line);
                *line = (*line).min(found.line);
            }
        }
    }
    Ok(pairs)
}

/// The module path of a file relative to the source folder (`edge/grpc.rs`, `edge/mod.rs`,
/// `lib.rs`), or `None` for files outside the lib's module tree (`bin/...`).
pub fn module_of(rel: &str) -> Option<ModPath> {
    if rel.starts_with("bin/") {
        return None;
    }
    let stem = rel.strip_suffix(".rs")?;
    let mut parts: ModPath = stem.split('/').map(str::to_string).collect();
    let last = parts.last().map(String::as_str);
    if parts.len() == 1 && matches!(last, Some("lib" | "main")) {
        return Some(Vec::new());
    }
    if last == Some("mod") {
        parts.pop();
    }
    Some(parts)
}

/// A path found in a file: its segments resolved to an absolute module path, and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: ModPath,
    pub line: usize,
}

/// Every `crate::` / `super::` / `self::` path of `src`, made absolute. `file_mod` is the module
/// path of the file itself.
pub fn paths_in(src: &str, file_mod: &[String]) -> Vec<Found> {
    let toks = tokenize(src);
    let mut out = Vec::new();
    // Inline modules open at this point: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) =
                    (tok(&toks, i + 1), tok(&toks, i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                    i += 2;
                    continue;
                }
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(first) if is_path_start(&toks, i, first) => {
                let mut here: ModPath = file_mod.to_vec();
                here.extend(inline.iter().map(|(n, _)| n.clone()));
                let mut raw = Vec::new();
                i = use_tree(&toks, i, Vec::new(), &mut raw);
                for (segs, line) in raw {
                    if let Some(path) = absolute(&segs, &here) {
                        out.push(Found { path, line });
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn tok(toks: &[Token], i: usize) -> Option<&Tok> {
    toks.get(i).map(|t| &t.tok)
}

/// Whether `toks[i]` (the identifier `first`) starts a crate-relative path: `crate`, `super` or
/// `self` followed by `::`, not itself inside a longer path, not `$crate` (a macro's expansion
/// site decides what that imports) and not a visibility (`pub(in crate::a)`).
fn is_path_start(toks: &[Token], i: usize, first: &str) -> bool {
    if !matches!(first, "crate" | "super" | "self") || tok(toks, i + 1) != Some(&Tok::Path) {
        return false;
    }
    let prev = i.checked_sub(1).and_then(|p| tok(toks, p));
    let visibility = matches!(prev, Some(Tok::Ident(k)) if k == "in")
        && i.checked_sub(2).and_then(|p| tok(toks, p)) == Some(&Tok::Punct('('));
    !matches!(prev, Some(Tok::Path | Tok::Punct('$'))) && !visibility
}

/// Parses a path or use tree starting at `toks[i]` under `prefix`, pushing each leaf path (its raw
/// segments and the line of its last segment) into `out`; returns the index after it.
fn use_tree(
    toks: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, usize)>,
) -> usize {
    loop {
        let Some(t) = toks.get(i) else {
            return i;
        };
        match &t.tok {
            Tok::Ident(seg) => {
                prefix.push(seg.clone());
                i += 1;
                if tok(toks, i) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                out.push((prefix, t.line));
                return i;
            }
            Tok::Punct('{') => {
                i += 1;
                loop {
                    match tok(toks, i) {
                        None => return i,
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        Some(_) => {
                            i = use_tree(toks, i, prefix.clone(), out);
                            // `as name` and anything else up to the next member.
                            while !matches!(tok(toks, i), None | Some(Tok::Punct(',' | '}'))) {
                                i += 1;
                            }
                        }
                    }
                }
            }
            Tok::Punct('*') => {
                out.push((prefix, t.line));
                return i + 1;
            }
            // `crate::a::<T>` or a path cut short: what we have so far.
            _ => {
                if !prefix.is_empty() {
                    let line = toks[i - 1].line;
                    out.push((prefix, line));
                }
                return i;
            }
        }
    }
}

/// Raw segments (`super::super::a::self`) made absolute against the module `here`; `None` when
/// `super` climbs above the crate root.
fn absolute(segs: &[String], here: &[String]) -> Option<ModPath> {
    let (first, rest) = segs.split_first()?;
    let mut path: ModPath = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here.split_last()?.1.to_vec(),
        _ => return None,
    };
    for seg in rest {
        match seg.as_str() {
            "self" => {}
            "super" => {
                path.pop()?;
            }
            _ => path.push(seg.clone()),
        }
    }
    Some(path)
}

/// The file (relative to the source folder) of the longest prefix of `path` that is a module with
/// a file of its own; `None` when that is only the crate root.
pub fn resolve<'a>(path: &[String], modules: &'a BTreeMap<ModPath, String>) -> Option<&'a str> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]))
        .map(String::as_str)
}
