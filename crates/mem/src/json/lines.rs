//! Reading a JSONL transcript line by line with bounded memory, the same way for the digest
//! (`capture::read_transcript`) and the session log (`SessionLog::import`): lines decoded
//! lossily and parsed leniently, a value split by a raw line break joined again, a line longer
//! than [`MAX_LINE_BYTES`] read past and never held whole.

use std::io::{BufRead, Read};

use serde_json::Value;

use super::{MAX_LINE_BYTES, parse_json_lenient};

/// At most this many physical lines are joined into one value: each join parses the value
/// again from its start, so a cut line followed by thousands of lines that are not JSON would
/// cost work growing with the square of their number (20,000 such lines took 20 s).
pub const MAX_JOINED_LINES: usize = 32;

/// At most this many bytes are joined into one value, for the same reason: a run of joins
/// parses at most [`MAX_JOINED_LINES`] times this much.
pub const MAX_JOINED_BYTES: usize = 1024 * 1024;

/// What [`read_json_lines`] makes of one or more physical lines.
#[derive(Debug)]
pub enum JsonLine {
    /// A value, from `lines` physical lines (more than one when a raw line break split it).
    Value {
        /// The parsed value.
        value: Value,
        /// Physical lines it spans.
        lines: usize,
    },
    /// Lines given up on: not JSON even joined, or one longer than [`MAX_LINE_BYTES`].
    Skipped {
        /// Physical lines given up on.
        lines: usize,
        /// Whether one of them was too long.
        oversized: bool,
    },
}

/// One physical line read by [`read_line`].
enum RawLine {
    /// A line kept in the buffer, of `bytes` bytes; `whole` when it ends with its line break.
    Kept { bytes: usize, whole: bool },
    /// A line longer than the limit, read past: `bytes` bytes; `whole` when its line break was
    /// reached (else the input ended first).
    Oversized { bytes: usize, whole: bool },
    /// The end of the input.
    End,
}

/// Reads one line (without caring for its encoding) into `buf`, keeping it when it is at most
/// `max` bytes.
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<RawLine> {
    buf.clear();
    let n = reader.by_ref().take(max as u64 + 1).read_until(b'\n', buf)?;
    let whole = buf.last() == Some(&b'\n');
    if n == 0 {
        return Ok(RawLine::End);
    }
    if whole || n <= max {
        return Ok(RawLine::Kept { bytes: n, whole });
    }
    buf.clear();
    let mut bytes = n;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(RawLine::Oversized { bytes, whole: false });
        }
        match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(RawLine::Oversized { bytes: bytes + i + 1, whole: true });
            }
            None => {
                let len = chunk.len();
                bytes += len;
                reader.consume(len);
            }
        }
    }
}

/// Reads one line (without caring for its encoding) into `buf`. `Some(true)`: a line of at
/// most `max` bytes; `Some(false)`: a longer line, read past and not kept; `None`: the end.
pub fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<bool>> {
    Ok(match read_line(reader, buf, max)? {
        RawLine::Kept { .. } => Some(true),
        RawLine::Oversized { .. } => Some(false),
        RawLine::End => None,
    })
}

/// Reads `reader` to its end and hands each value, or each run of lines given up on, to
/// `each`, in order. A line that ends inside a JSON value is joined with the next ones (up to
/// [`MAX_JOINED_LINES`] lines and [`MAX_JOINED_BYTES`] in all) until they parse; when a line
/// parses alone, the lines waiting to be joined before it are given up on. Blank lines are
/// passed over.
///
/// Returns the bytes taken: up to the end of the last line handed to `each` (or blank). A value
/// still open at the end is not taken; with `whole_lines`, neither is a last line without its
/// line break (a line still being written): both are read again by the next call from that
/// offset. Without `whole_lines`, such a line is read like the others and an open value at the
/// end is given up on. `io` turns a read error into `each`'s error type.
pub fn read_json_lines<E>(
    reader: &mut impl BufRead,
    whole_lines: bool,
    io: impl Fn(std::io::Error) -> E,
    mut each: impl FnMut(JsonLine) -> Result<(), E>,
) -> Result<u64, E> {
    let mut buf = Vec::with_capacity(64 * 1024);
    // A value cut by a raw line break: its text so far, and how many lines it spans.
    let mut pending: Option<(String, usize)> = None;
    let (mut read, mut taken) = (0u64, 0u64);
    loop {
        let (bytes, whole) = match read_line(reader, &mut buf, MAX_LINE_BYTES).map_err(&io)? {
            RawLine::End => break,
            RawLine::Oversized { whole: false, .. } | RawLine::Kept { whole: false, .. }
                if whole_lines =>
            {
                break;
            }
            RawLine::Oversized { bytes, .. } => {
                read += bytes as u64;
                taken = read;
                let before = pending.take().map_or(0, |(_, n)| n);
                each(JsonLine::Skipped { lines: before + 1, oversized: true })?;
                continue;
            }
            RawLine::Kept { bytes, whole } => (bytes, whole),
        };
        read += bytes as u64;
        let line = &buf[..bytes - usize::from(whole)];
        let text = String::from_utf8_lossy(line);
        if text.trim().is_empty() && pending.is_none() {
            taken = read;
            continue;
        }
        match (pending.take(), parse_json_lenient(&text)) {
            (None, Ok(value)) => {
                taken = read;
                each(JsonLine::Value { value, lines: 1 })?;
            }
            (None, Err(e)) if e.is_eof() && text.len() <= MAX_JOINED_BYTES => {
                pending = Some((text.into_owned(), 1))
            }
            (None, Err(_)) => {
                taken = read;
                each(JsonLine::Skipped { lines: 1, oversized: false })?;
            }
            (Some((_, n)), Ok(value)) => {
                taken = read;
                each(JsonLine::Skipped { lines: n, oversized: false })?;
                each(JsonLine::Value { value, lines: 1 })?;
            }
            (Some((before, n)), Err(_)) => {
                let joined = format!("{before}\n{text}");
                match parse_json_lenient(&joined) {
                    Ok(value) => {
                        taken = read;
                        each(JsonLine::Value { value, lines: n + 1 })?;
                    }
                    Err(e)
                        if e.is_eof()
                            && joined.len() <= MAX_JOINED_BYTES
                            && n + 1 < MAX_JOINED_LINES =>
                    {
                        pending = Some((joined, n + 1))
                    }
                    Err(_) => {
                        taken = read;
                        each(JsonLine::Skipped { lines: n + 1, oversized: false })?;
                    }
                }
            }
        }
        if buf.capacity() > 1024 * 1024 {
            // Do not hold on to the memory of one long line.
            buf = Vec::with_capacity(64 * 1024);
        }
    }
    if let Some((_, n)) = pending.filter(|_| !whole_lines) {
        taken = read;
        each(JsonLine::Skipped { lines: n, oversized: false })?;
    }
    Ok(taken)
}
