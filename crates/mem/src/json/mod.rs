//! What agents write as JSON: lenient parsing (raw control characters, NUL bytes, mangled
//! backslashes) of hook payloads and transcript lines ([`parse_json_lenient`]), and JSONL
//! transcripts read line by line with bounded memory ([`lines`]).

use serde_json::Value;

pub mod lines;

pub use self::lines::{
    JsonLine, MAX_JOINED_BYTES, MAX_JOINED_LINES, read_json_lines, read_line_capped,
};

/// Longest transcript line parsed; a longer line is read past and counted as skipped.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

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

#[cfg(test)]
mod tests;
