//! What a question asks for besides its words, as the index sees it: which of its name
//! candidates (capitalised words, see [`crate::question`]) are some memory's tag or
//! `person/NAME` source, the cues the score reads (the dates it names, whether it asks "when",
//! the one person it names) and which documents are that person's. Read once per recall; see
//! docs/ranking.md.

use tantivy::schema::IndexRecordOption;
use tantivy::{DocSet, Searcher, SegmentReader, TERMINATED, Term};

use super::MemoryIndex;
use crate::Result;
use crate::question::Question;
use crate::score::Cues;

/// A question's cues, and the term of the person it names.
pub(super) struct QueryCues {
    /// The cues the score reads.
    pub(super) cues: Cues,
    /// The `who` term of the one person named, if exactly one is.
    name: Option<Term>,
}

impl MemoryIndex {
    /// The cues of `question` (see [`Cues::of`]): a person counts as named when exactly one of
    /// its name candidates is the tag or `person/NAME` source of some memory. The names the
    /// engine resolved ([`Question::resolve`]) are taken as they are; a question not resolved
    /// is looked up in `searcher`.
    pub(super) fn cues(&self, searcher: &Searcher, question: &Question) -> Result<QueryCues> {
        let looked_up;
        let names = match question.names() {
            Some(names) => names,
            None => {
                looked_up = self.named(searcher, question)?;
                &looked_up
            }
        };
        let name = match names {
            [one] => Some(Term::from_field_text(self.fields.who, one)),
            _ => None,
        };
        Ok(QueryCues { cues: Cues::of(question, name.is_some()), name })
    }

    /// The people `question` names, as this index knows them now: its name candidates
    /// ([`Question::name_candidates`]) that are the tag or `person/NAME` source of some
    /// memory. What [`Question::resolve`] takes.
    pub fn names(&self, question: &Question) -> Result<Vec<String>> {
        self.named(&self.reader.searcher(), question)
    }

    fn named(&self, searcher: &Searcher, question: &Question) -> Result<Vec<String>> {
        let mut names: Vec<String> = Vec::new();
        for name in question.name_candidates() {
            let term = Term::from_field_text(self.fields.who, name);
            if searcher.doc_freq(&term)? > 0 {
                names.push(name.clone());
            }
        }
        Ok(names)
    }
}

impl QueryCues {
    /// Which documents of `segment` are the named person's (empty when nobody is named).
    pub(super) fn named_in(&self, segment: &SegmentReader) -> tantivy::Result<Vec<bool>> {
        let Some(term) = &self.name else {
            return Ok(Vec::new());
        };
        let mut docs = vec![false; segment.max_doc() as usize];
        let inverted = segment.inverted_index(term.field())?;
        if let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? {
            let mut doc = postings.doc();
            while doc != TERMINATED {
                docs[doc as usize] = true;
                doc = postings.advance();
            }
        }
        Ok(docs)
    }
}
