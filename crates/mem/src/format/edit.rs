//! Edits of existing memory files: front-matter keys set or removed as text (every other byte
//! kept), a new body, and the YAML scalars and times mem writes.

use jiff::Timestamp;
use serde_norway::Value;

use super::{FormatError, Memory, MemoryId, split_front_matter};

/// Sets (`Some`) or removes (`None`) top-level keys of a memory file's front-matter by editing
/// its text: every other line, comment and byte of the body stays as it was. A key's old value
/// (including indented or `- ` continuation lines) is replaced in place; a new key goes last.
/// Values are YAML text (see [`yaml_text`]). The result must still parse.
pub fn edit_front_matter(
    text: &str,
    edits: &[(&str, Option<String>)],
) -> Result<String, FormatError> {
    let mut front = Lines::of(text)?;
    for (key, value) in edits {
        let replacement = value.as_ref().map(|v| vec![format!("{key}: {v}{}", front.newline)]);
        front.set(key, replacement);
    }
    front.finish()
}

/// The lines of the top-level `key` in the front-matter of `text` as written (its `key:` line
/// and those that continue its value), or `None` when the key is not there.
pub fn key_lines(text: &str, key: &str) -> Option<String> {
    let front = Lines::of(text).ok()?;
    let (start, end) = front.find(key)?;
    Some(front.lines[start..end].concat())
}

/// `text` with the lines of the top-level `key` replaced by `lines` (as [`key_lines`] gives
/// them from another version of the file, line breaks made the file's own), or removed
/// (`None`); a key not there yet goes last. The result must still parse.
pub fn replace_key_lines(
    text: &str,
    key: &str,
    lines: Option<&str>,
) -> Result<String, FormatError> {
    let mut front = Lines::of(text)?;
    let newline = front.newline;
    let replacement = lines.map(|l| {
        l.lines().map(|line| format!("{}{newline}", line.trim_end_matches('\r'))).collect()
    });
    front.set(key, replacement);
    front.finish()
}

/// A memory file's front-matter as lines, each with its line break, to edit key by key.
struct Lines<'a> {
    text: &'a str,
    /// Where the YAML starts (after the opening `---` line) and how long it is.
    start: usize,
    len: usize,
    newline: &'static str,
    lines: Vec<String>,
}

impl<'a> Lines<'a> {
    fn of(text: &'a str) -> Result<Lines<'a>, FormatError> {
        let (yaml, _) = split_front_matter(text)?;
        let crlf = text.starts_with("---\r\n");
        let newline = if crlf { "\r\n" } else { "\n" };
        let mut lines: Vec<String> = yaml.split_inclusive('\n').map(String::from).collect();
        if let Some(last) = lines.last_mut()
            && !last.ends_with('\n')
        {
            last.push_str(newline);
        }
        // The YAML starts right after the opening `---` line.
        let start = if crlf { 5 } else { 4 };
        Ok(Lines { text, start, len: yaml.len(), newline, lines })
    }

    /// The range of the lines of `key`: its line, then those that continue its value.
    fn find(&self, key: &str) -> Option<(usize, usize)> {
        let names = [key.to_string(), format!("\"{key}\""), format!("'{key}'")];
        let start = self.lines.iter().position(|l| {
            names.iter().any(|k| {
                l.strip_prefix(k.as_str())
                    .is_some_and(|rest| rest.trim_start_matches(' ').starts_with(':'))
            })
        })?;
        let mut end = start + 1;
        while end < self.lines.len() && is_continuation(&self.lines[end]) {
            end += 1;
        }
        Some((start, end))
    }

    /// Replaces the lines of `key` with `replacement` in place (a key not there goes last), or
    /// removes them (`None`).
    fn set(&mut self, key: &str, replacement: Option<Vec<String>>) {
        match (self.find(key), replacement) {
            (Some((start, end)), replacement) => {
                self.lines.splice(start..end, replacement.unwrap_or_default());
            }
            (None, Some(lines)) => self.lines.extend(lines),
            (None, None) => {}
        }
    }

    /// The edited file, once it parses.
    fn finish(self) -> Result<String, FormatError> {
        let (head, tail) = (&self.text[..self.start], &self.text[self.start + self.len..]);
        let edited = format!("{head}{}{tail}", self.lines.concat());
        Memory::parse(&edited)?;
        Ok(edited)
    }
}

/// The file `text` with its body replaced by `body`: the front-matter stays byte for byte.
pub fn with_body(text: &str, body: &str) -> Result<String, FormatError> {
    let (_, old_body) = split_front_matter(text)?;
    let head = &text[..text.len() - old_body.len()];
    let edited = format!("{head}{body}");
    Memory::parse(&edited)?;
    Ok(edited)
}

/// The key mem sets to "now" on every edit of a memory's body or fields it makes.
pub const UPDATED: &str = "updated";

/// The edit that records an edit made at `now`: `updated` set to it, to the second (add it to
/// the edits of every change of a memory's body or fields; not to machine bookkeeping).
pub fn updated_at(now: Timestamp) -> (&'static str, Option<String>) {
    (UPDATED, Some(whole_second(now).to_string()))
}

/// A list of ids as a one-line YAML flow sequence.
pub fn yaml_ids(ids: &[MemoryId]) -> String {
    let items: Vec<String> = ids.iter().map(|id| yaml_text(id.as_str())).collect();
    format!("[{}]", items.join(", "))
}

/// Whether a front-matter line continues the value of the key above it.
fn is_continuation(line: &str) -> bool {
    line.starts_with([' ', '\t']) || line.starts_with("- ") || line.trim_end() == "-"
}

/// A string as a one-line YAML scalar, quoted where YAML needs it; line breaks become spaces.
pub fn yaml_text(s: &str) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    serde_norway::to_string(&Value::String(flat.trim().to_string()))
        .expect("a string always serialises")
        .trim_end()
        .to_string()
}

/// `t` cut to the whole second (never rounded up: a time written now is never in the future),
/// as every time mem writes into a file.
pub fn whole_second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}
