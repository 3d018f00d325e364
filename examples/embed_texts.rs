//! Writes the texts `mem` embeds for the memories of a root, one JSON string per line, for
//! `scripts/embed_reference.py` (the ONNX Runtime reference of docs/benchmarks.md):
//! `cargo run --release --example embed_texts -- ROOT > texts.jsonl`
//! (every `*.md` file under ROOT outside dot-folders that parses as a memory, in path order;
//! the text is `mem::embed::memory_text` of its title, tags and body, as the index builds it).

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let hidden = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args().nth(1).ok_or("usage: embed_texts ROOT")?;
    let mut paths = Vec::new();
    walk(Path::new(&root), &mut paths)?;
    paths.sort();
    for path in paths {
        let Ok(memory) = mem::format::Memory::parse_bytes(&std::fs::read(&path)?) else {
            continue;
        };
        let text = mem::embed::memory_text(&memory.title(), memory.tags(), memory.body());
        println!("{}", serde_json::to_string(&text)?);
    }
    Ok(())
}
