//! What a memory's text might cite, before the repository is asked: path-like words and
//! symbol-like words, each with the sentence it stands in. Pure: nothing here reads a file.
//!
//! A candidate is not yet a citation: `mod.rs` keeps a path only when the work tree or git's
//! history knows it, and a symbol only when the repository defines it. The rules here decide
//! what is worth asking about, and they lean to asking less (a false "stale" teaches users to
//! ignore the flag):
//! - a path is a word with a `/` between two names, or a name with an extension that starts
//!   with a letter (`auth.py`, not `1.2`); quotes, brackets and trailing `.,;:)` are stripped,
//!   and so are `:LINE[:COL]` and `#L12`; URLs and flags (`-x`, `--all`) are never paths; one
//!   that starts with `/` or `~`, or climbs out with `..`, is reported as outside;
//! - a symbol is a call (`issue_session()`), a qualified name (`AuthService.refresh`,
//!   `walk::Builder`: in backticks, or anywhere with `::` or a capitalised qualifier), or, in
//!   backticks, a capitalised (`AuthService`), UPPER_CASE (`MAX_RETRIES`) or joined
//!   (`make_context`, `parseArgs`) word. A plain lowercase word in backticks (`pnpm`) is never
//!   one.

/// The longest candidate word considered: longer ones are not names anyone types.
const MAX_WORD: usize = 200;

/// How many candidates of each kind one memory may give: a huge memory costs a bounded check.
pub const MAX_CANDIDATES: usize = 64;

/// A path-like word of a memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathWord {
    /// As written, cleaned (no `./`, no `:LINE`).
    pub text: String,
    /// The sentence it stands in (its number in the text).
    pub sentence: usize,
}

/// A symbol-like word of a memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolWord {
    /// The name looked up: the last part of a qualified name.
    pub name: String,
    /// As written, qualified (`AuthService.refresh`), without the call's parentheses.
    pub shown: String,
    /// The sentence it stands in.
    pub sentence: usize,
}

/// What a memory's text might cite.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    /// Path-like words, each once, in order of appearance.
    pub paths: Vec<PathWord>,
    /// Symbol-like words, each name once, in order of appearance.
    pub symbols: Vec<SymbolWord>,
    /// Paths that lead outside the repository (absolute, `~`, or climbing out with `..`):
    /// never stat-ed nor read, only reported.
    pub outside: Vec<String>,
}

/// The candidates of `text` (a memory's title and body).
pub fn candidates(text: &str) -> Candidates {
    let mut out = Candidates::default();
    for (sentence, part) in sentences(text).enumerate() {
        for (i, span) in part.split('`').enumerate() {
            scan_span(span, i % 2 == 1, sentence, &mut out);
        }
    }
    out
}

/// The sentences of `text`: split at line breaks and at `. `, `! `, `? ` (a path's dot is
/// followed by a letter, never by a space).
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').flat_map(|line| line.split_inclusive(". ").flat_map(|s| s.split(['!', '?'])))
}

/// Adds the candidates of one run of text, in backticks or not.
fn scan_span(span: &str, in_code: bool, sentence: usize, out: &mut Candidates) {
    for raw in span.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '|'))
    {
        if raw.len() > MAX_WORD || raw.is_empty() {
            continue;
        }
        let converted = windows_path(trim_word(raw));
        let word = converted.as_deref().unwrap_or_else(|| trim_word(raw));
        if word.is_empty() || is_url(word) || word.starts_with('-') || word.contains('=') {
            continue;
        }
        if let Some(call) = call_name(word) {
            push_symbol(out, call, sentence);
            continue;
        }
        if let Some(outside) = leads_outside(word) {
            if out.outside.len() < MAX_CANDIDATES && !out.outside.iter().any(|o| o == outside) {
                out.outside.push(outside.to_string());
            }
            continue;
        }
        if word.starts_with('/') {
            continue; // a route (`/api/login`), not a file of the repository
        }
        let path = clean_path(word);
        let qualified = qualified_name(word, in_code);
        if let Some(path) = path.filter(|p| is_path_like(p)) {
            if out.paths.len() < MAX_CANDIDATES && !out.paths.iter().any(|p| p.text == path) {
                out.paths.push(PathWord { text: path.to_string(), sentence });
            }
            // `AuthService.refresh` reads as a path too; the repository decides which it is.
            if let Some(q) = qualified {
                push_symbol(out, q, sentence);
            }
            continue;
        }
        if let Some(q) = qualified {
            push_symbol(out, q, sentence);
        } else if in_code && is_named_word(word) {
            push_symbol(out, word, sentence);
        }
    }
}

fn push_symbol(out: &mut Candidates, shown: &str, sentence: usize) {
    let name = shown.rsplit(['.', ':']).next().unwrap_or(shown);
    if name.len() < 3 || out.symbols.len() >= MAX_CANDIDATES {
        return;
    }
    if !out.symbols.iter().any(|s| s.name == name) {
        out.symbols.push(SymbolWord { name: name.to_string(), shown: shown.to_string(), sentence });
    }
}

/// A word without the quotes, brackets and punctuation around it. Underscores around a word
/// (`_word_`, `__word__`: Markdown emphasis) go; a name's own leading underscores stay
/// (`_get_session()`, `__init__.py`).
fn trim_word(raw: &str) -> &str {
    let mut word = raw.trim_start_matches(['(', '[', '{', '*', ',']);
    let word = loop {
        let trimmed = word.trim_end_matches(['.', ',', ';', ':', ']', '}', '*', '!', '?']);
        let opened = trimmed.matches('(').count();
        match trimmed.strip_suffix(')') {
            // A closing bracket with no opening one in the word is the prose's.
            Some(inner) if trimmed.matches(')').count() > opened => word = inner,
            _ => break trimmed,
        }
    };
    let leading = word.len() - word.trim_start_matches('_').len();
    let trailing = word.len() - word.trim_end_matches('_').len();
    if leading > 0 && leading == trailing && word.len() > 2 * leading {
        &word[leading..word.len() - trailing]
    } else {
        word
    }
}

/// A relative path written with Windows separators (`src\auth.py`) as the repository names it
/// (`src/auth.py`): only parts of path characters, the last a file name with an extension (so
/// an escape such as `\n` or `foo\_bar` is left alone).
fn windows_path(word: &str) -> Option<String> {
    if !word.contains('\\') || word.contains('/') || word.starts_with('\\') {
        return None;
    }
    let path = word.replace('\\', "/");
    let file = path.rsplit('/').next()?;
    let named = file.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && ext.starts_with(|c: char| c.is_ascii_alphabetic())
    });
    (named && path.chars().all(path_char) && is_path_like(&path)).then_some(path)
}

fn is_url(word: &str) -> bool {
    word.contains("://") || word.starts_with("www.") || word.starts_with("mailto:")
}

/// The name of a call written as `name(...)`: `issue_session()`, `auth.refresh(user)`.
fn call_name(word: &str) -> Option<&str> {
    let open = word.find('(')?;
    let name = &word[..open];
    (!name.is_empty() && is_qualified_identifier(name) && word[open..].contains(')'))
        .then_some(name)
}

/// A qualified name (`A.b`, `a::B`): in backticks any, elsewhere only with `::` or a
/// capitalised qualifier (so prose such as `e.g` is not one).
fn qualified_name(word: &str, in_code: bool) -> Option<&str> {
    let word = word.strip_suffix("()").unwrap_or(word);
    if !is_qualified_identifier(word) || !(word.contains('.') || word.contains("::")) {
        return None;
    }
    let capitalised = word.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    (in_code || word.contains("::") || capitalised).then_some(word)
}

/// Identifiers joined by `.` or `::`.
fn is_qualified_identifier(word: &str) -> bool {
    word.split("::").all(|part| part.split('.').all(is_identifier))
}

fn is_identifier(part: &str) -> bool {
    let mut chars = part.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A word in backticks that can only be a name: capitalised (`AuthService`), UPPER_CASE
/// (`MAX_RETRIES`), or a lowercase word joined as names are (`make_context`, `parseArgs`),
/// never a plain lowercase word (`pnpm`, `retry`).
fn is_named_word(word: &str) -> bool {
    let joined =
        |w: &str| w.trim_start_matches('_').contains('_') || w.contains(char::is_uppercase);
    is_identifier(word)
        && word.len() >= 3
        && (word.starts_with(|c: char| c.is_ascii_uppercase()) || joined(word))
}

/// The folders at the top of a file system that an absolute path of a memory names when it
/// means a file (`/etc/passwd`), not a route of an API (`/api/login`).
const SYSTEM_FOLDERS: &[&str] = &[
    "etc", "usr", "home", "root", "tmp", "var", "opt", "dev", "proc", "sys", "bin", "sbin", "lib",
    "lib64", "boot", "mnt", "media", "srv", "run", "snap", "nix", "Users", "Library", "private",
    "Volumes", "System",
];

/// The path a word leads to outside the repository, if it does: an absolute path under a
/// system folder, one from home, or one climbing above the top with `..`. Any other absolute
/// word (`/api/login`, a route) is not a path of the repository and is left out.
fn leads_outside(word: &str) -> Option<&str> {
    let path = strip_line(word);
    if !path.contains('/') || !path.chars().all(path_char) {
        return None;
    }
    if let Some(absolute) = path.strip_prefix('/') {
        let top = absolute.split('/').next().unwrap_or("");
        return SYSTEM_FOLDERS.contains(&top).then_some(path);
    }
    if path.starts_with("~/") {
        return Some(path);
    }
    let mut depth: i32 = 0;
    for part in path.split('/') {
        match part {
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
        if depth < 0 {
            return Some(path);
        }
    }
    None
}

/// A path word cleaned: `./` and `:LINE[:COL]` or `#L12` taken off; `None` when it has
/// characters no tracked path of ours would (so no glob or shell character reaches git).
fn clean_path(word: &str) -> Option<&str> {
    let path = strip_line(word);
    let path = path.trim_start_matches("./").trim_end_matches('/');
    (!path.is_empty() && path.chars().all(path_char)).then_some(path)
}

fn strip_line(word: &str) -> &str {
    let word = match word.rfind("#L") {
        Some(at) if word[at + 2..].chars().all(|c| c.is_ascii_digit() || c == '-' || c == 'L') => {
            &word[..at]
        }
        _ => word,
    };
    let mut path = word;
    for _ in 0..2 {
        match path.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) => {
                path = head;
            }
            _ => break,
        }
    }
    path
}

fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@' | '+' | '~')
}

/// A path: names joined by `/` (`src/auth.py`, `scripts/seed`), or one name with an
/// extension that starts with a letter (`auth.py`, `Makefile.am`).
fn is_path_like(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || *p == ".." || *p == ".") {
        return false;
    }
    if parts.len() > 1 {
        return parts.iter().all(|p| p.chars().any(|c| c.is_ascii_alphanumeric()));
    }
    match path.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && !stem.ends_with('.')
                && ext.len() <= 10
                && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<String> {
        candidates(text).paths.into_iter().map(|p| p.text).collect()
    }

    fn symbols(text: &str) -> Vec<String> {
        candidates(text).symbols.into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn paths_are_cleaned_of_punctuation_lines_and_dots() {
        assert_eq!(
            paths("See src/auth.py, (backend/app/routes/login.py:42) and ./scripts/seed.sh."),
            ["src/auth.py", "backend/app/routes/login.py", "scripts/seed.sh"]
        );
        assert_eq!(paths("the retry logic lives in `worker/retry.ts`;"), ["worker/retry.ts"]);
        assert_eq!(paths("line src/a.rs:10:4 and src/b.rs#L3-L9"), ["src/a.rs", "src/b.rs"]);
        assert_eq!(paths("edit auth.py then"), ["auth.py"]);
    }

    #[test]
    fn urls_flags_versions_and_commands_are_not_paths() {
        let text = "Run `cargo test --all -p mem` with `RUST_LOG=debug`; docs at \
                    https://example.org/a/b.html and www.example.org; version 1.2.3; `pnpm`";
        let found = candidates(text);
        assert_eq!(found.paths, []);
        assert_eq!(found.outside, Vec::<String>::new());
        assert_eq!(symbols(text), Vec::<String>::new());
    }

    #[test]
    fn paths_out_of_the_repository_are_reported_not_kept() {
        let found = candidates("read ../../etc/passwd and /etc/shadow and ~/.ssh/id_rsa");
        assert_eq!(found.paths, []);
        assert_eq!(found.outside, ["../../etc/passwd", "/etc/shadow", "~/.ssh/id_rsa"]);
        assert_eq!(candidates("src/../lib.rs").outside, Vec::<String>::new());
        // Routes of an API are neither paths of the repository nor outside it.
        let routes = candidates("POST /api/auth/refresh, then GET /login and / and /trace.zip");
        assert_eq!((routes.paths, routes.outside), (vec![], Vec::<String>::new()));
    }

    #[test]
    fn symbols_are_calls_qualified_names_and_capitalised_words_in_backticks() {
        assert_eq!(symbols("set by issue_session() in auth"), ["issue_session"]);
        assert_eq!(
            symbols("use `AuthService.refresh` and `walk::Builder`"),
            ["refresh", "Builder"]
        );
        assert_eq!(symbols("the `AuthService` and `MAX_RETRIES`"), ["AuthService", "MAX_RETRIES"]);
        // Plain lowercase words, prose abbreviations and capitalised prose are not symbols;
        // lowercase words joined as names are (the repository decides whether they count).
        assert_eq!(symbols("use `pnpm` e.g. with Session and `retry`"), Vec::<String>::new());
        assert_eq!(
            symbols("use `serde_json`, `make_context`, `parseArgs` and `_private`"),
            ["serde_json", "make_context", "parseArgs"]
        );
        assert_eq!(symbols("calls AuthService.refresh on expiry"), ["refresh"]);
    }

    /// Issue #55, item 1: a leading `_` was stripped from every word, so `_get_session()` was
    /// looked up as `get_session()`. Only underscores on both sides (emphasis) go.
    #[test]
    fn a_name_keeps_its_leading_underscore_and_emphasis_goes() {
        assert_eq!(symbols("the pool comes from _get_session() in app/db.py"), ["_get_session"]);
        assert_eq!(symbols("see `__init__()` and `_Private.load`"), ["__init__", "load"]);
        assert_eq!(
            paths("the exports of __init__.py and _config.yml"),
            ["__init__.py", "_config.yml"]
        );
        assert_eq!(
            paths("_src/auth.py_ (emphasis) and __docs/a.md__"),
            ["src/auth.py", "docs/a.md"]
        );
        assert_eq!(symbols("_issue_session()_ sets it"), ["issue_session"]);
    }

    /// Issue #55, item 6: paths written with Windows separators were never checked.
    #[test]
    fn windows_separators_are_read_as_the_repository_s() {
        assert_eq!(
            paths("see src\\auth\\login.py and `app\\db.py`"),
            ["src/auth/login.py", "app/db.py"]
        );
        // Escapes and prose backslashes are not paths.
        assert_eq!(paths("match \\d+ and \\n, or foo\\_bar and C:\\Users"), Vec::<String>::new());
    }

    #[test]
    fn symbols_carry_their_sentence_to_pair_with_a_path() {
        let found = candidates("Cookies: src/auth.py by issue_session(). Other: run()\nnext");
        assert_eq!(found.paths[0].sentence, found.symbols[0].sentence);
        assert_ne!(found.symbols[0].sentence, found.symbols[1].sentence);
    }

    #[test]
    fn a_huge_memory_gives_a_bounded_number_of_candidates() {
        let text: String = (0..10_000).map(|i| format!("src/f{i}.rs f{i}() ")).collect();
        let found = candidates(&text);
        assert_eq!(found.paths.len(), MAX_CANDIDATES);
        assert_eq!(found.symbols.len(), MAX_CANDIDATES);
    }
}
