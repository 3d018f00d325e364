//! Memories as the index stores them: records for listing, texts for embedding.

use jiff::Timestamp;
use serde::Serialize;
use tantivy::collector::DocSetCollector;
use tantivy::query::{AllQuery, BooleanQuery, Query, TermSetQuery};
use tantivy::schema::Value;
use tantivy::{DocAddress, TantivyDocument, Term};

use super::{MemoryIndex, VALID_FOREVER, text_of};
use crate::format::MemoryType;
use crate::{Error, Result};

/// What [`MemoryIndex::tally`] counts.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Memories by type.
    pub by_type: std::collections::BTreeMap<MemoryType, usize>,
    /// Memories by month of creation (`YYYY-MM`).
    pub by_month: std::collections::BTreeMap<String, usize>,
}

/// A memory as the index knows it.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// The memory's id.
    pub id: String,
    /// Path relative to the root.
    pub path: String,
    /// Title (first heading, else first line).
    pub title: String,
    /// Type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Importance 1..=10.
    pub importance: u8,
    /// Creation time.
    pub created: Timestamp,
    /// Last access, else creation time.
    pub last_access: Timestamp,
    /// Tags.
    pub tags: Vec<String>,
    /// Origin, if recorded.
    pub source: Option<String>,
    /// When it became invalid, if it did.
    pub invalid_at: Option<Timestamp>,
    /// The memory that replaces it, if any.
    pub superseded_by: Option<String>,
    /// Its file as it was when indexed.
    #[serde(skip)]
    pub stamp: super::Stamp,
}

impl MemoryIndex {
    /// The text to embed (see [`crate::embed::memory_text`]) of the memory in each file of
    /// `paths` (relative to the root), as (id, text).
    pub fn embedding_texts(&self, paths: &[&str]) -> Result<Vec<(String, String)>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let terms = paths.iter().map(|path| Term::from_field_text(self.fields.path, path));
        let mut addresses: Vec<DocAddress> =
            searcher.search(&TermSetQuery::new(terms), &DocSetCollector)?.into_iter().collect();
        addresses.sort();
        let mut texts = Vec::with_capacity(paths.len());
        for address in addresses {
            let doc: TantivyDocument = searcher.doc(address)?;
            let tags: Vec<String> =
                doc.get_all(self.fields.tag).filter_map(|v| v.as_str().map(String::from)).collect();
            let text = crate::embed::memory_text(
                &text_of(&doc, self.fields.title),
                &tags,
                &text_of(&doc, self.fields.body),
            );
            texts.push((text_of(&doc, self.fields.id), text));
        }
        Ok(texts)
    }

    /// Every indexed memory of the given types and tags, newest first.
    pub fn records(&self, kinds: &[MemoryType], tags: &[String]) -> Result<Vec<Record>> {
        let searcher = self.reader.searcher();
        let clauses = self.filters(kinds, tags);
        let query: Box<dyn Query> = if clauses.is_empty() {
            Box::new(AllQuery)
        } else {
            Box::new(BooleanQuery::new(clauses))
        };
        let addresses = searcher.search(&*query, &DocSetCollector)?;
        let mut records = addresses
            .into_iter()
            .map(|a: DocAddress| self.record(&searcher.doc(a)?))
            .collect::<Result<Vec<_>>>()?;
        records.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.path.cmp(&b.path)));
        Ok(records)
    }

    /// Counts the index answers without reading a stored document, for pages that show them
    /// over 100,000 memories: memories by type (a count per type's term) and by month of
    /// creation (`YYYY-MM`, from the `created` fast field).
    pub fn tally(&self) -> Result<Tally> {
        let searcher = self.reader.searcher();
        let mut tally = Tally::default();
        for kind in MemoryType::ALL {
            let query = BooleanQuery::new(self.filters(&[kind], &[]));
            tally.by_type.insert(kind, searcher.search(&query, &tantivy::collector::Count)?);
        }
        for segment in searcher.segment_readers() {
            let created = segment.fast_fields().i64("created")?;
            for doc in segment.doc_ids_alive() {
                let at = created.first(doc).and_then(|s| Timestamp::from_second(s).ok());
                if let Some(at) = at {
                    *tally.by_month.entry(at.strftime("%Y-%m").to_string()).or_default() += 1;
                }
            }
        }
        Ok(tally)
    }

    /// The `n` most recently created memories, newest first, by the `created` fast field: the
    /// first of a page that lists them, without reading the others.
    pub fn newest(&self, n: usize) -> Result<Vec<Record>> {
        let searcher = self.reader.searcher();
        let top = tantivy::collector::TopDocs::with_limit(n.max(1))
            .order_by_fast_field::<i64>("created", tantivy::Order::Desc);
        searcher
            .search(&AllQuery, &top)?
            .into_iter()
            .map(|(_, a): (Option<i64>, DocAddress)| self.record(&searcher.doc(a)?))
            .collect()
    }

    /// The records whose id is `id` (one, unless two files share it), by the id's term: what
    /// a single memory's page needs, without listing the others.
    pub fn records_of(&self, id: &str) -> Result<Vec<Record>> {
        let searcher = self.reader.searcher();
        let term = tantivy::Term::from_field_text(self.fields.id, id);
        let query = tantivy::query::TermQuery::new(term, tantivy::schema::IndexRecordOption::Basic);
        searcher
            .search(&query, &DocSetCollector)?
            .into_iter()
            .map(|a: DocAddress| self.record(&searcher.doc(a)?))
            .collect()
    }

    pub(super) fn record(&self, doc: &TantivyDocument) -> Result<Record> {
        let f = &self.fields;
        let corrupt = |what: &str| {
            Error::Index(tantivy::TantivyError::InvalidArgument(format!(
                "stored document has no valid `{what}`"
            )))
        };
        let kind = text_of(doc, f.kind).parse().map_err(|_| corrupt("type"))?;
        let seconds = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_i64())
                .and_then(|s| Timestamp::from_second(s).ok())
        };
        Ok(Record {
            id: text_of(doc, f.id),
            path: text_of(doc, f.path),
            title: text_of(doc, f.title),
            kind,
            importance: doc.get_first(f.importance).and_then(|v| v.as_u64()).unwrap_or(5) as u8,
            created: seconds(f.created).ok_or_else(|| corrupt("created"))?,
            last_access: seconds(f.last_access).ok_or_else(|| corrupt("last_access"))?,
            tags: doc.get_all(f.tag).filter_map(|v| v.as_str().map(String::from)).collect(),
            source: doc.get_first(f.source).and_then(|v| v.as_str()).map(String::from),
            invalid_at: doc
                .get_first(f.invalid_at)
                .and_then(|v| v.as_i64())
                .filter(|&s| s != VALID_FOREVER)
                .and_then(|s| Timestamp::from_second(s).ok()),
            superseded_by: doc
                .get_first(f.superseded_by)
                .and_then(|v| v.as_str())
                .map(String::from),
            stamp: super::Stamp {
                size: doc.get_first(f.size).and_then(|v| v.as_u64()).unwrap_or(0),
                mtime_ns: doc.get_first(f.mtime).and_then(|v| v.as_i64()).unwrap_or(0),
            },
        })
    }
}
