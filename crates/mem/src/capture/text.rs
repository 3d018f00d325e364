//! Text cleaning (ANSI escapes) and the items a session digest keeps.

use super::RAW_ITEM_CHARS;

/// Text as a person would read it on a terminal: ANSI escape sequences (CSI such as
/// `ESC[31m`, OSC such as `ESC]0;title BEL`, and two-character escapes) removed, and every
/// other control character removed too, except line breaks and tabs.
pub fn clean_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']') => {
                    // OSC: up to BEL or ESC \.
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\n' | '\t' => out.push(c),
            '\r' => out.push('\n'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the parameters and the final byte of a CSI sequence.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

/// One item as kept while reading: cleaned, whitespace collapsed to single spaces, and cut to
/// [`RAW_ITEM_CHARS`] characters at a space, so that no secret is kept cut in half (the
/// shorter display limits apply after redaction). `None` when nothing is left.
pub(crate) fn item(s: &str) -> Option<String> {
    item_of(s, false)
}

/// [`item`] of a text that was already cut (`cut`) before it was cleaned.
pub(crate) fn item_of(s: &str, cut: bool) -> Option<String> {
    let cleaned = clean_text(s);
    let (cleaned, more) = prefix(&cleaned, RAW_ITEM_CHARS * 4);
    let mut cut = cut || more;
    let mut out = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((at, _)) = out.char_indices().nth(RAW_ITEM_CHARS) {
        out.truncate(at);
        cut = true;
    }
    if cut && let Some(space) = out.rfind(' ') {
        out.truncate(space);
    }
    (!out.is_empty()).then_some(out)
}

/// The first `max` bytes of `s` at most, cut at a character boundary, and whether it was cut.
pub(crate) fn prefix(s: &str, max: usize) -> (&str, bool) {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], end < s.len())
}
