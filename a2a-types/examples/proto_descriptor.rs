//! Compiles `proto/a2a.proto` with `protox` (pure Rust, no `protoc`) into the descriptor set the
//! `grpc` feature embeds. Run through `cargo xtask proto [--check]`.
//!
//! `proto_descriptor write` writes `proto/a2a_v1.binpb`; `proto_descriptor check` fails when the
//! committed file differs from what would be written.

use prost::Message;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    let out = dir.join("a2a_v1.binpb");
    let mode = std::env::args().nth(1).unwrap_or_default();
    let fresh = match protox::Compiler::new([&dir]).and_then(|mut c| {
        c.include_imports(true).include_source_info(false);
        c.open_file("a2a.proto")?;
        Ok(c.file_descriptor_set())
    }) {
        Ok(set) => set.encode_to_vec(),
        Err(e) => {
            eprintln!("proto_descriptor: cannot compile {}: {e}", dir.display());
            std::process::exit(1);
        }
    };
    match mode.as_str() {
        "write" => {
            if let Err(e) = std::fs::write(&out, &fresh) {
                eprintln!("proto_descriptor: cannot write {}: {e}", out.display());
                std::process::exit(1);
            }
            println!("wrote {} ({} bytes)", out.display(), fresh.len());
        }
        "check" => {
            let committed = std::fs::read(&out).unwrap_or_default();
            if committed != fresh {
                eprintln!(
                    "proto_descriptor: {} is stale: run `cargo xtask proto` and commit it",
                    out.display()
                );
                std::process::exit(1);
            }
            println!("{} is current", out.display());
        }
        _ => {
            eprintln!("usage: proto_descriptor write|check");
            std::process::exit(2);
        }
    }
}
