//! Two versions of one memory file made one, without a conflict marker: what the git merge
//! driver (`mem merge-driver`, [`driver`]) and `mem resolve` do (docs/teams.md, "Conflicts").
//!
//! The later edit is the side with the later `updated` (a side without one is older; a tie
//! goes to ours). A field that only one side changed since the merge base keeps that change;
//! one that both changed takes the later edit's value; `tags` is the union of both sides' (ours'
//! order, then theirs' new ones), less the tags one side removed from the base. When both sides
//! changed the body differently, the later edit's body stays in the file, and the earlier one
//! becomes a memory of its own ([`Earlier`]), superseded by it as `mem supersede` writes it. The
//! merge writes no `updated` of its own: the merged file keeps the later edit's.

use std::path::Path;

use jiff::Timestamp;
use serde_norway::Value;

use crate::format::{self, MAX_ID_LEN, Memory, MemoryId, whole_second, yaml_text};
use crate::store::{self, Overwrite};
use crate::{Error, Result};

pub mod driver;

/// Two versions of a memory made one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// The merged file: the later edit's text, with the changes only the other side made and
    /// the merged tags.
    pub text: String,
    /// The earlier edit, kept as a memory of its own, when both sides changed the body.
    pub earlier: Option<Earlier>,
}

/// The earlier of two edits of a memory's body, as a memory of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Earlier {
    /// Its id: the merged memory's (cut to fit), `-`, then 8 hex digits of its body's BLAKE3.
    pub id: MemoryId,
    /// Its file's text: the earlier side's file with that id, `superseded_by` the merged
    /// memory and `invalid_at` (unless it had one) when the later edit was made.
    pub text: String,
}

/// Merges `ours` and `theirs`, two versions of one memory file, given the version they both
/// come from (`base`, when there is one that parses: none for a file both sides added).
/// `now` stands for a later edit that carries no `updated`. A side that is not a memory, or
/// two sides holding different memories, is an error ([`Error::Merge`]).
pub fn merge(base: Option<&str>, ours: &str, theirs: &str, now: Timestamp) -> Result<Merged> {
    let parse = |text: &str, side: &str| {
        Memory::parse(text).map_err(|e| {
            let line = e.line().map(|l| format!("line {l}: ")).unwrap_or_default();
            Error::Merge(format!("{side} is not a memory file ({line}{e})"))
        })
    };
    let a = parse(ours, "ours")?;
    let b = parse(theirs, "theirs")?;
    if a.id() != b.id() {
        return Err(Error::Merge(format!(
            "ours is the memory {:?} and theirs {:?}: two memories, not two versions of one",
            a.id().as_str(),
            b.id().as_str()
        )));
    }
    let base = base.and_then(|t| Memory::parse(t).ok()).filter(|o| o.id() == a.id());
    // `None` is older than any time: theirs is later only when strictly so.
    let theirs_later = b.updated() > a.updated();
    let (later, later_text, earlier, earlier_text) =
        if theirs_later { (&b, theirs, &a, ours) } else { (&a, ours, &b, theirs) };
    let mut text = later_text.to_string();
    let mut expected: Vec<(String, Option<Value>)> = Vec::new();
    for key in keys(later, earlier) {
        if ["id", "tags", "updated"].contains(&key.as_str()) {
            continue;
        }
        let (l, e) = (value(later, &key), value(earlier, &key));
        let only_earlier = l != e && base.as_ref().is_some_and(|o| value(o, &key) == l);
        if only_earlier {
            let lines = match e {
                Some(_) => Some(format::key_lines(earlier_text, &key).ok_or_else(|| unsure(&key))?),
                None => None,
            };
            text = format::replace_key_lines(&text, &key, lines.as_deref())
                .map_err(|_| unsure(&key))?;
        }
        expected.push((key, if only_earlier { e.cloned() } else { l.cloned() }));
    }
    let tags = merged_tags(base.as_ref().map(Memory::tags), a.tags(), b.tags());
    if tags != later.tags() {
        let lines: Option<String> = (!tags.is_empty()).then(|| {
            let items: String = tags.iter().map(|t| format!("- {}\n", yaml_text(t))).collect();
            format!("tags:\n{items}")
        });
        text = format::replace_key_lines(&text, "tags", lines.as_deref())
            .map_err(|_| unsure("tags"))?;
    }
    let mut kept = None;
    if later.body() != earlier.body() {
        match base.as_ref().map(Memory::body) {
            // Only the later side changed it: its body is in the file already.
            Some(o) if o == earlier.body() => {}
            Some(o) if o == later.body() => {
                text = format::with_body(&text, earlier.body()).map_err(|_| unsure("body"))?;
            }
            _ => kept = Some(earlier_memory(later, earlier, earlier_text, now)?),
        }
    }
    let merged = Memory::parse(&text).map_err(|e| Error::Merge(format!("the merge fails: {e}")))?;
    for (key, value_wanted) in &expected {
        if value(&merged, key) != value_wanted.as_ref() {
            return Err(unsure(key));
        }
    }
    if merged.tags() != tags {
        return Err(unsure("tags"));
    }
    Ok(Merged { text, earlier: kept })
}

/// The error for a field the merge could not write as it decided.
fn unsure(key: &str) -> Error {
    Error::Merge(format!(
        "the field `{key}` is written in a way mem does not edit (not a top-level `{key}:` line)"
    ))
}

/// The value of a top-level key; a null value counts as absent, as everywhere in mem.
fn value<'a>(memory: &'a Memory, key: &str) -> Option<&'a Value> {
    memory.front_matter().get(key).filter(|v| !v.is_null())
}

/// The keys of `first`'s front-matter, then those only `second` has (text keys only).
fn keys(first: &Memory, second: &Memory) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for key in first.front_matter().keys().chain(second.front_matter().keys()) {
        if let Value::String(key) = key
            && !keys.contains(key)
        {
            keys.push(key.clone());
        }
    }
    keys
}

/// Both sides' tags: ours in order, then theirs' new ones, less those of the base that one
/// side removed.
pub fn merged_tags(base: Option<&[String]>, ours: &[String], theirs: &[String]) -> Vec<String> {
    let removed = |t: &String| {
        base.is_some_and(|b| b.contains(t) && (!ours.contains(t) || !theirs.contains(t)))
    };
    let mut tags: Vec<String> = Vec::new();
    for tag in ours.iter().chain(theirs) {
        if !tags.contains(tag) && !removed(tag) {
            tags.push(tag.clone());
        }
    }
    tags
}

/// The earlier side's file as a memory of its own, superseded by the later one.
fn earlier_memory(
    later: &Memory,
    earlier: &Memory,
    earlier_text: &str,
    now: Timestamp,
) -> Result<Earlier> {
    let id = earlier_id(later.id(), earlier.body())?;
    let mut edits = vec![
        ("id", Some(yaml_text(id.as_str()))),
        ("superseded_by", Some(yaml_text(later.id().as_str()))),
    ];
    if earlier.invalid_at().is_none() {
        // It stopped being current when the later edit was made (never after now).
        let at = later.updated().filter(|t| *t <= now).unwrap_or(now);
        edits.push(("invalid_at", Some(whole_second(at).to_string())));
    }
    let text = format::edit_front_matter(earlier_text, &edits)
        .map_err(|e| Error::Merge(format!("the earlier edit cannot be kept: {e}")))?;
    Ok(Earlier { id, text })
}

/// The id of the earlier edit of the memory `id` whose body is `body`: the same on every
/// machine that makes the same merge.
fn earlier_id(id: &MemoryId, body: &str) -> Result<MemoryId> {
    let hash = blake3::hash(body.as_bytes()).to_hex();
    // Ids are ASCII: any byte is a character boundary.
    let stem = &id.as_str()[..id.as_str().len().min(MAX_ID_LEN - 9)];
    MemoryId::new(&format!("{stem}-{}", &hash[..8]))
}

/// Writes the earlier edit as `<id>.md` in the folder `dir` (relative to `top`, which it must
/// stay inside), creating the folder if needed; the path written, relative to `top`. A file of
/// that name with the same text is taken as written by the same merge before; another is
/// never replaced ([`Error::Exists`]).
pub fn write_earlier(top: &Path, dir: &str, earlier: &Earlier) -> Result<String> {
    let rel = match dir.trim_end_matches('/') {
        "" => format!("{}.md", earlier.id),
        dir => format!("{dir}/{}.md", earlier.id),
    };
    let path = store::inside_root(top, &rel)?;
    // Read bounded, as every file of a clone: one longer than the text cannot be it.
    let limit = earlier.text.len() as u64;
    let same = crate::untrusted::read(&path, limit, crate::untrusted::Links::InFolder);
    if same.is_ok_and(|old| old.as_deref() == Some(earlier.text.as_bytes())) {
        return Ok(rel);
    }
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
    }
    store::write_atomic(&path, earlier.text.as_bytes(), Overwrite::No)?;
    Ok(rel)
}

#[cfg(test)]
mod tests;
