//! The question a recall asks, analysed once into a [`Question`]: its weighted words (the
//! analyzer's tokens, fillers at a lower weight), the capitalised words that may name people,
//! the spans of time it names and whether it asks "when", and whether it asks for several
//! things ("what pets does Nate have?", "which cities has Jon visited?", "how many times…",
//! "what decisions did we make about auth?"). Such a question's answers are spread over many
//! episodes, so recall lifts whole episodes less for it (see docs/ranking.md, "Questions that
//! ask for several things"). Which of its words name people is the index's to say: the engine
//! asks it once per recall and stores the answer here ([`Question::resolve`]), with the text
//! recall embeds, the question without those people. This is the one place that analyses a
//! question's text; the index, the score and the engine read the value.

use jiff::Timestamp;

use crate::dates::{self, Window};
use crate::tokenizer;

/// A question analysed once, read by every part of a recall.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    /// The text as asked.
    text: String,
    /// The analysed tokens, each with its weight ([`tokenizer::query_tokens`]).
    tokens: Vec<(String, f32)>,
    /// Its capitalised words, lower-cased, each once: who it may name ([`capitalised`]).
    candidates: Vec<String>,
    /// The spans of time it names, resolved against the `now` it was built at.
    windows: Vec<Window>,
    /// Whether it asks when something happened ([`dates::asks_when`]).
    when: bool,
    /// Whether it asks for several things ([`asks_for_several`]).
    several: bool,
    /// The people it names as the index knows them, once resolved, and the text to embed.
    resolved: Option<Resolved>,
}

/// What the index said of a question's name candidates.
#[derive(Clone, Debug, PartialEq)]
struct Resolved {
    /// The candidates that are some memory's tag or `person/NAME` source, lower-cased.
    names: Vec<String>,
    /// The question without the people it names as its subject or a possessor.
    embedded: String,
}

impl Question {
    /// Analyses `text`, its date words resolved against `now`.
    pub fn new(text: &str, now: Timestamp) -> Question {
        let mut candidates: Vec<String> = Vec::new();
        for word in capitalised(text) {
            let name = word.to_lowercase();
            if !candidates.contains(&name) {
                candidates.push(name);
            }
        }
        Question {
            text: text.to_string(),
            tokens: tokenizer::query_tokens(text),
            candidates,
            windows: dates::windows(text, now),
            when: dates::asks_when(text),
            several: asks_for_several(text),
            resolved: None,
        }
    }

    /// The text as asked.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The analysed tokens, each with its weight: 1 for a content word, less for a filler.
    pub fn tokens(&self) -> &[(String, f32)] {
        &self.tokens
    }

    /// The words that may name people: capitalised in the question (not all-capital, not
    /// the first word of a sentence unless possessive), lower-cased, each once.
    pub fn name_candidates(&self) -> &[String] {
        &self.candidates
    }

    /// The spans of time it names ("in July", "last week").
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// Whether it asks when something happened.
    pub fn asks_when(&self) -> bool {
        self.when
    }

    /// Whether it asks for several things (see [`asks_for_several`]).
    pub fn asks_for_several(&self) -> bool {
        self.several
    }

    /// Stores the people it names, as the index found them among the candidates
    /// ([`crate::index::MemoryIndex::names`]), and the text to embed that follows; `None`
    /// (the index could not say) forgets what an earlier answer stored.
    pub fn resolve(&mut self, names: Option<Vec<String>>) {
        self.resolved = names.map(|names| Resolved { embedded: self.without(&names), names });
    }

    /// The people it names, once resolved.
    pub fn names(&self) -> Option<&[String]> {
        self.resolved.as_ref().map(|r| r.names.as_slice())
    }

    /// The text recall embeds: the question without the people it names, once resolved; the
    /// question whole before.
    pub fn embedded(&self) -> &str {
        self.resolved.as_ref().map_or(&self.text, |r| &r.embedded)
    }

    /// The question without the people among `names` it names as its subject or a possessor:
    /// such a word right after an auxiliary ("did Melanie", "does Marek"), with a possessive
    /// "'s" ("Ana's", which goes whole), or joined by "and" to one of those ("do Jon and
    /// Gina"). A tag named elsewhere is more often the question's topic ("upgrade
    /// Playwright", "the Redis keys") and stays. Recall takes the embedding of this, so that
    /// the cosine weighs what the question is about, not who it names (the name factor and
    /// BM25 weigh that); the question itself when nothing, or everything, would go.
    pub fn without(&self, names: &[String]) -> String {
        let text = &self.text;
        if names.is_empty() {
            return text.clone();
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
        match kept.len() {
            0 => text.clone(),
            n if n == tokens.len() => text.clone(),
            _ => kept.join(" "),
        }
    }
}

/// Whether `text` asks for several things: it opens with "how many", with "what kinds of"
/// (or types, sorts), or with "what" or "which" and a plural noun, right after it or one word
/// later ("what board games"), followed by an auxiliary ("what pets does…", "which cities
/// has…"): a plural noun ends in "s", and so does a verb ("what causes the crash"), which
/// the auxiliary tells apart.
pub fn asks_for_several(text: &str) -> bool {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match word(0) {
        "how" => word(1) == "many",
        "what" | "which" => {
            let mut i = 1;
            if KINDS.contains(&word(i)) && word(i + 1) == "of" {
                if word(i).ends_with('s') {
                    return true;
                }
                i += 2;
            }
            let noun_phrase = |j: usize| {
                plural(word(j)) && (AUXILIARIES.contains(&word(j + 1)) || plural(word(j + 1)))
            };
            noun_phrase(i) || (!AUXILIARIES.contains(&word(i)) && noun_phrase(i + 1))
        }
        _ => false,
    }
}

/// Words that name a kind of thing before "of".
const KINDS: [&str; 6] = ["kind", "kinds", "type", "types", "sort", "sorts"];

/// Auxiliary verbs: they follow the noun a question asks about ("what pets does…") and come
/// before its subject ("did Melanie…").
const AUXILIARIES: [&str; 17] = [
    "do", "does", "did", "have", "has", "had", "are", "were", "is", "was", "can", "could", "will",
    "would", "should", "might", "may",
];

/// Words ending in "s" that are not plural nouns, among those a question opens with.
const NOT_PLURAL: [&str; 16] = [
    "is", "was", "has", "does", "his", "its", "this", "us", "yes", "always", "perhaps", "whereas",
    "thus", "plus", "less", "unless",
];

/// Whether `word` looks like an English plural noun: three letters or more, ending in "s" but
/// not in "ss", "us" or "is", and not one of [`NOT_PLURAL`].
fn plural(word: &str) -> bool {
    word.len() >= 3
        && word.ends_with('s')
        && !["ss", "us", "is"].iter().any(|end| word.ends_with(end))
        && !NOT_PLURAL.contains(&word)
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

#[cfg(test)]
mod tests {
    use super::{Question, asks_for_several};

    #[test]
    fn a_question_holds_its_analysis() {
        let now: jiff::Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
        let mut q = Question::new("When did Melanie's pets visit the vet in July?", now);
        assert_eq!(q.text(), "When did Melanie's pets visit the vet in July?");
        let tokens: Vec<(&str, f32)> = q.tokens().iter().map(|(t, w)| (t.as_str(), *w)).collect();
        assert_eq!(
            tokens,
            [
                ("when", 0.5),
                ("did", 0.5),
                ("melani", 1.0),
                ("s", 1.0),
                ("pet", 1.0),
                ("visit", 1.0),
                ("vet", 1.0),
                ("juli", 1.0)
            ]
        );
        assert_eq!(q.name_candidates(), ["melanie", "july"]);
        assert_eq!(q.windows().len(), 1);
        let at = |t: &str| t.parse::<jiff::Timestamp>().unwrap().as_second();
        assert!(q.windows()[0].contains(at("2026-07-15T12:00:00Z")));
        assert!(!q.windows()[0].contains(at("2026-09-15T12:00:00Z")));
        assert!(q.asks_when());
        assert!(!q.asks_for_several());
        assert!(Question::new("What pets does Nate have?", now).asks_for_several());
        // Before the index says who it names, recall embeds the question whole.
        assert_eq!(q.names(), None);
        assert_eq!(q.embedded(), q.text());
        q.resolve(Some(vec!["melanie".to_string()]));
        assert_eq!(q.names(), Some(&["melanie".to_string()][..]));
        assert_eq!(q.embedded(), "When did pets visit the vet in July?");
    }

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

    #[test]
    fn lists_and_counts_ask_for_several() {
        for q in [
            "What pets does Nate have?",
            "Which cities has Jon visited?",
            "What board games has Nate played?",
            "How many times has Melanie gone to the beach?",
            "what decisions did we make about auth",
            "Which US cities does John mention?",
            "What kinds of tests are flaky?",
            "which kind of errors does the parser report",
            "What activities does Melanie partake in?",
            "What musical artists/bands has Melanie seen?",
            "What tests are flaky on CI?",
        ] {
            assert!(asks_for_several(q), "{q}");
        }
    }

    #[test]
    fn one_thing_or_no_question_does_not() {
        for q in [
            "What is Caroline's identity?",
            "What does Melanie do to destress?",
            "What was the fix for the login bug?",
            "what's the status of the migration",
            "What kind of art does Caroline make?",
            "When did the deploy fail?",
            "postgres connection pool timeouts",
            "Which database did we choose?",
            "What has Tim been reading?",
            "what process restarts the workers",
            "what causes the crash on startup",
            "what happens when the cache is cold",
            "",
        ] {
            assert!(!asks_for_several(q), "{q}");
        }
    }
}
