//! The memory file: YAML front-matter between two `---` lines, then a Markdown body.
//!
//! [`Memory::parse`] validates the contract of `docs/format.md` and keeps the whole front-matter
//! mapping (unknown keys included, in their order) and the body byte for byte;
//! [`Memory::render`] writes it back. The typed fields are a validated view of that mapping.

pub use crate::error::FormatError;

use jiff::Timestamp;
use serde_norway::{Mapping, Value};

mod bounds;
mod conflict;
mod edit;
mod id;
mod parts;

pub use self::bounds::{MAX_FLOW_OPENERS, MAX_FRONT_MATTER_BYTES};
pub use self::conflict::{Sides, conflict_line, split_conflicts};
pub use self::edit::*;
pub use self::id::*;
use self::parts::Fields;

/// Version of the file contract described in `docs/format.md`.
pub const FORMAT_VERSION: u32 = 1;
/// Importance of a memory whose front-matter does not give one.
pub const DEFAULT_IMPORTANCE: u8 = 5;
/// Longest id accepted, in bytes.
pub const MAX_ID_LEN: usize = 128;

/// A parsed memory: the front-matter mapping as written, its validated fields, and the body.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    front: Mapping,
    id: MemoryId,
    kind: MemoryType,
    importance: u8,
    created: Timestamp,
    updated: Option<Timestamp>,
    tags: Vec<String>,
    source: Option<String>,
    access: Option<Access>,
    invalid_at: Option<Timestamp>,
    superseded_by: Option<MemoryId>,
    derived_from: Vec<MemoryId>,
    consolidated_into: Option<MemoryId>,
    body: String,
}

/// What a caller gives to create a new memory (see [`Memory::create`]).
#[derive(Clone, Debug)]
pub struct NewMemory {
    /// The memory's text (Markdown).
    pub text: String,
    /// Its type.
    pub kind: MemoryType,
    /// Importance 1..=10.
    pub importance: u8,
    /// Tags, in order; duplicates and blanks are dropped.
    pub tags: Vec<String>,
    /// Optional title, written as a first-level heading above the text.
    pub title: Option<String>,
    /// Optional origin (`session/abc123`, a URL, a person).
    pub source: Option<String>,
}

impl Memory {
    /// Parses a memory file's bytes.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Memory, FormatError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Memory::parse(text),
            Err(e) => {
                let offset = e.valid_up_to();
                let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
                Err(FormatError::NotUtf8 { line, offset })
            }
        }
    }

    /// Parses a memory file's text.
    pub fn parse(text: &str) -> Result<Memory, FormatError> {
        // Before anything else: markers in the front-matter would read as a YAML error, and in
        // the body as text, where they would reach the model with both sides.
        if let Some(line) = conflict_line(text) {
            return Err(FormatError::ConflictMarkers { line });
        }
        let (yaml, body) = split_front_matter(text)?;
        bounds::check(yaml)?;
        let value: Value = serde_norway::from_str(yaml).map_err(|e| FormatError::Yaml {
            // The YAML starts on line 2 of the file.
            line: e.location().map(|l| l.line() + 1),
            message: yaml_message(&e),
        })?;
        let front = match value {
            Value::Mapping(m) => m,
            _ => return Err(FormatError::NotMapping),
        };
        Memory::from_parts(front, body.to_string(), yaml)
    }

    fn from_parts(front: Mapping, body: String, yaml: &str) -> Result<Memory, FormatError> {
        let fields = Fields { front: &front, yaml };
        let id = fields.id()?;
        let kind = fields.kind()?;
        let importance = fields.importance()?;
        let created = fields.time("created")?.ok_or(FormatError::Missing("created"))?;
        let updated = fields.time(UPDATED)?;
        let tags = fields.tags()?;
        let source = fields.source()?;
        let access = fields.access()?;
        let invalid_at = fields.time("invalid_at")?;
        let superseded_by = fields.superseded_by()?;
        let derived_from = fields.derived_from()?;
        let consolidated_into = match fields.get("consolidated_into") {
            None => None,
            Some(v) => Some(fields.memory_id("consolidated_into", v)?),
        };
        Ok(Memory {
            front,
            id,
            kind,
            importance,
            created,
            updated,
            tags,
            source,
            access,
            invalid_at,
            superseded_by,
            derived_from,
            consolidated_into,
            body,
        })
    }

    /// Builds a new memory with a fresh ULID, created at `now`.
    pub fn create(new: NewMemory, now: Timestamp) -> crate::Result<Memory> {
        // Terminal escapes and NUL bytes are never part of a memory (they would be printed
        // back to a terminal by `list` and `recall`).
        let text = without_controls(&new.text);
        let text = text.trim();
        if text.is_empty() {
            return Err(crate::Error::InvalidMemory("a memory needs some text".into()));
        }
        if !(1..=10).contains(&new.importance) {
            return Err(crate::Error::InvalidMemory(format!(
                "importance must be 1..10, got {}",
                new.importance
            )));
        }
        let created = whole_second(now);
        let id = MemoryId::generate(created);
        let mut tags: Vec<String> = Vec::new();
        let clean_tags: Vec<String> = new.tags.iter().map(|t| without_controls(t)).collect();
        for tag in clean_tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            if !tags.iter().any(|t| t == tag) {
                tags.push(tag.to_string());
            }
        }
        let mut front = Mapping::new();
        front.insert("id".into(), id.as_str().into());
        front.insert("type".into(), new.kind.as_str().into());
        front.insert("importance".into(), u64::from(new.importance).into());
        front.insert("created".into(), created.to_string().into());
        if !tags.is_empty() {
            front.insert(
                "tags".into(),
                Value::Sequence(tags.iter().map(|t| t.as_str().into()).collect()),
            );
        }
        let source =
            new.source.map(|s| without_controls(&s).trim().to_string()).filter(|s| !s.is_empty());
        if let Some(source) = &source {
            front.insert("source".into(), source.as_str().into());
        }
        let title = new.title.as_deref().map(without_controls);
        let body = match title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            Some(title) => format!("# {title}\n\n{text}\n"),
            None => format!("{text}\n"),
        };
        Ok(Memory {
            front,
            id,
            kind: new.kind,
            importance: new.importance,
            created,
            updated: None,
            tags,
            source,
            access: None,
            invalid_at: None,
            superseded_by: None,
            derived_from: Vec::new(),
            consolidated_into: None,
            body,
        })
    }

    /// The file text: `---`, the front-matter as YAML, `---`, then the body unchanged.
    pub fn render(&self) -> String {
        let yaml = serde_norway::to_string(&self.front)
            .expect("a mapping of YAML values always serialises");
        let mut out = String::with_capacity(yaml.len() + self.body.len() + 8);
        out.push_str("---\n");
        out.push_str(&yaml);
        out.push_str("---\n");
        out.push_str(&self.body);
        out
    }

    /// The id.
    pub fn id(&self) -> &MemoryId {
        &self.id
    }

    /// The type.
    pub fn kind(&self) -> MemoryType {
        self.kind
    }

    /// Importance 1..=10 ([`DEFAULT_IMPORTANCE`] when the file gives none).
    pub fn importance(&self) -> u8 {
        self.importance
    }

    /// When the memory was created.
    pub fn created(&self) -> Timestamp {
        self.created
    }

    /// When mem last edited the memory's body or fields (`updated`), if it has.
    pub fn updated(&self) -> Option<Timestamp> {
        self.updated
    }

    /// Tags as written (trimmed, blanks dropped).
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// Where the memory came from, if recorded.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The usage summary, if the front-matter has one.
    pub fn access(&self) -> Option<Access> {
        self.access
    }

    /// When the fact stopped being true, if it has been invalidated.
    pub fn invalid_at(&self) -> Option<Timestamp> {
        self.invalid_at
    }

    /// The memory that replaces this one, if any.
    pub fn superseded_by(&self) -> Option<&MemoryId> {
        self.superseded_by.as_ref()
    }

    /// The memories this one was consolidated from (set by `mem reflect`).
    pub fn derived_from(&self) -> &[MemoryId] {
        &self.derived_from
    }

    /// The reflection this memory was consolidated into, if any.
    pub fn consolidated_into(&self) -> Option<&MemoryId> {
        self.consolidated_into.as_ref()
    }

    /// Whether the memory is invalid at `at` (invalidated at or before it).
    pub fn is_invalid_at(&self, at: Timestamp) -> bool {
        self.invalid_at.is_some_and(|t| t <= at)
    }

    /// When the memory was last reinforced: `access.last`, else `created`.
    pub fn last_access(&self) -> Timestamp {
        self.access.and_then(|a| a.last).unwrap_or(self.created)
    }

    /// The Markdown body, byte for byte as in the file.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The whole front-matter mapping, unknown keys included.
    pub fn front_matter(&self) -> &Mapping {
        &self.front
    }

    /// This memory without its front-matter mapping, for code that only reads it (every
    /// field stays readable; writing it back would lose the keys mem does not know).
    pub(crate) fn without_front_matter(mut self) -> Memory {
        self.front = Mapping::new();
        self
    }

    /// The title: the text of the first heading, else the first non-blank line, else the id.
    pub fn title(&self) -> String {
        use pulldown_cmark::{Event, Parser, Tag, TagEnd};
        let mut in_heading = false;
        let mut heading = String::new();
        for event in Parser::new(&self.body) {
            match event {
                Event::Start(Tag::Heading { .. }) => in_heading = true,
                Event::End(TagEnd::Heading(_)) => {
                    if !heading.trim().is_empty() {
                        return clip(heading.trim(), 120);
                    }
                    in_heading = false;
                }
                Event::Text(t) | Event::Code(t) if in_heading => heading.push_str(&t),
                _ => {}
            }
        }
        let first_text = self
            .body
            .lines()
            .map(|l| l.trim().trim_start_matches(['#', '>', '-', '*', ' ']).trim())
            .find(|l| !l.is_empty());
        match first_text {
            Some(line) => clip(line, 120),
            None => self.id.to_string(),
        }
    }
}

/// `s` without control characters (escape, NUL, ...) other than newline, carriage return and
/// tab: what a terminal would act on instead of showing.
pub fn without_controls(s: &str) -> String {
    s.chars().filter(|&c| !c.is_control() || matches!(c, '\n' | '\r' | '\t')).collect()
}

/// Cuts `s` to at most `max` characters, marking the cut with `…`: after the last whole word
/// that fits, unless that leaves less than half of `max` (one long word, a URL), which is cut
/// where `max` falls.
pub fn clip(s: &str, max: usize) -> String {
    let Some((i, next)) = s.char_indices().nth(max) else { return s.to_string() };
    let head = &s[..i];
    let at_word_end = next.is_whitespace() || head.ends_with(char::is_whitespace);
    let cut = match head.rfind(char::is_whitespace) {
        Some(space) if !at_word_end && head[..space].chars().count() >= max / 2 => &head[..space],
        _ => head,
    };
    format!("{}…", cut.trim_end())
}

/// Splits a file into its YAML front-matter and its body (everything after the closing line).
pub fn split_front_matter(text: &str) -> Result<(&str, &str), FormatError> {
    if text.starts_with('\u{feff}') {
        return Err(FormatError::ByteOrderMark);
    }
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(FormatError::NoFrontMatter)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(FormatError::Unterminated)
}

/// The file line (1-based) of a top-level `key:` in the front-matter.
fn key_line(yaml: &str, key: &str) -> Option<usize> {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(':'))
                || l.strip_prefix(&format!("\"{key}\""))
                    .is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map(|i| i + 2)
}

/// The YAML parser's message without its trailing location, which we report as a line.
fn yaml_message(e: &serde_norway::Error) -> String {
    let msg = e.to_string();
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

fn timestamp(v: &Value) -> Result<Timestamp, String> {
    let Value::String(s) = v else {
        return Err(format!(
            "expected an RFC 3339 time like 2026-11-29T23:46:04Z, found {}",
            describe(v)
        ));
    };
    parse_time(s).map_err(|e| format!("{s:?} is not a valid time ({e})"))
}

/// Parses an RFC 3339 time, or a plain date `YYYY-MM-DD` taken as midnight UTC.
pub fn parse_time(s: &str) -> Result<Timestamp, String> {
    const EXPECTED: &str =
        "expected e.g. 2026-11-29T23:46:04Z, 2026-11-29T23:46:04+01:00 or 2026-11-29";
    let s = s.trim();
    let bytes = s.as_bytes();
    if bytes.len() == 10 && bytes[4] == b'-' && bytes[7] == b'-' {
        let date: jiff::civil::Date = s.parse().map_err(|e| format!("{e}; {EXPECTED}"))?;
        return date
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp())
            .map_err(|e| e.to_string());
    }
    match s.parse::<Timestamp>() {
        Ok(t) => Ok(t),
        // A time of day without an offset names no single instant.
        Err(_) if s.parse::<jiff::civil::DateTime>().is_ok() => {
            Err(format!("a time of day needs an offset such as Z; {EXPECTED}"))
        }
        Err(_) => Err(EXPECTED.to_string()),
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

#[cfg(test)]
mod tests;
