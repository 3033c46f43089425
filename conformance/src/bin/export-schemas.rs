//! `export-schemas`: writes the JSON Schema of every registered a2a-types type to
//! `<out>/<dialect>/<Type>.json` (`schemas/v1`, `schemas/v03`, `schemas/v03-rest`), or with `--check`
//! fails when the files on disk differ from what would be written (run by `cargo xtask schema`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Parser;
use conformance::registry;

/// Command line.
#[derive(Parser)]
#[command(name = "export-schemas", about = "Export a2a-types JSON Schemas")]
struct Cli {
    /// Output directory (the repository's `schemas/`).
    #[arg(long)]
    out: PathBuf,
    /// Check instead of writing: fail if any file differs, is missing or is stale.
    #[arg(long)]
    check: bool,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let mut want: BTreeMap<PathBuf, String> = BTreeMap::new();
    for e in registry::entries() {
        let path = cli.out.join(e.dialect).join(format!("{}.json", e.name));
        let text = serde_json::to_string_pretty(&(e.schema)())? + "\n";
        want.insert(path, text);
    }
    let mut problems = Vec::new();
    for dialect in registry::DIALECTS {
        let dir = cli.out.join(dialect);
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).with_context(|| dir.display().to_string())? {
            let p = f?.path();
            if p.extension().is_some_and(|x| x == "json") && !want.contains_key(&p) {
                if cli.check {
                    problems.push(format!("{}: stale (no such type)", p.display()));
                } else {
                    std::fs::remove_file(&p).with_context(|| p.display().to_string())?;
                }
            }
        }
    }
    for (path, text) in &want {
        let current = std::fs::read_to_string(path).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if cli.check {
            problems.push(format!(
                "{}: {}",
                path.display(),
                if current.is_some() {
                    "differs"
                } else {
                    "missing"
                }
            ));
        } else {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, text).with_context(|| path.display().to_string())?;
        }
    }
    if cli.check {
        if !problems.is_empty() {
            for p in &problems {
                eprintln!("schema: {p}");
            }
            bail!(
                "{} schema file(s) out of date; run `cargo xtask schema` and commit schemas/",
                problems.len()
            );
        }
        println!("schemas: {} files current", want.len());
    } else {
        println!(
            "schemas: wrote {} files under {}",
            want.len(),
            cli.out.display()
        );
    }
    Ok(())
}
