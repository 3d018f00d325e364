//! Secret redaction: the patterns capture removes from everything it writes.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// One redaction rule: the `secret` group (or the whole match) becomes `[REDACTED:kind]`.
struct Rule {
    kind: &'static str,
    regex: Regex,
    /// Whether a match that is a plain word (`Bearer authentication`) is left alone.
    skip_words: bool,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str, skip_words| Rule {
        kind,
        regex: Regex::new(pattern).expect("a valid redaction pattern"),
        skip_words,
    };
    vec![
        rule(
            "private-key",
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            false,
        ),
        rule("password", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:(?P<secret>[^\s/@]+)@", false),
        rule(
            "authorization",
            r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest)\s+)?(?P<secret>[^\s"',;]{8,})"#,
            true,
        ),
        rule("bearer", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)", true),
        rule("api-key", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", false),
        rule(
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
            false,
        ),
        rule("aws-key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", false),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", false),
    ]
});

/// Whether `s` reads as a word rather than a secret: all lower case, or capitalised.
fn is_word(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_lowercase())
}

/// Replaces the secrets in `text` (see `docs/capture.md` for the patterns) with
/// `[REDACTED:kind]`, and counts them.
pub fn redact(text: &str) -> (String, usize) {
    let mut count = 0;
    let mut out = text.to_string();
    for rule in RULES.iter() {
        if !rule.regex.is_match(&out) {
            continue;
        }
        let replaced = rule.regex.replace_all(&out, |caps: &Captures| {
            let whole = caps.get(0).expect("group 0 always matches");
            let secret = caps.name("secret").unwrap_or(whole);
            let value = secret.as_str();
            if value.starts_with("[REDACTED") || (rule.skip_words && is_word(value)) {
                return whole.as_str().to_string();
            }
            count += 1;
            let start = secret.start() - whole.start();
            let end = secret.end() - whole.start();
            let w = whole.as_str();
            format!("{}[REDACTED:{}]{}", &w[..start], rule.kind, &w[end..])
        });
        out = replaced.into_owned();
    }
    (out, count)
}
