//! Query coverage: how much of a query's content a memory matches, as the share of the
//! query's IDF mass (each distinct content word weighs its inverse document frequency) found
//! in the memory's title, body or tags. BM25 sums what matches; coverage says what is
//! missing, so that one rare word does not outrank a memory that matches most of the query.

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, SegmentReader, TERMINATED, Term};

use super::stats::LiveStats;

/// The content words of one query, each with its weight (its IDF).
pub(super) struct QueryWords {
    words: Vec<(String, f32)>,
    total: f32,
}

impl QueryWords {
    /// Weighs `words` (distinct analysed content words) by their IDF in `field` over the live
    /// documents: `ln(1 + (N − df + 0.5) / (df + 0.5))`.
    pub(super) fn new(words: &[String], field: Field, stats: &LiveStats) -> tantivy::Result<Self> {
        let n = stats.total_num_docs()? as f32;
        let mut weighted = Vec::with_capacity(words.len());
        for word in words {
            let df = stats.doc_freq(&Term::from_field_text(field, word))? as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            weighted.push((word.clone(), idf.max(0.0)));
        }
        let total = weighted.iter().map(|(_, w)| w).sum();
        Ok(QueryWords { words: weighted, total })
    }
}

/// Which documents of one segment hold each query word, in any of the searched fields.
pub(super) struct SegmentCoverage {
    /// Per word: its weight and, per document, whether the document holds it.
    held: Vec<(f32, Vec<bool>)>,
    total: f32,
}

impl SegmentCoverage {
    /// Reads the postings of every query word in `fields` of `segment`.
    pub(super) fn open(
        segment: &SegmentReader,
        fields: &[Field],
        query: &QueryWords,
    ) -> tantivy::Result<SegmentCoverage> {
        let max_doc = segment.max_doc() as usize;
        let mut held = Vec::with_capacity(query.words.len());
        for (word, weight) in &query.words {
            let mut docs = vec![false; max_doc];
            for &field in fields {
                let inverted = segment.inverted_index(field)?;
                let term = Term::from_field_text(field, word);
                if let Some(mut postings) =
                    inverted.read_postings(&term, IndexRecordOption::Basic)?
                {
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        docs[doc as usize] = true;
                        doc = postings.advance();
                    }
                }
            }
            held.push((*weight, docs));
        }
        Ok(SegmentCoverage { held, total: query.total })
    }

    /// The weight (IDF) of each query word `doc` holds, with the word's place in the query.
    pub(super) fn held_by(&self, doc: DocId) -> impl Iterator<Item = (usize, f32)> + '_ {
        self.held
            .iter()
            .enumerate()
            .filter(move |(_, (_, docs))| docs[doc as usize])
            .map(|(i, (w, _))| (i, *w))
    }

    /// The share of the query's weight that `doc` holds, in `0..=1` (1 for an empty query).
    pub(super) fn of(&self, doc: DocId) -> f64 {
        if self.total <= 0.0 {
            return 1.0;
        }
        let held: f32 =
            self.held.iter().filter(|(_, docs)| docs[doc as usize]).map(|(w, _)| w).sum();
        f64::from(held / self.total)
    }
}
