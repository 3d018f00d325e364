//! The body of a session memory: requests, files, commands and outcome, within a size budget.

use crate::format::clip;

use super::transcript::STATED_ONLY;
use super::{Kept, MAX_BODY_BYTES, MAX_TRANSCRIPT_BYTES, Transcript, item, redact};

/// A session memory's title and body, redacted and at most [`MAX_BODY_BYTES`] long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The title (also the body's first heading).
    pub title: String,
    /// The Markdown body, starting with `# title`.
    pub body: String,
    /// Secrets replaced in it.
    pub redacted: usize,
}

/// What goes into a summary besides the transcript.
#[derive(Clone, Debug, Default)]
pub struct SessionInfo<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The project folder.
    pub cwd: Option<&'a str>,
    /// An outcome given by the hook (`last_assistant_message`), preferred to the transcript's.
    pub outcome: Option<&'a str>,
}

/// Byte budgets of the sections of a body; their sum, with the fixed text, stays under
/// [`MAX_BODY_BYTES`].
const TITLE_CHARS: usize = 80;
const HEADER_BYTES: usize = 480;
const REQUESTS_BYTES: usize = 1300;
const FILES_BYTES: usize = 560;
const COMMANDS_BYTES: usize = 760;
const OUTCOME_BYTES: usize = 700;
const REQUEST_CHARS: usize = 280;
const FILE_CHARS: usize = 140;
const COMMAND_CHARS: usize = 180;

/// Redacts `text`, adding to `count`.
fn redacted(text: &str, count: &mut usize) -> String {
    let (out, n) = redact(text);
    *count += n;
    out
}

/// Cuts `s` to at most `max` bytes, marking the cut with `…`: between words, as
/// [`clip`] cuts, unless that leaves less than half.
fn clip_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let head = &s[..end];
    let cut = match head.rfind(char::is_whitespace) {
        Some(space) if !s[end..].starts_with(char::is_whitespace) && space >= end / 2 => {
            &head[..space]
        }
        _ => head,
    };
    format!("{}…", cut.trim_end())
}

/// `s` as Markdown inline code, with a fence longer than any run of backticks in it.
pub(crate) fn inline_code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Appends a section of bullets to `out`: items, each cut to `chars` characters, taken
/// alternately from the start and the end of the list while they fit in `budget` bytes, with
/// a line in the gap saying how many of `total` are not shown.
fn bullets(
    out: &mut String,
    heading: &str,
    items: &[String],
    total: usize,
    budget: usize,
    chars: usize,
    code: bool,
) {
    if items.is_empty() {
        return;
    }
    let lines: Vec<String> = items
        .iter()
        .map(|item| {
            let text = clip(item, chars);
            if code { format!("- {}\n", inline_code(&text)) } else { format!("- {text}\n") }
        })
        .collect();
    // The heading and the "and N more" line.
    let mut used = heading.len() + 8 + 32;
    let (mut front, mut back) = (0, lines.len());
    let mut from_front = true;
    while front < back {
        let next = if from_front { front } else { back - 1 };
        if used + lines[next].len() > budget {
            break;
        }
        used += lines[next].len();
        if from_front {
            front += 1;
        } else {
            back -= 1;
        }
        from_front = !from_front;
    }
    let shown = front + lines.len() - back;
    out.push_str(&format!("\n## {heading}\n\n"));
    lines[..front].iter().for_each(|l| out.push_str(l));
    if shown < total {
        out.push_str(&format!("- … and {} more\n", total - shown));
    }
    lines[back..].iter().for_each(|l| out.push_str(l));
}

/// Orders a [`Kept`] list for display: the first items, then the last ones (the gap between
/// is in the "and N more" line).
fn kept_items(kept: &Kept, count: &mut usize) -> Vec<String> {
    let (head, _, tail) = kept.parts();
    head.iter().chain(tail).map(|s| redacted(s, count)).collect()
}

/// The title and body of a session memory: who and where, the user's requests, the files
/// changed, the commands run and the outcome (the last assistant message), every item
/// redacted then cut, the whole under [`MAX_BODY_BYTES`].
pub fn summarize(t: &Transcript, info: &SessionInfo<'_>) -> Summary {
    let mut count = 0;
    // A request that only stated facts is left out: its facts are memories of their own.
    let mut requests = kept_items(t.requests(), &mut count);
    let listed = requests.len();
    requests.retain(|r| r != STATED_ONLY);
    let stated_only = listed - requests.len();
    let title = match requests.first() {
        Some(first) => format!("Session: {}", clip(first, TITLE_CHARS)),
        None if stated_only > 0 => "Session: stated facts".to_string(),
        None => format!("Session {}", clip(info.session_id, TITLE_CHARS)),
    };
    let title = clip_bytes(&title, 4 * TITLE_CHARS);

    let mut header = format!(
        "{} session `{}`",
        t.format.map_or("Agent", crate::agent::Agent::title),
        clip(info.session_id, TITLE_CHARS)
    );
    if let Some(cwd) = info.cwd {
        header.push_str(&format!(" in {}", inline_code(&clip(&redacted(cwd, &mut count), 160))));
    }
    match (t.first_at, t.last_at) {
        (Some(first), Some(last)) if last > first => header.push_str(&format!(
            ", {} to {}",
            crate::format::whole_second(first),
            crate::format::whole_second(last)
        )),
        (Some(first), _) => header.push_str(&format!(", {}", crate::format::whole_second(first))),
        _ => {}
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    header.push_str(&format!(
        ": {}, {}.",
        plural(t.requests().total, "request", "requests"),
        plural(t.tool_calls, "tool call", "tool calls")
    ));

    let mut body = format!("# {title}\n\n{}\n", clip_bytes(&header, HEADER_BYTES));
    let req = t.requests();
    let total = req.total - stated_only;
    bullets(&mut body, "Requests", &requests, total, REQUESTS_BYTES, REQUEST_CHARS, false);
    let files: Vec<String> = t.files.iter().map(|f| redacted(f, &mut count)).collect();
    bullets(&mut body, "Files changed", &files, t.files_total, FILES_BYTES, FILE_CHARS, true);
    let commands = kept_items(&t.commands, &mut count);
    bullets(
        &mut body,
        "Commands run",
        &commands,
        t.commands.total,
        COMMANDS_BYTES,
        COMMAND_CHARS,
        true,
    );
    let outcome = info.outcome.and_then(item).or_else(|| t.outcome());
    if let Some(outcome) = outcome {
        let outcome = redacted(&outcome, &mut count);
        body.push_str(&format!("\n## Outcome\n\n{}\n", clip_bytes(&outcome, OUTCOME_BYTES)));
    }
    let mut footer = match count {
        0 => "\nNo secrets redacted".to_string(),
        n => format!("\n{} redacted", plural(n, "secret", "secrets")),
    };
    if t.skipped_lines > 0 {
        footer.push_str(&format!(
            "; {} of the transcript skipped (not JSON even after cleaning, or too long)",
            plural(t.skipped_lines, "line", "lines")
        ));
    }
    if t.truncated {
        footer.push_str(&format!(
            "; the transcript was read up to its first {} GiB only",
            MAX_TRANSCRIPT_BYTES >> 30
        ));
    }
    footer.push_str(&format!(
        ".\nFull log: {}.\n",
        inline_code(&format!("mem session show {}", clip(info.session_id, TITLE_CHARS)))
    ));
    if body.len() + footer.len() > MAX_BODY_BYTES {
        body = clip_bytes(&body, MAX_BODY_BYTES - footer.len() - 1);
        body.push('\n');
    }
    body.push_str(&footer);
    Summary { title, body, redacted: count }
}

/// The tag of a project: its folder's name, lower-cased, with every character other than
/// `[a-z0-9._-]` turned into `-`. The path is redacted first, as the `project` line is (and
/// before lower-casing, which would hide `AKIA…` keys): a folder name that holds a secret
/// gives no tag, so that no part of a secret reaches `tags:`.
pub fn project_tag(cwd: &str) -> Option<String> {
    let (cwd, _) = redact(cwd);
    let name = cwd.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next()?;
    if name.contains("[REDACTED:") {
        return None;
    }
    let mut tag = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') { c } else { '-' };
        if !(c == '-' && tag.ends_with('-')) {
            tag.push(c);
        }
    }
    let tag = clip(tag.trim_matches(['-', '.']), 64).trim_end_matches('…').to_string();
    (!tag.is_empty()).then_some(tag)
}

/// Whether the session a digest body (written by [`summarize`]) tells of did any work: it ran a
/// tool or a command, or changed a file. A session that only asked and was answered did not.
pub fn did_work(body: &str) -> bool {
    let sections = body.lines().any(|l| l == "## Files changed" || l == "## Commands run");
    let calls = body.lines().find_map(|l| {
        let before = l.find(" tool call")?;
        l[..before].rsplit(' ').next()?.parse::<usize>().ok()
    });
    sections || calls.is_some_and(|n| n > 0)
}

/// The parts of a digest body (written by [`summarize`]): its requests, files changed,
/// commands run and the lines of its outcome.
#[derive(Default)]
struct Parts<'a> {
    requests: Vec<&'a str>,
    files: Vec<&'a str>,
    commands: Vec<&'a str>,
    outcome: Vec<&'a str>,
}

/// Reads the parts of a digest body; the header and the footer (redaction, the full log) are
/// left out.
fn parts(body: &str) -> Parts<'_> {
    let mut section = "";
    let mut p = Parts::default();
    for line in body.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading;
            continue;
        }
        let footer = line.starts_with("No secrets redacted")
            || line.starts_with("Full log:")
            || line.split_once(' ').is_some_and(|(n, rest)| {
                n.parse::<usize>().is_ok()
                    && rest.starts_with("secret")
                    && rest.contains("redacted")
            });
        if footer {
            section = "";
            continue;
        }
        let item = line.strip_prefix("- ").filter(|i| !i.starts_with("… and "));
        match (section, item) {
            ("Requests", Some(item)) => p.requests.push(item),
            ("Files changed", Some(item)) => p.files.push(item),
            ("Commands run", Some(item)) => p.commands.push(item),
            ("Outcome", _) if !line.trim().is_empty() => p.outcome.push(line.trim()),
            _ => {}
        }
    }
    p
}

/// The requests a digest body lists.
pub fn asked(body: &str) -> Vec<&str> {
    parts(body).requests
}

/// What a digest body (written by [`summarize`]) says the session did, on one line, without the
/// ids, paths and times of its header and footer: the requests after the first (the first is
/// the title), the files changed, the commands run and the outcome. With `facts_taken` (the
/// session's statements are fact memories), a request says none of what it stated.
pub fn gist(body: &str, facts_taken: bool) -> String {
    let p = parts(body);
    let mut out = Vec::new();
    // A digest written before its facts were left out of it says them again: not here.
    let asked: Vec<String> = p
        .requests
        .iter()
        .skip(1)
        .map(|r| if facts_taken { super::facts::unstated(r) } else { r.to_string() })
        .collect();
    let asked: Vec<&str> = asked.iter().map(|r| r.trim()).filter(|r| !r.is_empty()).collect();
    if !asked.is_empty() {
        out.push(format!("then asked: {}", asked.join("; ")));
    }
    if !p.files.is_empty() {
        out.push(format!("changed {}", p.files.join(", ")));
    }
    if !p.commands.is_empty() {
        out.push(format!("ran {}", p.commands.join(", ")));
    }
    if !p.outcome.is_empty() {
        out.push(format!("outcome: {}", p.outcome.join(" ")));
    }
    out.join("; ")
}

#[cfg(test)]
mod tests {
    use super::clip_bytes;

    /// Issue #52, item 3: a byte budget cuts between words too, and never inside a character.
    #[test]
    fn byte_cuts_fall_between_words() {
        assert_eq!(clip_bytes("the tests pass on staging", 20), "the tests pass on…");
        assert_eq!(clip_bytes("the tests pass on staging", 100), "the tests pass on staging");
        assert_eq!(clip_bytes("a https://example.invalid/long/path", 20), "a https://example…");
        for max in 4..40 {
            let cut = clip_bytes("déjà vu: the café opens at nine", max);
            assert!(cut.len() <= max, "{max}: {cut}");
        }
    }
}
