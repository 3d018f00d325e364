//! The diff `mem setup` prints of each change before making it: a unified diff with three
//! lines of context, computed on the part that differs only, and for a very long line (a file
//! written on one line) the bytes that change with some context.

use super::Change;

/// Lines longer than this (a configuration file written on one line) are not diffed line by
/// line: the change is shown as the bytes that differ, with some context.
const LONG_LINE: usize = 2000;

/// Lines of context shown on each side of a change.
const CONTEXT_LINES: usize = 3;

/// Characters of context shown on each side of a change within a long line.
const CONTEXT_CHARS: usize = 120;

/// The change as a unified diff, headed by the file's path. Only the lines that differ are
/// compared (the common start and end of the two texts are set aside first), so a small
/// change to a large file costs little; within a very long line, only the bytes that differ
/// are shown.
pub fn diff(change: &Change) -> String {
    let before = change.before.as_deref().unwrap_or("");
    let after = change.after.as_deref().unwrap_or("");
    let name = change.path.display().to_string();
    let old = if change.before.is_some() { name.clone() } else { "/dev/null".to_string() };
    let new = if change.after.is_some() { name } else { "/dev/null".to_string() };
    // The common start and end, whole lines only.
    let prefix = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    let prefix = before[..prefix].rfind('\n').map_or(0, |i| i + 1);
    let max_suffix = (before.len() - prefix).min(after.len() - prefix);
    let suffix = before
        .bytes()
        .rev()
        .zip(after.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = before[before.len() - suffix..].find('\n').map_or(0, |i| suffix - i - 1);
    // Lines of context on each side, as `diff -u` shows.
    let prefix = (0..CONTEXT_LINES)
        .fold(prefix, |at, _| before[..at.saturating_sub(1)].rfind('\n').map_or(0, |i| i + 1));
    let suffix = (0..CONTEXT_LINES).fold(suffix, |left, _| {
        let start = before.len() - left;
        before[start..].find('\n').map_or(0, |i| left - i - 1)
    });
    let (old_part, new_part) =
        (&before[prefix..before.len() - suffix], &after[prefix..after.len() - suffix]);
    let first_line = before[..prefix].matches('\n').count();
    if old_part.lines().chain(new_part.lines()).all(|l| l.len() <= LONG_LINE) {
        let text = similar::TextDiff::from_lines(old_part, new_part)
            .unified_diff()
            .header(&old, &new)
            .to_string();
        return renumber(&text, first_line);
    }
    // One long line changed: the bytes that differ, with context.
    let start = old_part.bytes().zip(new_part.bytes()).take_while(|(a, b)| a == b).count();
    let end = old_part[start..]
        .bytes()
        .rev()
        .zip(new_part[start..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let cut = |s: &str, from: usize, to: usize| -> String {
        let from = (0..=from).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
        let to = (to..=s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(s.len());
        s[from..to].to_string()
    };
    let show = |s: &str| {
        let from = start.saturating_sub(CONTEXT_CHARS);
        let to = (s.len() - end + CONTEXT_CHARS).min(s.len());
        format!("…{}…", cut(s, from, to))
    };
    format!(
        "--- {old}\n+++ {new}\n@@ line {} (one long line: the part that changes) @@\n-{}\n+{}\n",
        first_line + 1,
        show(old_part),
        show(new_part)
    )
}

/// A unified diff of a part of two files that starts at line `offset` (0-based), with its
/// hunk headers numbered as lines of the whole files.
fn renumber(diff: &str, offset: usize) -> String {
    if offset == 0 {
        return diff.to_string();
    }
    let shift = |range: &str| -> String {
        let (start, count) = range.split_once(',').map_or((range, None), |(s, c)| (s, Some(c)));
        let start: usize = start.parse().unwrap_or(0);
        let start = if start == 0 { start } else { start + offset };
        match count {
            Some(count) => format!("{start},{count}"),
            None => start.to_string(),
        }
    };
    diff.lines()
        .map(|line| {
            let Some(rest) = line.strip_prefix("@@ -") else { return format!("{line}\n") };
            let mut parts = rest.splitn(3, ' ');
            match (parts.next(), parts.next().and_then(|p| p.strip_prefix('+')), parts.next()) {
                (Some(old), Some(new), Some(tail)) => {
                    format!("@@ -{} +{} {tail}\n", shift(old), shift(new))
                }
                _ => format!("{line}\n"),
            }
        })
        .collect()
}
