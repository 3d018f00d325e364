//! Whether a line of code defines a name, reads it from the environment, or only uses it: the
//! simple per-language patterns by which a symbol-like word of a memory counts as a citation.
//!
//! A definition is the name right after a defining keyword (`def`, `class`, `fn`, `struct`,
//! `enum`, `trait`, `type`, `interface`, `func`, `function`, `const`, `static`, `let`, `var`,
//! ... and a Go method's receiver), a method header (`refresh(user) {`, `async refresh():`),
//! an assignment at the start of a line (`MAX_RETRIES = 3`), or a C-family header whose words
//! before the name are types (`public void refresh(User u) {`).

/// Keywords after which a name is defined.
const DEFINING: &[&str] = &[
    "def",
    "class",
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "interface",
    "module",
    "func",
    "function",
    "const",
    "static",
    "let",
    "var",
    "val",
    "fun",
    "object",
    "record",
    "union",
    "typedef",
    "macro_rules!",
    "defn",
    "defmacro",
    "alias",
    "namespace",
];

/// Words that start a statement, not a declaration: `return refresh(u)` uses the name.
const STATEMENT: &[&str] = &[
    "return", "if", "else", "elif", "while", "for", "switch", "case", "match", "new", "throw",
    "await", "yield", "assert", "print", "echo", "not", "and", "or", "in", "is", "delete",
    "typeof", "sizeof", "goto", "do", "try", "catch", "raise", "from", "import", "use", "with",
    "when", "unless", "until", "then", "puts", "call", "go", "defer", "lambda",
];

/// Modifiers that may precede a method's name.
const MODIFIERS: &[&str] = &[
    "export",
    "default",
    "async",
    "static",
    "public",
    "private",
    "protected",
    "pub",
    "override",
    "virtual",
    "final",
    "abstract",
    "inline",
    "extern",
    "unsafe",
    "get",
    "set",
    "internal",
    "open",
    "suspend",
    "readonly",
];

/// Text that reads a variable from the environment on the same line as its name (a lookup by a
/// quoted name, as Rust's and most languages' are, is found by the quotes).
const ENV_READS: &[&str] = &[
    "environ",
    "getenv",
    "env!(",
    "process.env",
    "ENV[",
    "ENV.fetch",
    "Getenv",
    "LookupEnv",
    "System.getenv",
    "Environment.GetEnvironmentVariable",
];

/// Whether `line` defines `name`.
pub(super) fn defines(line: &str, name: &str) -> bool {
    occurrences(line, name).any(|at| {
        let before = &line[..at];
        let after = &line[at + name.len()..];
        keyword_before(before)
            || method_header(before, after)
            || top_assignment(before, after)
            || typed_header(before, after)
    })
}

/// Whether `line` reads the variable `name` from the environment (or names it as a string,
/// as environment lookups do).
pub(super) fn reads_env(line: &str, name: &str) -> bool {
    let quoted = ["\"", "'"].iter().any(|q| line.contains(&format!("{q}{name}{q}")));
    let shell = line.contains(&format!("${name}")) || line.contains(&format!("${{{name}"));
    quoted || shell || ENV_READS.iter().any(|read| line.contains(read))
}

/// Whether `line` holds `name` as a whole word.
pub(super) fn mentions(line: &str, name: &str) -> bool {
    occurrences(line, name).next().is_some()
}

/// The byte offsets where `name` stands as a whole word in `line`.
fn occurrences<'a>(line: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(name).map(|(at, _)| at).filter(move |&at| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// `def name`, `pub fn name`, `func (r *T) name`, `class name`, `const name`, `*name` after
/// a keyword (a C pointer).
fn keyword_before(before: &str) -> bool {
    let trimmed = before.trim_end().trim_end_matches(['*', '&']).trim_end();
    if trimmed.ends_with(')') && trimmed.trim_start().starts_with("func") {
        return true;
    }
    let last = trimmed.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    DEFINING.contains(&last)
}

/// `  async refresh(user) {`, `refresh(self, x):`, `refresh(a: T): R {`: modifiers only
/// before the name, a parameter list and an opening brace, arrow or colon after it.
fn method_header(before: &str, after: &str) -> bool {
    if !before.split_whitespace().all(|w| MODIFIERS.contains(&w)) {
        return false;
    }
    let Some(rest) = after.trim_start().strip_prefix('(') else { return false };
    let Some(close) = rest.rfind(')') else { return false };
    let tail = rest[close + 1..].trim();
    tail.ends_with('{') || tail.starts_with("=>") || (tail.starts_with(':') && !tail.ends_with(';'))
}

/// `MAX_RETRIES = 3`, `export const`-less `NAME: int = 3`: an assignment at the very start of
/// a line (a module's constant, not a local variable).
fn top_assignment(before: &str, after: &str) -> bool {
    let before = before.strip_prefix("export ").unwrap_or(before);
    if !before.is_empty() {
        return false;
    }
    let after = after.trim_start();
    let after = match after.strip_prefix(':') {
        Some(typed) => typed.split_once('=').map_or("", |(_, rest)| rest),
        None => match after.strip_prefix('=') {
            Some(rest) => rest,
            None => return false,
        },
    };
    !after.starts_with(['=', '>']) && !after.trim().is_empty()
}

/// `public void refresh(User u) {`, `static int *parse(char *s)`: type words before the name
/// (none of them a statement keyword), a parameter list after it, no `;` ending a call.
fn typed_header(before: &str, after: &str) -> bool {
    let words: Vec<&str> = before.split_whitespace().collect();
    let typeish = |w: &&str| {
        w.chars().all(|c| c.is_ascii_alphanumeric() || "_<>[]*&:,".contains(c))
            && !STATEMENT.contains(w)
    };
    if words.is_empty() || !words.iter().all(typeish) {
        return false;
    }
    after.trim_start().starts_with('(') && !after.trim_end().ends_with(';')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_in_several_languages() {
        for (line, name) in [
            ("def issue_session(user):", "issue_session"),
            ("    async def refresh(self):", "refresh"),
            ("class AuthService:", "AuthService"),
            ("pub(crate) fn walk(dir: &Path) {", "walk"),
            ("pub struct Builder {", "Builder"),
            ("func (s *Server) Handle(w http.ResponseWriter) {", "Handle"),
            ("export function issueSession(user) {", "issueSession"),
            ("  async refresh(token: string): Promise<void> {", "refresh"),
            ("export const retryDelay = 30;", "retryDelay"),
            ("MAX_RETRIES = 3", "MAX_RETRIES"),
            ("    public void refresh(User u) {", "refresh"),
            ("static int *parse(char *s)", "parse"),
            ("seed_db() {", "seed_db"),
        ] {
            assert!(defines(line, name), "{line}");
        }
    }

    #[test]
    fn uses_are_not_definitions() {
        for (line, name) in [
            ("    return issue_session(user)", "issue_session"),
            ("    cookie = issue_session(user)", "issue_session"),
            ("    issue_session(user);", "issue_session"),
            ("if refresh(u) {", "refresh"),
            ("    self.refresh()", "refresh"),
            ("# see issue_session_v2", "issue_session"),
            ("    retries = MAX_RETRIES", "MAX_RETRIES"),
        ] {
            assert!(!defines(line, name), "{line}");
        }
    }

    #[test]
    fn environment_reads() {
        assert!(reads_env("DATABASE_URL = os.environ[\"DATABASE_URL\"]", "DATABASE_URL"));
        assert!(reads_env("let url = std::env::var(\"MEM_DIR\")?;", "MEM_DIR"));
        assert!(reads_env("const u = process.env.API_KEY;", "API_KEY"));
        assert!(reads_env("echo \"$MEM_DIR\"", "MEM_DIR"));
        assert!(!reads_env("MAX_RETRIES = 3", "MAX_RETRIES"));
    }
}
