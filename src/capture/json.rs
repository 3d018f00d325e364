//! Lenient JSON (raw control characters, NUL bytes, mangled backslashes) and text cleaning
//! (ANSI escapes) for hook payloads and transcripts.

use serde_json::Value;

use super::RAW_ITEM_CHARS;

/// Parses one JSON text, repairing what agents' hooks and transcripts are known to contain:
/// raw control characters inside strings (escaped), NUL bytes (dropped), backslashes that do
/// not start a valid escape (kept as literal backslashes, as `echo` in `sh` leaves them), lone
/// UTF-16 surrogate escapes (replaced by U+FFFD), a byte-order mark, and stray control
/// characters between tokens. Valid JSON parses unchanged, without the repair pass; the error
/// returned is that of the repaired text (`is_eof` still tells a text cut short).
pub fn parse_json_lenient(text: &str) -> serde_json::Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).or_else(|_| serde_json::from_str(&repair_json(text)))
}

/// The repair pass of [`parse_json_lenient`], as text.
pub fn repair_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let next = i + c.len_utf8();
        if !in_string {
            match c {
                '"' => {
                    in_string = true;
                    out.push(c);
                }
                ' ' | '\t' | '\n' | '\r' => out.push(c),
                c if c.is_control() => out.push(' '),
                c => out.push(c),
            }
            i = next;
            continue;
        }
        match c {
            '"' => {
                in_string = false;
                out.push(c);
            }
            '\\' => {
                let rest = &text[next..];
                match rest.chars().next() {
                    Some(e @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                        out.push('\\');
                        out.push(e);
                        i = next + 1;
                        continue;
                    }
                    Some('u') => match hex4(&rest[1..]) {
                        Some(unit) if (0xD800..0xDC00).contains(&unit) => {
                            // A high surrogate must be followed by a low one.
                            let after = &rest[5..];
                            let low = after.strip_prefix("\\u").and_then(hex4);
                            if low.is_some_and(|l| (0xDC00..0xE000).contains(&l)) {
                                out.push_str(&text[i..next + 11]);
                                i = next + 11;
                            } else {
                                out.push_str("\\ufffd");
                                i = next + 5;
                            }
                            continue;
                        }
                        Some(unit) if (0xDC00..0xE000).contains(&unit) => {
                            out.push_str("\\ufffd");
                            i = next + 5;
                            continue;
                        }
                        Some(_) => {
                            out.push_str(&text[i..next + 5]);
                            i = next + 5;
                            continue;
                        }
                        None => out.push_str("\\\\"),
                    },
                    _ => out.push_str("\\\\"),
                }
            }
            '\0' => {}
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
        i = next;
    }
    out
}

/// The value of four hex digits at the start of `s`.
fn hex4(s: &str) -> Option<u32> {
    let digits = s.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

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
