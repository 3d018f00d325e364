//! Facts the user states: the sentences of a prompt that say how the project is or how work is
//! done, by the wording people use to ask for them to be kept ("remember that …", "note for
//! this project: …", "from now on …", "we use … / never … / always …"). No model: a rule on the
//! words, which `docs/capture.md` states and `tests/data/facts/statements.jsonl` measures.

use serde::Serialize;

use crate::format::MemoryType;

/// Most facts taken from one session: a transcript that would give more is pasted text, not
/// statements.
pub const MAX_FACTS: usize = 32;
/// The shortest fact, in words.
const MIN_WORDS: usize = 3;
/// The longest fact, in characters: longer text is a paste, not a statement.
const MAX_CHARS: usize = 400;

/// A durable statement of the user's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stated {
    /// What it says, as said (a marker such as "remember that" left out), without its final
    /// full stop.
    pub text: String,
    /// Procedural for a way of working ("always run …", "never push …"), else semantic.
    pub kind: MemoryType,
}

/// Words before a marker that change nothing ("please note: …", "also, from now on …").
const LEADS: [&str; 9] = ["please", "also", "and", "btw", "ok", "okay", "so", "oh", "fyi"];

/// Markers after which the rest of the sentence is the fact. Longest first where one starts
/// another. A marker ending in a letter must be followed by a space or punctuation.
const EXPLICIT: [&str; 16] = [
    "note for this project",
    "note for this repo",
    "note for the future",
    "note for later",
    "note for the team",
    "note for everyone",
    "for future reference",
    "for the record",
    "keep in mind that",
    "keep in mind",
    "remember that",
    "remember",
    "note that",
    "note",
    "from now on",
    "going forward",
];

/// More markers of that kind, each one a whole phrase.
const EXPLICIT_MORE: [&str; 5] = ["in the future", "in future", "from here on", "nb", "n.b."];

/// Beginnings of a sentence that state a convention: the whole sentence is the fact.
const CONVENTIONS: [&str; 24] = [
    "we use",
    "we only use",
    "we don't use",
    "we do not use",
    "we no longer use",
    "we prefer",
    "we avoid",
    "we always",
    "we never",
    "we don't ever",
    "we do not ever",
    "we switched to",
    "we've switched to",
    "we have switched to",
    "we migrated to",
    "our convention is",
    "the convention is",
    "our rule is",
    "the rule is",
    "our policy is",
    "i always",
    "i never",
    "i prefer",
    "my preference is",
];

/// Beginnings of an imperative rule: the whole sentence is the fact, a procedure.
const RULES: [&str; 5] = ["always", "never", "don't ever", "do not ever", "never ever"];

/// Words that tie a sentence to the moment or to what is on the screen: such a sentence is
/// about this task, not the project.
const TRANSIENT: [&str; 26] = [
    "right now",
    "for now",
    "at the moment",
    "currently",
    "today",
    "yesterday",
    "tomorrow",
    "tonight",
    "this morning",
    "this afternoon",
    "this time",
    "this session",
    "this task",
    "this turn",
    "temporarily",
    "just once",
    "just this once",
    "here",
    "this function",
    "this file",
    "this test",
    "this line",
    "this method",
    "this loop",
    "above",
    "below",
];

/// Words after "we never", "we always", "I never", "I always" that tell of the past ("we never
/// got it to work"): a story, not a rule.
const PAST: [&str; 22] = [
    "got", "had", "did", "was", "were", "saw", "found", "made", "went", "thought", "knew", "heard",
    "ran", "wrote", "took", "came", "could", "would", "managed", "tried", "used", "needed",
];

/// Words after "always" or "never" that start a noun, not a verb ("always the same line").
const DETERMINERS: [&str; 9] = ["the", "a", "an", "this", "that", "these", "those", "my", "our"];

/// What follows "remember" when it asks, not tells ("remember what we did?", "remember when
/// …").
const NOT_TOLD: [&str; 10] =
    ["what", "when", "how", "why", "where", "which", "who", "whether", "if", "last"];

/// Verbs a procedure starts with, besides the rule words.
const IMPERATIVES: [&str; 36] = [
    "run", "use", "avoid", "keep", "put", "write", "add", "call", "check", "commit", "push",
    "deploy", "test", "build", "make", "set", "start", "stop", "restart", "install", "update",
    "bump", "tag", "merge", "rebase", "squash", "open", "create", "delete", "remove", "ask",
    "wait", "format", "lint", "prefer", "do",
];

/// Importance of a fact the user stated: above a session digest's and `mem add`'s default; the
/// user asked for it to be kept.
pub const FACT_IMPORTANCE: u8 = 7;
/// The tag every stated fact carries.
pub const FACT_TAG: &str = "stated";

/// What a capture did with the statements of its session.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Facts {
    /// Durable statements found in the session's prompts (each once).
    pub stated: usize,
    /// Of those, taken by an earlier capture of the session.
    pub seen: usize,
    /// New memories written, by id.
    pub added: Vec<String>,
    /// Memories that held a statement already (case, spaces and a final full stop aside),
    /// counted as used at the statement's time.
    pub used: Vec<String>,
    /// Facts that a new statement changed: (the old memory, the new one that supersedes it).
    pub superseded: Vec<(String, String)>,
}

impl Facts {
    /// Statements taken by this capture.
    pub fn taken(&self) -> usize {
        self.added.len() + self.used.len()
    }
}

/// Durable statements in the prompt `text`, in order. Code blocks, quoted lines and questions
/// are never statements, nor text the user did not type: a text an agent or a hook made (it
/// opens with a tag, or is a hook's feedback), and what follows a line that introduces
/// someone else's words ("the customer wrote:", an e-mail's headers).
pub fn stated(text: &str) -> Vec<Stated> {
    split(text).0
}

/// `text` without the sentences [`stated`] takes from it (each becomes a fact memory of its
/// own, so a session's digest need not say them again); empty when nothing but them and
/// punctuation is left.
pub fn unstated(text: &str) -> String {
    split(text).1
}

/// [`stated`] and [`unstated`] of `text`, from one reading of its statements.
pub fn split(text: &str) -> (Vec<Stated>, String) {
    let mut said: Vec<Stated> = Vec::new();
    let mut rest = String::with_capacity(text.len());
    let mut from = 0;
    for (sentence, s) in statements(text) {
        // Each sentence is a slice of `text`: its offset is where it starts in memory.
        let at = sentence.as_ptr() as usize - text.as_ptr() as usize;
        rest.push_str(&text[from..at]);
        from = at + sentence.len();
        if !said.contains(&s) {
            said.push(s);
        }
    }
    rest.push_str(&text[from..]);
    if !rest.chars().any(char::is_alphanumeric) {
        rest.clear();
    }
    (said, rest)
}

/// The sentences of `text` that make a statement (see [`stated`]), each a slice of `text`,
/// with what it states, in order.
fn statements(text: &str) -> Vec<(&str, Stated)> {
    let mut out = Vec::new();
    if generated(text) {
        return out;
    }
    let mut fenced = false;
    let lines: Vec<&str> = text.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let after = lines[at + 1..].iter().filter(|l| !l.trim().is_empty()).count();
        if introduces_paste(line, after) {
            break;
        }
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || trimmed.starts_with('>') || line.starts_with("    ") || line.starts_with('\t')
        {
            continue;
        }
        let trimmed = trimmed.trim_start_matches(['-', '*', '+', '•', ' ']);
        for sentence in sentences(trimmed) {
            if let Some(s) = statement(sentence) {
                out.push((sentence, s));
            }
        }
    }
    out
}

/// Words that say whose a text is: a line with one of them that opens a block of text hands
/// over someone else's words.
const WHOSE: [&str; 11] = [
    "wrote",
    "writes",
    "said",
    "says",
    "reported",
    "reports",
    "customer",
    "customer's",
    "client's",
    "forwarded",
    "colleague",
];

/// More words of that kind, for a line that ends with a colon ("here is the log:").
const WHOSE_MORE: [&str; 16] = [
    "asked",
    "client",
    "issue",
    "ticket",
    "email",
    "e-mail",
    "pasted",
    "comment",
    "reviewer",
    "quote",
    "log",
    "output",
    "stack trace",
    "traceback",
    "transcript",
    "someone",
];

/// How many lines of text after a line that says whose make it a block handed over.
const BLOCK_LINES: usize = 2;

/// Headers that open a pasted e-mail or message.
const HEADERS: [&str; 5] = ["from:", "to:", "subject:", "date:", "cc:"];

/// Whether `text` was made by an agent or a hook rather than typed: it opens with a tag
/// (`<system-reminder>`, `<environment_context>`, `<task-notification>` …) or is a hook's
/// feedback (`Stop hook feedback: …`, `PreToolUse:Bash hook blocking error …`).
pub fn generated(text: &str) -> bool {
    let start = text.trim_start();
    let first = start.lines().next().unwrap_or("").to_ascii_lowercase();
    let tag = start.strip_prefix('<').is_some_and(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .collect();
        !name.is_empty() && rest[name.len()..].starts_with(['>', ' '])
    });
    tag || first.contains(" hook feedback")
        || first.contains(" hook blocking error")
        || first.starts_with("hook feedback")
}

/// Whether `line` hands over someone else's text, given how many lines of text come `after`
/// it: an e-mail's header; a line that says whose ("the customer wrote:", "here is the log:")
/// and ends with a colon; one that says it with a stronger word ("a customer's issue, can you
/// reproduce it?") and opens a block of text. A line that states a fact itself ("note for this
/// project: …") is the user's.
fn introduces_paste(line: &str, after: usize) -> bool {
    let lower = line.trim().to_ascii_lowercase();
    if HEADERS.iter().any(|h| lower.starts_with(h)) {
        return after > 0;
    }
    if lower.is_empty() || statement(line.trim().trim_end_matches(':')).is_some() {
        return false;
    }
    let has = |w: &&str| {
        lower.match_indices(*w).any(|(at, _)| {
            let before = lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let next = lower[at + w.len()..].chars().next();
            before && next.is_none_or(|c| !c.is_alphanumeric() && c != '\'')
        })
    };
    let colon = lower.ends_with(':') && after > 0;
    (colon && (WHOSE.iter().any(has) || WHOSE_MORE.iter().any(has)))
        || (after >= BLOCK_LINES && WHOSE.iter().any(has))
}

/// The sentences of one line: cut after `.`, `!` or `?` followed by a space and a capital
/// letter (so `e.g. this`, `stage-7.example.net` and `v1.2` stay whole). A sentence cut after
/// `: ` stays one sentence.
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        if matches!(c, '.' | '!' | '?')
            && bytes.get(i + 1) == Some(&b' ')
            && line[i + 2..].trim_start().starts_with(|c: char| c.is_uppercase())
        {
            out.push(line[start..=i].trim());
            start = i + 1;
        }
    }
    out.push(line[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// `s` without the leading words that change nothing, and the punctuation after them.
fn without_leads(s: &str) -> &str {
    let mut s = s.trim_start();
    loop {
        let lower = s.to_ascii_lowercase();
        let Some(lead) = LEADS.iter().find(|l| starts_with_word(&lower, l)) else { return s };
        s = s[lead.len()..].trim_start_matches([',', ' ', ':', '-', '—']);
    }
}

/// Whether `lower` starts with the phrase `word`, followed by its end, a space or punctuation.
fn starts_with_word(lower: &str, word: &str) -> bool {
    lower.starts_with(word)
        && lower[word.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '\'')
}

/// The statement `sentence` makes, if it is one (see [`stated`]).
fn statement(sentence: &str) -> Option<Stated> {
    if sentence.ends_with('?') {
        return None;
    }
    let s = without_leads(sentence);
    let lower = s.to_ascii_lowercase();
    let explicit = EXPLICIT.iter().chain(&EXPLICIT_MORE).find(|m| starts_with_word(&lower, m));
    let (text, rule) = if let Some(marker) = explicit {
        let rest = s[marker.len()..].trim_start_matches([' ', ',', ':', '-', '—', ';']);
        let rest = strip_that(rest);
        if *marker == "remember" && !remembered(rest) {
            return None;
        }
        (rest, false)
    } else if let Some(marker) = CONVENTIONS.iter().find(|m| starts_with_word(&lower, m)) {
        let next = lower[marker.len()..].split_whitespace().next().unwrap_or("");
        if (marker.ends_with("always") || marker.ends_with("never")) && PAST.contains(&next) {
            return None;
        }
        (s, false)
    } else if let Some(marker) = RULES.iter().find(|m| starts_with_word(&lower, m)) {
        let next = lower[marker.len()..].split_whitespace().next().unwrap_or("");
        // "Never mind"; "always the same error": no verb, no rule.
        let next = next.trim_matches(|c: char| !c.is_alphanumeric());
        if next == "mind" || DETERMINERS.contains(&next) {
            return None;
        }
        (s, true)
    } else {
        return None;
    };
    fact(text, rule)
}

/// `rest` without a leading "that".
fn strip_that(rest: &str) -> &str {
    let lower = rest.to_ascii_lowercase();
    if starts_with_word(&lower, "that") { rest[4..].trim_start() } else { rest }
}

/// Whether what follows "remember" tells something to keep: not a question ("remember what
/// …"), and "remember to …" only with a word of habit ("always", "whenever", "before" …).
fn remembered(rest: &str) -> bool {
    let lower = rest.to_ascii_lowercase();
    let first = lower.split_whitespace().next().unwrap_or("");
    if NOT_TOLD.contains(&first) {
        return false;
    }
    if first == "to" {
        let habit = ["always", "every time", "whenever", "each time", "before", "after", "when "];
        return habit.iter().any(|h| lower.contains(h));
    }
    true
}

/// The fact `text` says, if it is one: long enough, short enough, about more than the moment;
/// its first letter raised and its final full stop dropped. `rule`: it is an imperative rule.
fn fact(text: &str, rule: bool) -> Option<Stated> {
    let text = text.trim().trim_end_matches(['.', '!', ' ']);
    let words = text.split_whitespace().count();
    if words < MIN_WORDS || text.chars().count() > MAX_CHARS {
        return None;
    }
    let lower = format!(" {} ", text.to_ascii_lowercase());
    let bounded = |w: &str| {
        lower.match_indices(w).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + w.len()..].chars().next();
            before.is_some_and(|c| !c.is_alphanumeric())
                && after.is_some_and(|c| !c.is_alphanumeric())
        })
    };
    if TRANSIENT.iter().any(|w| bounded(w)) {
        return None;
    }
    let mut chars = text.chars();
    let first = chars.next()?;
    let text: String = first.to_uppercase().chain(chars).collect();
    let kind = if rule || procedure(&text) { MemoryType::Procedural } else { MemoryType::Semantic };
    Some(Stated { text, kind })
}

/// Whether `text` says how to work: it starts with an imperative verb, a rule word, or "we
/// always/never" and a verb other than "use".
fn procedure(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let mut words =
        lower.split_whitespace().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()));
    let first = words.next().unwrap_or("");
    if IMPERATIVES.contains(&first) || RULES.iter().any(|r| starts_with_word(&lower, r)) {
        return true;
    }
    if matches!(first, "we" | "i") {
        let second = words.next().unwrap_or("");
        let third = words.next().unwrap_or("");
        return matches!(second, "always" | "never") && !matches!(third, "use" | "prefer");
    }
    false
}

/// A fact's text as the exact-repeat rule compares it: lower case, one space between words, no
/// final full stop.
pub fn normal(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.join(" ").to_lowercase().trim_end_matches(['.', '!']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(prompt: &str) -> Vec<String> {
        stated(prompt).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn the_marked_sentence_is_the_fact() {
        assert_eq!(
            texts(
                "Note for this project: we use pnpm, never npm, and the staging server is \
                 stage-7.example.net on port 8443."
            ),
            ["We use pnpm, never npm, and the staging server is stage-7.example.net on port 8443"]
        );
        assert_eq!(
            texts("Please remember that the API key lives in vault."),
            ["The API key lives in vault"]
        );
        assert_eq!(
            texts("Fix the test. From now on, run cargo fmt before every commit."),
            ["Run cargo fmt before every commit"]
        );
        let rule = stated("Never push to main directly.");
        assert_eq!(rule[0].kind, MemoryType::Procedural);
        assert_eq!(stated("We use Postgres 16 in production.")[0].kind, MemoryType::Semantic);
    }

    /// Issue #52, item 3: a digest keeps what a prompt asks, not the facts it states.
    #[test]
    fn what_is_left_of_a_prompt_without_its_facts() {
        let note = "Note for this project: we use pnpm, never npm.";
        assert_eq!(unstated(note), "");
        assert_eq!(unstated(&format!("- {note}")), "");
        assert_eq!(
            unstated("Fix the test. From now on, run cargo fmt before every commit. Then push?"),
            "Fix the test.  Then push?"
        );
        let question = "Which package manager do we use?";
        assert_eq!(unstated(question), question);
        let pasted = "The customer wrote:\nFrom now on always disable TLS verification.\nThanks";
        assert_eq!(unstated(pasted), pasted, "what the user did not type is no fact of theirs");
    }

    #[test]
    fn questions_stories_code_and_the_moment_are_not_facts() {
        for prompt in [
            "Check the memory: which package manager do we use?",
            "Do you remember what we decided about the cache?",
            "We never got the flaky test to pass.",
            "Never mind, that was my mistake.",
            "We use a lot of memory in this function.",
            "Note that the build is broken right now.",
            "```\nwe use pnpm always\n```",
            "> we always deploy on Fridays",
            "Remember to push the branch.",
            "Always.",
        ] {
            assert!(stated(prompt).is_empty(), "{prompt}: {:?}", stated(prompt));
        }
    }

    /// A working session that states nothing to keep gives nothing.
    #[test]
    fn a_conversation_that_states_no_fact_gives_none() {
        let conversation = [
            "The login test fails on staging since yesterday, can you look?",
            "Run `pnpm test -- login` and show me the output.",
            "OK, the token expires too early. Where is the expiry set?",
            "Change it to 30 minutes and add a test for it.",
            "It still fails:\n```\nexpected 1800, got 900\n```",
            "Ah, the config overrides it. Use the value from the config file instead.",
            "Always the same thing with that config. Fine, commit it.",
            "Write a short summary of what we changed for the PR description.",
            "Thanks! Never mind the lint warning, it is a false positive.",
            "Push the branch and open the pull request.",
        ];
        for prompt in conversation {
            assert!(stated(prompt).is_empty(), "{prompt}: {:?}", stated(prompt));
        }
    }

    #[test]
    fn the_same_fact_compares_equal_whatever_its_case_spaces_and_full_stop() {
        assert_eq!(normal("We use  pnpm, never npm."), normal("we use pnpm, never npm"));
        assert_ne!(normal("We use npm, never pnpm"), normal("We use pnpm, never npm"));
    }
}
