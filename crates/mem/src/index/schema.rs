//! The tantivy schema of the memory index and the document built for each memory.

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{TantivyDocument, doc};

use crate::format::Memory;
use crate::tokenizer::{ANALYZER, TAG_ANALYZER};

/// Bumped whenever the schema, the analyzers or the manifest's format change; an index of another
/// version is rebuilt.
pub const SCHEMA_VERSION: u32 = 13;

/// Handles to every field of the schema.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    /// Path relative to the root (the document key).
    pub path: Field,
    /// Memory id.
    pub id: Field,
    /// Title, searchable.
    pub title: Field,
    /// Body, searchable and stored for snippets.
    pub body: Field,
    /// Tags, searchable with the text analyzer.
    pub tags: Field,
    /// Tags, exact and lower-cased, for filters; stored as written.
    pub tag: Field,
    /// `episodic` | `semantic` | `procedural`.
    pub kind: Field,
    /// Importance 1..=10.
    pub importance: Field,
    /// Creation time, seconds since the epoch.
    pub created: Field,
    /// The time ranking recency counts from (`created`: usage does not move it), in seconds.
    pub last_access: Field,
    /// A stable hash of the memory's content that breaks score and `created` ties the same
    /// way in every index build and in every root holding the same memories.
    pub tiebreak: Field,
    /// [`id_key`] of the id: hybrid search finds a candidate's vector by it.
    pub id_key: Field,
    /// What the memory is for ranking ([`crate::score::Role`]: a fact, a session digest, the
    /// digest of a session that only asked).
    pub role: Field,
    /// Optional origin.
    pub source: Field,
    /// When the memory became invalid, seconds since the epoch; `i64::MAX` when it is valid.
    pub invalid_at: Field,
    /// The id of the memory that replaces it, if any.
    pub superseded_by: Field,
    /// The file's size in bytes when it was indexed (recall checks its candidates by it).
    pub size: Field,
    /// The file's mtime when it was indexed, ns since the epoch.
    pub mtime: Field,
    /// 1 when the title or body carries a time expression ([`crate::dates`]).
    pub has_time: Field,
    /// Who it is by or about: its tags and the name of a `person/NAME` source, lower-cased.
    pub who: Field,
    /// [`id_key`] of the reflection it was consolidated into, 0 when none.
    pub into_key: Field,
    /// Its `access:` line's use count; [`NO_ACCESS`] when it has no `access:` line.
    pub access_uses: Field,
    /// Its `access:` line's retrieval count.
    pub access_retrieved: Field,
    /// Its `access:` line's last reinforcement, ns since the epoch; [`NO_TIME`] when none.
    pub access_last: Field,
    /// Its `access:` line's strength in days; [`NO_STRENGTH`] when it states none.
    pub access_strength: Field,
    /// [`crate::prune::text_key`] of its body: memories with the same text share it.
    pub text_key: Field,
}

/// What `access_uses` holds for a memory without an `access:` line.
pub const NO_ACCESS: u64 = u64::MAX;
/// What `access_last` holds when the `access:` line has no last reinforcement.
pub const NO_TIME: i64 = i64::MIN;
/// What `access_strength` holds when the `access:` line states no strength.
pub const NO_STRENGTH: f64 = -1.0;

/// What `invalid_at` holds for a memory that was never invalidated.
pub const VALID_FOREVER: i64 = i64::MAX;

impl Fields {
    /// Builds the schema and its field handles.
    pub fn schema() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let text = |stored: bool| {
            let indexing = TextFieldIndexing::default()
                .set_tokenizer(ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions);
            let opts = TextOptions::default().set_indexing_options(indexing);
            if stored { opts.set_stored() } else { opts }
        };
        let tag_opts = TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(TAG_ANALYZER)
                    .set_index_option(IndexRecordOption::Basic),
            )
            .set_stored();
        let who_opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TAG_ANALYZER)
                .set_index_option(IndexRecordOption::Basic),
        );
        let fields = Fields {
            path: b.add_text_field("path", STRING | STORED | FAST),
            id: b.add_text_field("id", STRING | STORED | FAST),
            title: b.add_text_field("title", text(true)),
            body: b.add_text_field("body", text(true)),
            tags: b.add_text_field("tags", text(false)),
            tag: b.add_text_field("tag", tag_opts),
            kind: b.add_text_field("type", STRING | STORED | FAST),
            importance: b.add_u64_field("importance", FAST | STORED),
            created: b.add_i64_field("created", FAST | STORED | INDEXED),
            last_access: b.add_i64_field("last_access", FAST | STORED),
            tiebreak: b.add_u64_field("tiebreak", FAST),
            id_key: b.add_u64_field("id_key", FAST),
            role: b.add_u64_field("role", FAST),
            source: b.add_text_field("source", STRING | STORED),
            invalid_at: b.add_i64_field("invalid_at", FAST | STORED | INDEXED),
            superseded_by: b.add_text_field("superseded_by", STORED | FAST),
            size: b.add_u64_field("size", STORED),
            mtime: b.add_i64_field("mtime", STORED),
            has_time: b.add_u64_field("has_time", FAST),
            who: b.add_text_field("who", who_opts),
            into_key: b.add_u64_field("into_key", FAST),
            access_uses: b.add_u64_field("access_uses", FAST),
            access_retrieved: b.add_u64_field("access_retrieved", FAST),
            access_last: b.add_i64_field("access_last", FAST),
            access_strength: b.add_f64_field("access_strength", FAST),
            text_key: b.add_u64_field("text_key", FAST),
        };
        (b.build(), fields)
    }

    /// The index document of `memory`, read from the file at `rel` as `stamp` says it was.
    pub fn document(&self, rel: &str, stamp: Stamp, memory: &Memory) -> TantivyDocument {
        let mut d = doc!(
            self.path => rel,
            self.size => stamp.size,
            self.mtime => stamp.mtime_ns,
            self.id => memory.id().as_str(),
            self.title => memory.title(),
            self.body => memory.body(),
            self.kind => memory.kind().as_str(),
            self.importance => u64::from(memory.importance()),
            self.created => memory.created().as_second(),
            // Ranking recency counts from the last *use* (an `access:` line that counts uses,
            // until sync moves it to the usage files; then the last-use map), never from a
            // retrieval, so recording recalls cannot change later rankings (docs/ranking.md).
            self.last_access => last_use(memory).as_second(),
            self.tiebreak => tiebreak(memory),
            self.id_key => id_key(memory.id().as_str()),
            self.role => role(memory).code(),
            self.invalid_at => memory.invalid_at().map_or(VALID_FOREVER, |t| t.as_second()),
            self.has_time => u64::from(
                crate::dates::has_time_expression(&memory.title())
                    || crate::dates::has_time_expression(memory.body())
            ),
            self.into_key => memory.consolidated_into().map_or(0, |id| id_key(id.as_str())),
            self.text_key => crate::prune::text_key(memory.body()),
        );
        let access = memory.access();
        d.add_u64(self.access_uses, access.map_or(NO_ACCESS, |a| a.count));
        d.add_u64(self.access_retrieved, access.map_or(0, |a| a.retrieved));
        d.add_i64(self.access_last, access.and_then(|a| a.last).map_or(NO_TIME, nanos));
        d.add_f64(self.access_strength, access.and_then(|a| a.strength).unwrap_or(NO_STRENGTH));
        if let Some(by) = memory.superseded_by() {
            d.add_text(self.superseded_by, by.as_str());
        }
        for tag in memory.tags() {
            d.add_text(self.tags, tag);
            d.add_text(self.tag, tag);
            d.add_text(self.who, tag);
        }
        if let Some(source) = memory.source() {
            d.add_text(self.source, source);
            if let Some(person) = person_of(source) {
                d.add_text(self.who, person);
            }
        }
        d
    }
}

pub use crate::format::id_key;

pub use crate::store::Stamp;

/// A stable 64-bit hash of a memory's title and body, used to order exact ties of score and of
/// `created`: memories written within one second order the same way in every root, whatever
/// the random part of their ids and file names.
pub fn tiebreak(memory: &Memory) -> u64 {
    let mut hasher = blake3::Hasher::new();
    for part in [memory.title().as_str(), memory.body()] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    u64::from_le_bytes(hasher.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

/// The person a `source` names: `NAME` of `person/NAME`.
pub fn person_of(source: &str) -> Option<&str> {
    source
        .strip_prefix("person/")
        .map(str::trim)
        .filter(|name| !name.is_empty() && !name.contains('/'))
}

/// When `memory` was last used according to its own file: the last reinforcement of an
/// `access:` line that counts uses, else its creation.
fn last_use(memory: &Memory) -> jiff::Timestamp {
    let used = memory.access().filter(|a| a.count > 0).and_then(|a| a.last);
    used.map_or(memory.created(), |at| at.max(memory.created()))
}

/// What `memory` is for ranking: a session digest (of a session that did work, or only asked),
/// a fact or procedure, or another memory.
pub fn role(memory: &Memory) -> crate::score::Role {
    use crate::format::MemoryType;
    use crate::score::Role;
    if crate::capture::is_digest(memory) {
        if crate::capture::did_work(memory.body()) { Role::Digest } else { Role::QuestionOnly }
    } else if matches!(memory.kind(), MemoryType::Semantic | MemoryType::Procedural) {
        Role::Fact
    } else {
        Role::Other
    }
}

/// `at` in nanoseconds since the epoch (saturating outside ±292 years).
pub fn nanos(at: jiff::Timestamp) -> i64 {
    i64::try_from(at.as_nanosecond()).unwrap_or(if at.as_second() < 0 {
        i64::MIN + 1
    } else {
        i64::MAX
    })
}
