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
    let (yaml, _) = split_front_matter(text)?;
    let crlf = text.starts_with("---\r\n");
    // The YAML starts right after the opening `---` line.
    let start = if crlf { 5 } else { 4 };
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = yaml.split_inclusive('\n').map(String::from).collect();
    if let Some(last) = lines.last_mut()
        && !last.ends_with('\n')
    {
        last.push_str(newline);
    }
    for (key, value) in edits {
        let found = lines.iter().position(|l| {
            [key.to_string(), format!("\"{key}\""), format!("'{key}'")].iter().any(|k| {
                l.strip_prefix(k.as_str())
                    .is_some_and(|rest| rest.trim_start_matches(' ').starts_with(':'))
            })
        });
        let replacement = value.as_ref().map(|v| format!("{key}: {v}{newline}"));
        match (found, replacement) {
            (Some(i), replacement) => {
                let mut end = i + 1;
                while end < lines.len() && is_continuation(&lines[end]) {
                    end += 1;
                }
                lines.splice(i..end, replacement);
            }
            (None, Some(line)) => lines.push(line),
            (None, None) => {}
        }
    }
    let edited = format!("{}{}{}", &text[..start], lines.concat(), &text[start + yaml.len()..]);
    Memory::parse(&edited)?;
    Ok(edited)
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
