//! The form of a question, beyond its words: whether it asks for several things ("what pets
//! does Nate have?", "which cities has Jon visited?", "how many times…", "what decisions did
//! we make about auth?"). Such a question's answers are spread over many episodes, so recall
//! lifts whole episodes less for it (see docs/ranking.md, "Questions that ask for several
//! things").

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
pub(crate) const AUXILIARIES: [&str; 17] = [
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

#[cfg(test)]
mod tests {
    use super::asks_for_several;

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
