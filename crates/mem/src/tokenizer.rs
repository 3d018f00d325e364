//! Tokenizer for prose that mentions code: identifiers are findable whole and by their parts.
//!
//! `session_id` gives `session_id`, `session`, `id`; `StorePort` gives `StorePort`, `Store`,
//! `Port`; `auth.py` gives `auth.py`, `auth`, `py`; `refs/harness` gives `refs/harness`, `refs`,
//! `harness`. Lower-casing, stop words and stemming are filters added after it (see
//! [`analyzer`]).

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, StopWordFilter, TextAnalyzer, Token, TokenStream,
    Tokenizer,
};

mod stem;

use self::stem::MemoStemmer;

/// Name under which the analyzer is registered in the tantivy index.
pub const ANALYZER: &str = "mem_code_en";
/// Name of the analyzer for exact, case-insensitive tag filters.
pub const TAG_ANALYZER: &str = "mem_tag";

/// Longest whole identifier kept as one token; longer ones are indexed by their parts only.
const MAX_WHOLE: usize = 64;
/// Tokens of this many bytes or more are dropped after splitting.
const MAX_TOKEN: usize = 48;

/// The analyzer used for titles, bodies, tags and queries.
pub fn analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(CodeTokenizer)
        .filter(RemoveLongFilter::limit(MAX_TOKEN))
        .filter(LowerCaser);
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder.filter(stop).filter(MemoStemmer).build(),
        None => builder.filter(MemoStemmer).build(),
    }
}

/// Runs `f` with this thread's analyzer: building one (its stop-word set, its stemmer) costs
/// more than analysing a query, so recall, admission and reflection reuse one per thread.
pub fn with_analyzer<T>(f: impl FnOnce(&mut TextAnalyzer) -> T) -> T {
    thread_local! {
        static ANALYZER: std::cell::RefCell<TextAnalyzer> = std::cell::RefCell::new(analyzer());
    }
    ANALYZER.with_borrow_mut(f)
}

/// The analysed tokens of `text`, in order.
pub fn tokens(text: &str) -> Vec<String> {
    with_analyzer(|a| tokens_of(a, text))
}

/// The tokens `analyzer` makes of `text`, in order.
pub fn tokens_of(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = TokenStream::next(&mut stream) {
        out.push(token.text.clone());
    }
    out
}

/// Weight of a filler word in a query that has other words (see [`QUERY_FILLERS`]).
pub const FILLER_WEIGHT: f32 = 0.5;

/// Words that shape a question or a request without saying what it is about: question words,
/// auxiliaries, pronouns, and the words agents wrap tasks in. They weigh [`FILLER_WEIGHT`] in a
/// query (memories are indexed as they are), and do not count for coverage; see
/// docs/ranking.md.
const QUERY_FILLERS: &[&str] = &[
    "what", "when", "where", "which", "who", "whom", "whose", "why", "how", "do", "does", "did",
    "done", "doing", "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had",
    "having", "can", "could", "will", "would", "shall", "should", "may", "might", "must", "i",
    "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "he", "him", "his",
    "himself", "she", "her", "hers", "herself", "it", "its", "itself", "we", "us", "our", "ours",
    "they", "them", "their", "theirs", "this", "that", "these", "those", "a", "an", "the", "of",
    "to", "in", "on", "at", "by", "for", "with", "about", "from", "into", "and", "or", "but", "if",
    "so", "as", "than", "then", "there", "here", "any", "some", "please", "task", "recall",
];

/// The analysed tokens of a query, each with its weight: 1 for a word that carries content,
/// [`FILLER_WEIGHT`] for one of the [`QUERY_FILLERS`] (1 when the query has nothing else).
pub fn query_tokens(text: &str) -> Vec<(String, f32)> {
    static FILLERS: std::sync::LazyLock<std::collections::HashSet<String>> =
        std::sync::LazyLock::new(|| QUERY_FILLERS.iter().flat_map(|w| tokens(w)).collect());
    let all = tokens(text);
    if all.iter().all(|t| FILLERS.contains(t)) {
        return all.into_iter().map(|t| (t, 1.0)).collect();
    }
    all.into_iter()
        .map(|t| {
            let weight = if FILLERS.contains(&t) { FILLER_WEIGHT } else { 1.0 };
            (t, weight)
        })
        .collect()
}

/// The analyzer for the exact tag field: the whole tag, lower-cased.
pub fn tag_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(tantivy::tokenizer::RawTokenizer::default()).filter(LowerCaser).build()
}

/// Splits text into words, then identifiers into their parts (see the module doc).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodeTokenizer;

/// The tokens of one text, computed up front.
pub struct CodeTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        CodeTokenStream { tokens: tokenize(text), next: 0 }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// Characters that join the parts of an identifier (`snake_case`, `a.b`, `a/b`, `a-b`, `a::b`).
fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '.' | '/' | '-' | ':' | '\\' | '@' | '#' | '+')
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut position = 0;
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if !c.is_alphanumeric() {
            chars.next();
            continue;
        }
        // A word runs over letters, digits and joiners; trailing joiners are not part of it.
        let mut last_alnum_end = start;
        while let Some(&(i, c)) = chars.peek() {
            if c.is_alphanumeric() {
                last_alnum_end = i + c.len_utf8();
            } else if !is_joiner(c) {
                break;
            }
            chars.next();
        }
        position = push_word(&mut tokens, text, start, last_alnum_end, position);
    }
    tokens
}

/// Pushes a word and its parts, returning the next free position.
fn push_word(
    tokens: &mut Vec<Token>,
    text: &str,
    start: usize,
    end: usize,
    position: usize,
) -> usize {
    let word = &text[start..end];
    let parts = split_parts(word);
    let simple = parts.len() == 1;
    if simple || word.len() <= MAX_WHOLE {
        tokens.push(token(word, start, end, position));
    }
    if simple {
        return position + 1;
    }
    for (i, (from, to)) in parts.iter().enumerate() {
        tokens.push(token(&word[*from..*to], start + from, start + to, position + i));
    }
    position + parts.len()
}

fn token(text: &str, from: usize, to: usize, position: usize) -> Token {
    Token { offset_from: from, offset_to: to, position, text: text.to_string(), position_length: 1 }
}

/// Byte ranges of the parts of a word: split at joiners and at case changes
/// (`parseHTTPResponse` → `parse`, `HTTP`, `Response`), and between letters and digits are kept.
fn split_parts(word: &str) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if is_joiner(c) {
            if let Some(s) = start.take() {
                parts.push((s, i));
            }
            continue;
        }
        if let Some(s) = start {
            let prev = chars[k - 1].1;
            let next = chars.get(k + 1).map(|&(_, n)| n);
            let lower_to_upper = prev.is_lowercase() && c.is_uppercase();
            let acronym_end =
                prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase());
            if lower_to_upper || acronym_end {
                parts.push((s, i));
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        parts.push((s, word.len()));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    fn analyzed(text: &str) -> Vec<String> {
        let mut a = analyzer();
        let mut stream = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = stream.next() {
            out.push(t.text.clone());
        }
        out
    }

    #[test]
    fn identifiers_split_into_parts() {
        assert_eq!(raw("session_id"), ["session_id", "session", "id"]);
        assert_eq!(raw("StorePort"), ["StorePort", "Store", "Port"]);
        assert_eq!(raw("auth.py"), ["auth.py", "auth", "py"]);
        assert_eq!(raw("refs/harness"), ["refs/harness", "refs", "harness"]);
        assert_eq!(raw("parseHTTPResponse"), ["parseHTTPResponse", "parse", "HTTP", "Response"]);
        assert_eq!(raw("plain words."), ["plain", "words"]);
        assert_eq!(raw("end. Next"), ["end", "Next"]);
        assert_eq!(raw("(see `Foo::bar()`)"), ["see", "Foo::bar", "Foo", "bar"]);
    }

    #[test]
    fn offsets_point_at_the_text() {
        let text = "fix: the StorePort leak";
        for t in tokenize(text) {
            assert_eq!(&text[t.offset_from..t.offset_to], t.text);
        }
    }

    #[test]
    fn analyzer_lowercases_stems_and_drops_stop_words() {
        assert_eq!(analyzed("The tests are failing"), ["test", "fail"]);
        assert_eq!(analyzed("StorePort"), ["storeport", "store", "port"]);
    }
}
