//! The agents' own memories, read and never written: what every agent's reader shares (a
//! folder of Markdown memories with front-matter and a `MEMORY.md` index, the bullet lines of
//! a file, the sections of a file). Each agent's file says where its memories are and which of
//! these shapes they take ([`MemorySpec`]); the engine joins them as read-only layers.
//!
//! A model wrote these files: every read is bounded ([`MAX_FILE_BYTES`], [`MAX_FILES`]), no
//! symbolic link is followed out of the folder, a file that is not UTF-8, whose front-matter
//! is not valid, or that takes a name another file took, is a warning naming it, and the rest
//! is read on.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use jiff::Timestamp;
use serde_norway::Value;

use crate::untrusted::{self, Links};

/// The largest memory file read (a larger one is a warning, and skipped).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most files of a memory folder read (the others are named in one warning).
pub const MAX_FILES: usize = 2000;
/// The longest slug of a file or heading kept in an id.
const MAX_SLUG: usize = 80;

/// How mem reads one agent's own memories (its [`super::Spec::memory`]).
#[derive(Clone, Copy, Debug)]
pub struct MemorySpec {
    /// The layer's name (`--layer`, `layer` in JSON) and the prefix of its ids.
    pub layer: &'static str,
    /// Where the memories live, for people (`claude auto memory`).
    pub label: &'static str,
    /// The agent's kinds of memory that are the user's own (adopted into the user layer).
    pub personal: &'static [&'static str],
    /// Reads the memories (see [`Sources`]).
    pub read: fn(&Sources) -> NativeRead,
}

/// Where an agent's reader looks.
#[derive(Clone, Copy, Debug)]
pub struct Sources<'a> {
    /// The agent's home folder.
    pub home: &'a Path,
    /// The user's home folder (for a setting that starts with `~/`).
    pub user: Option<&'a Path>,
    /// The project's folder (the work tree the memory root belongs to), if any.
    pub project: Option<&'a Path>,
}

/// One memory an agent keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct NativeMemory {
    /// Its stable id in mem: the layer, a dot, then its name (`claude.deploy-window`) or a
    /// short hash of its text (a line of a file).
    pub id: String,
    /// Its one-line title, if it has one.
    pub title: Option<String>,
    /// Its text.
    pub text: String,
    /// The agent's kind of memory (`user`, `feedback`, `project`, `reference`), if it says.
    pub kind: Option<String>,
    /// The file it is in.
    pub file: PathBuf,
    /// When its file was last modified.
    pub modified: Option<Timestamp>,
}

/// What a reader found: the memories, and one warning per file it could not read.
#[derive(Clone, Debug, Default)]
pub struct NativeRead {
    /// The memories, in a stable order.
    pub memories: Vec<NativeMemory>,
    /// `path: reason` for each file or line not read.
    pub warnings: Vec<String>,
}

impl NativeRead {
    /// Adds `memory` unless its id is taken (a warning naming its file then).
    pub fn push(&mut self, mut memory: NativeMemory) {
        memory.id.truncate(crate::format::MAX_ID_LEN);
        let trimmed = memory.id.trim_end_matches(['.', '-']).len();
        memory.id.truncate(trimmed);
        if let Some(first) = self.memories.iter().find(|m| m.id == memory.id) {
            self.warnings.push(format!(
                "{}: a second memory named {} (the first is in {}); not read",
                memory.file.display(),
                memory.id,
                first.file.display()
            ));
            return;
        }
        self.memories.push(memory);
    }
}

/// `text` as a piece of an id: lower case letters, digits, `_` and `-` (any other run of
/// characters one `-`), at most 80 characters.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= MAX_SLUG {
            break;
        }
    }
    out.trim_matches('-').to_string()
}

/// The short hash that names a line of text: 10 hexadecimal digits of its BLAKE3 hash (of the
/// words, so that spacing does not change it).
pub fn short_hash(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    blake3::hash(words.join(" ").as_bytes()).to_hex()[..10].to_string()
}

/// When `path` was last modified, if the file system says.
fn modified(path: &Path) -> Option<Timestamp> {
    let meta = std::fs::metadata(path).ok()?;
    Timestamp::try_from(meta.modified().ok()?).ok()
}

/// The text of the file at `path` (regular, at most [`MAX_FILE_BYTES`], UTF-8, not through a
/// link out of its folder); `None` with a warning when it cannot be read, `None` alone when
/// nothing is there.
pub fn read_file(path: &Path, warnings: &mut Vec<String>) -> Option<String> {
    match untrusted::read(path, MAX_FILE_BYTES, Links::InFolder) {
        Ok(Some(bytes)) => match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(_) => {
                warnings.push(format!("{}: not UTF-8 text; not read", path.display()));
                None
            }
        },
        Ok(None) => None,
        Err(e) => {
            warnings.push(format!("{}: {e}; not read", path.display()));
            None
        }
    }
}

/// The front-matter mapping and the body of a Markdown text (`None` for no front-matter).
fn split_front(text: &str) -> Result<(Option<Value>, &str), String> {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return Ok((None, text));
    };
    let end = rest
        .match_indices("\n---")
        .map(|(i, _)| i)
        .find(|&i| matches!(rest[i + 4..].chars().next(), None | Some('\n' | '\r')))
        .ok_or("the front-matter has no closing `---`")?;
    let yaml = &rest[..end];
    let body = rest[end + 4..].trim_start_matches(['\r', '\n']);
    let value: Value =
        serde_norway::from_str(yaml).map_err(|e| format!("the front-matter is not valid: {e}"))?;
    if !matches!(value, Value::Mapping(_) | Value::Null) {
        return Err("the front-matter is not a mapping".into());
    }
    Ok((Some(value), body))
}

/// A string field of a front-matter mapping.
fn field<'a>(front: &'a Value, key: &str) -> Option<&'a str> {
    front.get(key)?.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// The Markdown memory files of `dir` (each `*.md` but `MEMORY.md`, one fact with front-matter
/// `name`, `description` and `type`, at the top or under `metadata`), and the lines of its
/// `MEMORY.md` index that are facts themselves rather than pointers to a file; ids are
/// `<layer>.<name>`. Pointers to a missing file or out of the folder are warnings.
pub fn read_folder(dir: &Path, layer: &str, out: &mut NativeRead) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") && n != INDEX && !n.starts_with('.'))
        .collect();
    names.sort();
    if names.len() > MAX_FILES {
        out.warnings.push(format!(
            "{}: {} memory files, only the first {MAX_FILES} read",
            dir.display(),
            names.len()
        ));
        names.truncate(MAX_FILES);
    }
    for name in &names {
        let path = dir.join(name);
        let Some(text) = read_file(&path, &mut out.warnings) else { continue };
        match split_front(&text) {
            Err(reason) => out.warnings.push(format!("{}: {reason}; not read", path.display())),
            Ok((front, body)) => {
                let front = front.unwrap_or(Value::Null);
                let stem = name.trim_end_matches(".md");
                let id = slug(field(&front, "name").unwrap_or(stem));
                let id = if id.is_empty() { slug(stem) } else { id };
                let kind = field(&front, "type")
                    .or_else(|| front.get("metadata").and_then(|m| field(m, "type")))
                    .map(str::to_string);
                let title = field(&front, "description").map(str::to_string);
                if body.trim().is_empty() && title.is_none() {
                    continue;
                }
                out.push(NativeMemory {
                    id: format!("{layer}.{}", if id.is_empty() { "memory" } else { &id }),
                    title,
                    text: body.trim().to_string(),
                    kind,
                    modified: modified(&path),
                    file: path,
                });
            }
        }
    }
    read_index(dir, layer, &names, out);
}

/// The index file of a memory folder.
pub const INDEX: &str = "MEMORY.md";

/// The lines of `dir/MEMORY.md`: a pointer (`[Title](file.md)`) is checked (a file of the
/// folder that exists), any other list item is a memory of its own.
fn read_index(dir: &Path, layer: &str, files: &[String], out: &mut NativeRead) {
    let path = dir.join(INDEX);
    let Some(text) = read_file(&path, &mut out.warnings) else { return };
    let files: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let when = modified(&path);
    for (n, line) in text.lines().enumerate() {
        let Some(item) = list_item(line) else { continue };
        if let Some(target) = link_target(item) {
            if target.contains("://") {
                continue;
            }
            let inside = Path::new(target).components().all(|c| matches!(c, Component::Normal(_)));
            if !inside || target.contains('/') {
                out.warnings.push(format!(
                    "{}:{}: points out of the folder ({target}); not read",
                    path.display(),
                    n + 1
                ));
            } else if !files.contains(target) {
                out.warnings.push(format!(
                    "{}:{}: points at a missing file ({target})",
                    path.display(),
                    n + 1
                ));
            }
            continue;
        }
        out.push(NativeMemory {
            id: format!("{layer}.{}", short_hash(item)),
            title: None,
            text: item.to_string(),
            kind: None,
            file: path.clone(),
            modified: when,
        });
    }
}

/// The text of a Markdown list item (`- `, `* `, `+ `), trimmed; `None` for any other line.
pub fn list_item(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let item = line.strip_prefix("- ").or(line.strip_prefix("* ")).or(line.strip_prefix("+ "))?;
    let item = item.trim();
    (!item.is_empty()).then_some(item)
}

/// The target of the first Markdown link of `text` (`[title](target)`), if any.
fn link_target(text: &str) -> Option<&str> {
    let start = text.find("](")? + 2;
    let len = text[start..].find(')')?;
    Some(text[start..start + len].trim())
}

/// The list items of the file at `path` as memories (`<layer>.<short hash>`); with `section`,
/// only those under that heading (until the next heading of its level or above) when the
/// file has it.
pub fn read_lines(path: &Path, layer: &str, section: Option<&str>, out: &mut NativeRead) {
    let Some(text) = read_file(path, &mut out.warnings) else { return };
    let has_section = section.is_some_and(|s| text.lines().any(|l| l.trim() == s));
    let when = modified(path);
    let mut inside = !has_section;
    for line in text.lines() {
        if has_section && line.starts_with('#') {
            inside = Some(line.trim()) == section;
            continue;
        }
        let Some(item) = list_item(line).filter(|_| inside) else { continue };
        out.push(NativeMemory {
            id: format!("{layer}.{}", short_hash(item)),
            title: None,
            text: item.to_string(),
            kind: None,
            file: path.to_path_buf(),
            modified: when,
        });
    }
}

/// The sections (`#` or `##` headings) of the file at `path` as memories, each named
/// `<layer>.<file stem>.<heading>`; a file without such headings is one memory.
pub fn read_sections(path: &Path, layer: &str, out: &mut NativeRead) {
    let Some(text) = read_file(path, &mut out.warnings) else { return };
    let stem = slug(path.file_stem().and_then(|s| s.to_str()).unwrap_or_default());
    let stem = if stem.is_empty() { "memory".to_string() } else { stem };
    let when = modified(path);
    let mut sections: Vec<(Option<String>, String)> = vec![(None, String::new())];
    for line in text.lines() {
        let heading = line.strip_prefix("## ").or(line.strip_prefix("# "));
        match heading {
            Some(h) => sections.push((Some(h.trim().to_string()), String::new())),
            None => {
                let last = sections.last_mut().expect("never empty");
                last.1.push_str(line);
                last.1.push('\n');
            }
        }
    }
    for (heading, body) in sections {
        if body.trim().is_empty() {
            continue;
        }
        let name = heading.as_deref().map(slug).filter(|s| !s.is_empty());
        let id = match &name {
            Some(name) => format!("{layer}.{stem}.{name}"),
            None => format!("{layer}.{stem}"),
        };
        out.push(NativeMemory {
            id,
            title: heading,
            text: body.trim().to_string(),
            kind: None,
            file: path.to_path_buf(),
            modified: when,
        });
    }
}
