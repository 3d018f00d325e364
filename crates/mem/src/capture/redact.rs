//! Secret redaction: the patterns capture removes from everything it writes.

use std::sync::LazyLock;

use regex::{Captures, Match, Regex};

/// One redaction rule: the secret (the first of the groups [`SECRET_GROUPS`] that matched, or
/// the whole match) becomes `[REDACTED:kind]`.
struct Rule {
    kind: &'static str,
    regex: Regex,
    /// Whether a match is left alone: not a secret after all (`Bearer authentication`).
    keep: fn(&Captures, &str) -> bool,
}

/// The groups that hold the secret of a match: `secret`, or one of the four forms of an
/// assigned value (double-quoted, double-quoted inside a JSON string as `\"…\"` (or deeper, `\\\"…\\\"`),
/// single-quoted, bare).
const SECRET_GROUPS: [&str; 5] = ["secret", "dq", "eq", "sq", "bare"];

/// Key names (their ends) whose assigned value is a password. Beyond the words, the
/// variables that clients read a password from: `PGPASS` (as `PGPASSWORD`), `SSHPASS`
/// (sshpass), `MYSQL_PWD`, `LDAP_BINDPW`, `DB_PW`.
const PASSWORD_KEYS: &str = "password|passwd|passphrase|pwd|[_-]pass|pgpass|sshpass|bindpw|[_-]pw";
/// Key names (their ends) whose assigned value is another secret. `client_secret`,
/// `secret_access_key`, `access_token`, `GITHUB_TOKEN` end with one of them; `REDISCLI_AUTH`
/// and npm's `_auth` with `_auth`; `SENTRY_DSN` (a URL holding the key) with `dsn`.
const SECRET_KEYS: &str = "secret|secret[_-]?key|secret[_-]?key[_-]?base|token|api[_-]?key|\
                           access[_-]?key|private[_-]?key|credentials?|[_-]auth|\
                           (?:auth|encryption|signing|master)[_-]?key|dsn";

/// A `KEY=value` assignment (also `KEY: value`, `"key": "value"`, `key='value'`, `key := v`,
/// `'key' => 'v'`) whose key ends with one of `keys`, case-insensitively, with any prefix
/// (`DB_`, `AWS_`, `spring.datasource.`, `--`). The value is the `dq`, `eq`, `sq` or `bare`
/// group.
fn assignment(keys: &str) -> String {
    format!(
        r#"(?i)(?:^|[^\w.-])(?P<key>[a-z0-9_.-]*?(?:{keys}))["']?[ \t]*(?P<sep>:=|=>|={{1,3}}|:)[ \t]*(?:"(?P<dq>(?:[^"\\]|\\.)+)"|\\+"(?P<eq>(?:[^"\\]|\\[^"])+?)\\+"|'(?P<sq>[^']+)'|(?P<bare>[^\s"'`]+))"#
    )
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str, keep| Rule {
        kind,
        regex: Regex::new(pattern).expect("a valid redaction pattern"),
        keep,
    };
    vec![
        rule(
            "private-key",
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            never,
        ),
        rule("password", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:(?P<secret>[^\s/@]+)@", never),
        rule(
            "authorization",
            r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest)\s+)?(?P<secret>[^\s"',;]{8,})"#,
            word,
        ),
        rule("bearer", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)", word),
        rule("api-key", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", never),
        rule(
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
            never,
        ),
        rule("aws-key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", never),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", never),
        // The MySQL and MariaDB clients take the password glued to `-p` (`-pS3cret`).
        rule(
            "password",
            r#"\b(?:mysql[a-z]*|mariadb[a-z-]*)\b[^\n|;&]*?\s-p(?P<secret>[^\s'"]+|'[^']+'|"[^"]+")"#,
            never,
        ),
        // Last: a value a rule above already replaced is not counted again.
        rule("password", &assignment(PASSWORD_KEYS), assigned_non_secret),
        rule("secret", &assignment(SECRET_KEYS), assigned_non_secret),
    ]
});

/// Every match is a secret.
fn never(_: &Captures, _: &str) -> bool {
    false
}

/// A plain word is not a secret.
fn word(_: &Captures, value: &str) -> bool {
    is_word(value)
}

/// Whether `s` reads as a word rather than a secret: all lower case, or capitalised.
fn is_word(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_lowercase())
}

/// Whether the value assigned to a secret's key is not a secret after all:
/// - a word after `key:`, unquoted, as prose writes (`token: none`, `Password: required.`,
///   and the type in `password: String,`); after `=` or in quotes, a word is a secret
///   (`DB_PASSWORD=hunter`), except the literals `null`, `none`, `nil`, `true`, `false`,
///   `undefined`, `empty` and the key's own name (`password=password`);
/// - a reference or placeholder: `$NAME` (upper case), `${…`, `$(…`, `<…>`, `****`, `-`;
/// - a function call, which is code (`token = lexer.next()`, `password=getpass()`);
/// - a path assigned to `PWD` or `OLDPWD` (the shell's working directory);
/// - anything after a path that ends with such a name and a `:` (`/etc/passwd: not found`).
fn assigned_non_secret(caps: &Captures, value: &str) -> bool {
    let key = caps.name("key").map_or("", |k| k.as_str());
    let bare = caps.name("bare").is_some();
    let colon = caps.name("sep").is_some_and(|s| s.as_str() == ":");
    let whole = caps.get(0).expect("group 0 always matches").as_str();
    if colon && whole.starts_with(['/', '\\']) {
        return true;
    }
    let trimmed = value.trim_end_matches([',', ';', '.', ')', ']', '}', '!', '?', ':']);
    let literal = ["null", "none", "nil", "true", "false", "undefined", "empty"]
        .iter()
        .any(|w| trimmed.eq_ignore_ascii_case(w));
    let own_name = trimmed.eq_ignore_ascii_case(key.trim_start_matches(['-', '.']));
    let prose = bare && colon && is_word(trimmed);
    prose || literal || own_name || placeholder(value) || call(value) || {
        let lower = key.to_ascii_lowercase();
        lower.ends_with("pwd") && value.starts_with(['/', '~'])
    }
}

/// `$NAME`, `${…`, `$(…`, `<…>`, only `*`s, or `-` (the value read from stdin, as `vault kv
/// put … KEY=-` takes it).
fn placeholder(value: &str) -> bool {
    let var = |s: &str| {
        !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    };
    value.starts_with("${")
        || value.starts_with("$(")
        || value.strip_prefix('$').is_some_and(var)
        || (value.starts_with('<') && value.ends_with('>'))
        || value.bytes().all(|b| b == b'*')
        || value == "-"
}

/// Whether `value` starts with a function call: a name, or a path of names joined by `.` or
/// `::`, then `(`.
fn call(value: &str) -> bool {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*\(")
            .expect("a valid pattern")
    });
    CALL.is_match(value)
}

/// The secret of a match: the first secret group that matched, else the whole match.
fn secret<'h>(caps: &Captures<'h>) -> Match<'h> {
    SECRET_GROUPS
        .iter()
        .find_map(|g| caps.name(g))
        .unwrap_or_else(|| caps.get(0).expect("group 0 always matches"))
}

/// A tool call's JSON input with the secrets of every string in it redacted, one string at a
/// time, so that a value quoted inside a string (`DB_PASSWORD="pw"` in a command) is seen
/// with its own quotes rather than JSON's escaped ones; a string that holds JSON itself (a
/// Codex call's arguments) is walked too. Object keys are kept; a `"password": "pw"` pair is
/// caught when the serialised input is redacted as a whole afterwards.
pub fn redact_json(value: &serde_json::Value) -> (serde_json::Value, usize) {
    use serde_json::Value;
    let mut count = 0;
    fn walk(value: &Value, count: &mut usize, depth: usize) -> Value {
        match value {
            Value::String(s) => {
                let inner = (depth < 8 && s.trim_start().starts_with(['{', '[']))
                    .then(|| serde_json::from_str::<Value>(s).ok())
                    .flatten();
                match inner {
                    Some(inner) => Value::String(walk(&inner, count, depth + 1).to_string()),
                    None => {
                        let (text, found) = redact(s);
                        *count += found;
                        Value::String(text)
                    }
                }
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| walk(v, count, depth + 1)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter().map(|(k, v)| (k.clone(), walk(v, count, depth + 1))).collect(),
            ),
            other => other.clone(),
        }
    }
    let redacted = walk(value, &mut count, 0);
    (redacted, count)
}

/// The user's own patterns (`[redact] patterns` of the user configuration), after the built-in
/// ones; set once per process by the front end.
static USER_RULES: std::sync::OnceLock<Vec<Rule>> = std::sync::OnceLock::new();

/// Adds the user's own patterns (regular expressions; a group named `secret` is what is
/// redacted, else the whole match, as `[REDACTED:user]`) to every redaction of this process.
/// A pattern that is not a valid expression is an error naming it (`pattern "…": why`), and
/// none is added; only the first call that succeeds counts.
pub fn set_user_patterns(patterns: &[String]) -> Result<(), String> {
    let mut rules = Vec::with_capacity(patterns.len());
    for pattern in patterns {
        let regex = Regex::new(pattern).map_err(|e| format!("pattern {pattern:?}: {e}"))?;
        rules.push(Rule { kind: "user", regex, keep: never });
    }
    let _ = USER_RULES.set(rules);
    Ok(())
}

/// Replaces the secrets in `text` (see `docs/capture.md` for the patterns) with
/// `[REDACTED:kind]`, and counts them.
pub fn redact(text: &str) -> (String, usize) {
    let mut count = 0;
    let mut out = text.to_string();
    for rule in RULES.iter().chain(USER_RULES.get().into_iter().flatten()) {
        if !rule.regex.is_match(&out) {
            continue;
        }
        let replaced = rule.regex.replace_all(&out, |caps: &Captures| {
            let whole = caps.get(0).expect("group 0 always matches");
            let secret = secret(caps);
            let value = secret.as_str();
            if value.starts_with("[REDACTED") || (rule.keep)(caps, value) {
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
