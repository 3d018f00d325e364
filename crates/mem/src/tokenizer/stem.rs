//! English stemming with a per-thread memo: the Snowball stemmer is the same as tantivy's
//! `Stemmer` (same crate, same algorithm, same output), but a word seen before on this thread
//! is looked up instead of stemmed again. A corpus repeats its vocabulary: indexing 100,000
//! memories stems tens of millions of tokens made of a few tens of thousands of words.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Words remembered per thread before the memo starts over (bounds its memory to a few MiB).
const MEMO_LIMIT: usize = 200_000;

thread_local! {
    /// Word -> its stem, or `None` when the stem is the word itself.
    static MEMO: RefCell<FxHashMap<Box<str>, Option<Box<str>>>> = RefCell::default();
}

/// The English stem of `word` (lower-cased already), from the memo when it is there.
fn stem_into(stemmer: &frostem::Stemmer, word: &mut String) {
    MEMO.with_borrow_mut(|memo| {
        if let Some(known) = memo.get(word.as_str()) {
            if let Some(stem) = known {
                word.clear();
                word.push_str(stem);
            }
            return;
        }
        let stem = match stemmer.stem(word) {
            std::borrow::Cow::Borrowed(same) if same.len() == word.len() => None,
            stem => Some(Box::<str>::from(stem.as_ref())),
        };
        if memo.len() >= MEMO_LIMIT {
            memo.clear();
        }
        memo.insert(word.as_str().into(), stem.clone());
        if let Some(stem) = stem {
            word.clear();
            word.push_str(&stem);
        }
    });
}

/// A token filter that stems English words, remembering each word's stem on its thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoStemmer;

impl TokenFilter for MemoStemmer {
    type Tokenizer<T: Tokenizer> = MemoStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> MemoStemmerFilter<T> {
        MemoStemmerFilter { inner: tokenizer }
    }
}

/// [`MemoStemmer`] applied to a tokenizer.
#[derive(Clone)]
pub struct MemoStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for MemoStemmerFilter<T> {
    type TokenStream<'a> = MemoStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        MemoStemmerStream {
            tail: self.inner.token_stream(text),
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        }
    }
}

/// The tokens of [`MemoStemmerFilter`].
pub struct MemoStemmerStream<T> {
    tail: T,
    stemmer: frostem::Stemmer,
}

impl<T: TokenStream> TokenStream for MemoStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        stem_into(&self.stemmer, &mut self.tail.token_mut().text);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{Language, SimpleTokenizer, Stemmer, TextAnalyzer};

    use super::*;

    fn run(mut analyzer: TextAnalyzer, text: &str) -> Vec<String> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn stems_exactly_as_tantivys_stemmer_twice_over() {
        let text = "running runs ran easily fairly cookies cookie expired expiring generously \
                    the caresses ponies ties caress cats feed agreed plastered motoring sing";
        let theirs = run(
            TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
            text,
        );
        for _ in 0..2 {
            let ours = run(
                TextAnalyzer::builder(SimpleTokenizer::default()).filter(MemoStemmer).build(),
                text,
            );
            assert_eq!(ours, theirs);
        }
    }
}
