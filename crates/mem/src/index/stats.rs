//! BM25 statistics over the documents that are alive, so that scores do not depend on how the
//! index got here: an index updated in place (whose segments still hold deleted documents
//! until they are merged) scores exactly like one built from scratch.

use std::collections::HashMap;
use std::sync::Mutex;

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, TERMINATED, Term};

/// Statistics computed from live documents only, cached for one search.
pub struct LiveStats<'a> {
    searcher: &'a Searcher,
    tokens: Mutex<HashMap<Field, u64>>,
    freqs: Mutex<HashMap<Term, u64>>,
}

impl<'a> LiveStats<'a> {
    /// Statistics of `searcher`'s live documents.
    pub fn new(searcher: &'a Searcher) -> Self {
        LiveStats { searcher, tokens: Mutex::default(), freqs: Mutex::default() }
    }
}

impl Bm25StatisticsProvider for LiveStats<'_> {
    /// The sum of the field lengths of live documents, from their field norms (the same values
    /// whatever the segments, unlike tantivy's running total, which keeps deleted documents).
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut cache = self.tokens.lock().expect("not poisoned");
        if let Some(&total) = cache.get(&field) {
            return Ok(total);
        }
        let mut total = 0u64;
        for segment in self.searcher.segment_readers() {
            let norms = segment.get_fieldnorms_reader(field)?;
            let alive = segment.alive_bitset();
            for doc in 0..segment.max_doc() {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    total += u64::from(norms.fieldnorm(doc));
                }
            }
        }
        cache.insert(field, total);
        Ok(total)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs())
    }

    /// Live documents containing `term`: the term dictionary's count where a segment has no
    /// deletions, else a walk over the term's postings.
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(&n) = self.freqs.lock().expect("not poisoned").get(term) {
            return Ok(n);
        }
        let mut n = 0u64;
        for segment in self.searcher.segment_readers() {
            let inverted = segment.inverted_index(term.field())?;
            match segment.alive_bitset() {
                None => n += u64::from(inverted.doc_freq(term)?),
                Some(alive) => {
                    if let Some(mut postings) =
                        inverted.read_postings(term, IndexRecordOption::Basic)?
                    {
                        let mut doc = postings.doc();
                        while doc != TERMINATED {
                            n += u64::from(alive.is_alive(doc));
                            doc = postings.advance();
                        }
                    }
                }
            }
        }
        self.freqs.lock().expect("not poisoned").insert(term.clone(), n);
        Ok(n)
    }
}
