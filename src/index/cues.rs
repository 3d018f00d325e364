//! What a question asks for besides its words: the dates it names, whether it asks "when",
//! and the one person it names (a query word, written with a capital, that is some memory's
//! tag or `person/NAME` source); and the question without the people it names, which is
//! what recall embeds. Read once per recall; see docs/ranking.md.

use tantivy::schema::IndexRecordOption;
use tantivy::{DocSet, Searcher, SegmentReader, TERMINATED, Term};

use super::MemoryIndex;
use crate::Result;
use crate::question::AUXILIARIES;
use crate::score::Cues;

/// A question's cues, and the term of the person it names.
pub(super) struct QueryCues {
    /// The cues the score reads.
    pub(super) cues: Cues,
    /// The `who` term of the one person named, if exactly one is.
    name: Option<Term>,
}

impl MemoryIndex {
    /// The cues of `text` at `now`: a person counts as named when exactly one capitalised word
    /// of the question is the tag or `person/NAME` source of some memory.
    pub(super) fn cues(
        &self,
        searcher: &Searcher,
        text: &str,
        now: jiff::Timestamp,
    ) -> Result<QueryCues> {
        let mut names = self.named(searcher, text)?;
        let name =
            (names.len() == 1).then(|| Term::from_field_text(self.fields.who, &names.remove(0)));
        Ok(QueryCues { cues: Cues::of(text, now, name.is_some()), name })
    }

    /// The people `text` names, lower-cased, each once: its capitalised words that are the
    /// tag or `person/NAME` source of some memory.
    fn named(&self, searcher: &Searcher, text: &str) -> Result<Vec<String>> {
        let mut names: Vec<String> = Vec::new();
        for word in capitalised(text) {
            let name = word.to_lowercase();
            let term = Term::from_field_text(self.fields.who, &name);
            if !names.contains(&name) && searcher.doc_freq(&term)? > 0 {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// `text` without the people it names as its subject or a possessor: a word that names
    /// someone (see [`MemoryIndex::cues`]) right after an auxiliary ("did Melanie", "does
    /// Marek"), with a possessive "'s" ("Ana's", which goes whole), or joined by "and" to one
    /// of those ("do Jon and Gina"). A tag named elsewhere is more often the question's topic
    /// ("upgrade Playwright", "the Redis keys") and stays. This is what recall takes the
    /// embedding of, so that the cosine weighs what the question is about, not who it names
    /// (the name factor and BM25 weigh that); `text` itself when nothing, or everything,
    /// would go.
    pub fn without_names(&self, text: &str) -> Result<String> {
        let names = self.named(&self.reader.searcher(), text)?;
        if names.is_empty() {
            return Ok(text.to_string());
        }
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let mut gone = vec![false; tokens.len()];
        for (i, token) in tokens.iter().enumerate() {
            let bare = bare_word(token);
            if !names.contains(&bare.to_lowercase()) {
                continue;
            }
            let before = i.checked_sub(1).map(|j| tokens[j].to_lowercase());
            let possessive = bare.len() < trimmed(token).len();
            let subject = before.as_deref().is_some_and(|w| AUXILIARIES.contains(&w));
            let joined = before.as_deref() == Some("and") && i >= 2 && gone[i - 2];
            gone[i] = possessive || subject || joined;
        }
        let kept: Vec<&str> =
            tokens.iter().zip(&gone).filter(|(_, gone)| !**gone).map(|(t, _)| *t).collect();
        Ok(match kept.len() {
            0 => text.to_string(),
            n if n == tokens.len() => text.to_string(),
            _ => kept.join(" "),
        })
    }
}

/// `token` without the punctuation around it and a possessive "'s".
fn bare_word(token: &str) -> &str {
    let word = trimmed(token);
    let word = word.strip_suffix("'s").or_else(|| word.strip_suffix("’s")).unwrap_or(word);
    word.trim_matches(quote)
}

/// `token` without the punctuation around it, apostrophes kept.
fn trimmed(token: &str) -> &str {
    token.trim_matches(|c: char| !c.is_alphanumeric() && !quote(c))
}

/// Whether `c` is an apostrophe.
fn quote(c: char) -> bool {
    c == '\'' || c == '’'
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

/// The words of `text` written with a capital first letter and some lower-case letter after it
/// ("Melanie", "Ana's" → "Ana"), as names are; all-capital words ("CI", "API") are left out,
/// and so is the first word of a sentence ("Login fails again"), unless it is a possessive.
fn capitalised(text: &str) -> impl Iterator<Item = &str> {
    text.split(['.', '?', '!', '\n', ';']).flat_map(|sentence| {
        sentence
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .filter(|w| !w.is_empty())
            .enumerate()
            .filter_map(|(i, w)| {
                let name = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s"));
                if i == 0 && name.is_none() {
                    return None;
                }
                Some(name.unwrap_or(w).trim_matches(|c| c == '\'' || c == '’'))
            })
            .filter(|w| {
                let mut chars = w.chars();
                chars.next().is_some_and(char::is_uppercase) && chars.any(char::is_lowercase)
            })
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn capitalised_words_are_name_candidates() {
        let words: Vec<&str> = super::capitalised(
            "When did Melanie see Ana's CI run? Login fails. Jonas’s team, ask jonas. Priya",
        )
        .collect();
        assert_eq!(words, ["Melanie", "Ana", "Jonas"]);
    }

    #[test]
    fn a_bare_word_loses_its_punctuation_and_possessive() {
        for (token, bare) in [
            ("Melanie's", "Melanie"),
            ("(Jonas’s)", "Jonas"),
            ("Ana?", "Ana"),
            ("'quoted'", "quoted"),
        ] {
            assert_eq!(super::bare_word(token), bare);
        }
    }
}
