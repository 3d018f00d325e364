//! The line filter between the MCP client and rmcp: every line read from stdin gets an answer.
//! Lone surrogate escapes are repaired; a line that is not JSON (or is too long) is answered
//! with a JSON-RPC parse error, which rmcp would drop; a batch goes through `batch.rs`; one
//! task writes stdout, whole lines.

use std::io;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Stdin};
use tokio::sync::mpsc::{Receiver, Sender};

use super::batch::{Outgoing, Session, invalid_params, line as line_of};

/// The longest line read from the client; a longer one gets a parse error, and is not held.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Reads the next line of stdin into `line`, without its `\n` (a last line without one
/// counts), and returns its length; `None` at the end. A line over [`MAX_LINE_BYTES`] is read
/// to its end but not kept.
async fn read_line(input: &mut BufReader<Stdin>, line: &mut Vec<u8>) -> io::Result<Option<usize>> {
    line.clear();
    let mut length = 0;
    loop {
        let available = input.fill_buf().await?;
        let (end, newline) = (available.is_empty(), available.iter().position(|&b| b == b'\n'));
        let take = newline.unwrap_or(available.len());
        length += take;
        line.extend_from_slice(&available[..take]);
        line.truncate(if length > MAX_LINE_BYTES { 0 } else { length }); // not kept if too long
        input.consume(newline.map_or(take, |at| at + 1));
        if end || newline.is_some() {
            return Ok((newline.is_some() || length > 0).then_some(length));
        }
    }
}

/// Readies a line from the client (without its `\n`) for rmcp, in place: drops a UTF-8 byte
/// order mark at its start, as rmcp does, and replaces its lone surrogate escapes if that makes
/// it JSON. Returns the JSON; `Ok(None)`: a blank line, to skip; `Err`: not JSON.
fn repair(line: &mut Vec<u8>) -> serde_json::Result<Option<Value>> {
    let parse = |line: &[u8]| serde_json::from_slice::<Value>(line);
    if line.starts_with(b"\xEF\xBB\xBF") {
        line.drain(..3);
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let error = match parse(line) {
        Ok(value) => return Ok(Some(value)),
        Err(error) => error,
    };
    if !replace_lone_surrogates(line) {
        return Err(error);
    }
    let value = parse(line)?;
    eprintln!("mem: warning: lone surrogate escapes in a message replaced by \\ufffd");
    Ok(Some(value))
}

/// Replaces, in place, each `\uXXXX` escape of a UTF-16 surrogate (D800 to DFFF) that is not
/// half of a valid pair with `\ufffd` (U+FFFD, as long: columns stay); true if it replaced any.
/// An escaped backslash is skipped whole, so `\\ud800` (the text `\ud800`) stays; outside
/// strings a backslash is a syntax error anyway.
fn replace_lone_surrogates(line: &mut [u8]) -> bool {
    // (A `+` is read as a sign, but three hex digits make no surrogate.)
    let escape = |line: &[u8], at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let (mut at, mut replaced) = (0, false);
    while let Some(next) = line.get(at..).and_then(|rest| rest.iter().position(|&b| b == b'\\')) {
        at += next;
        let pair = matches!(escape(line, at + 6), Some(0xDC00..=0xDFFF));
        match escape(line, at) {
            Some(0xD800..=0xDBFF) if pair => at += 12,
            Some(0xD800..=0xDFFF) => {
                line[at + 2..at + 6].copy_from_slice(b"fffd");
                (at, replaced) = (at + 6, true);
            }
            Some(_) => at += 6,
            None => at += 2,
        }
    }
    replaced
}

/// Reads the client's lines until stdin ends (or rmcp or stdout is gone): rmcp gets those that
/// are JSON, once repaired, through `to_rmcp` (a batch's messages one by one, see
/// [`Session::split`]); `out` gets a parse error for the others, with `"id": null` since no id
/// can be read from them. Blank lines are skipped.
pub(super) async fn filter(mut to_rmcp: DuplexStream, out: Sender<Vec<u8>>, session: Arc<Session>) {
    let (mut input, mut line, mut going_on) =
        (BufReader::new(tokio::io::stdin()), Vec::new(), true);
    while going_on {
        let repaired = match read_line(&mut input, &mut line).await {
            Ok(Some(n)) if n > MAX_LINE_BYTES => {
                Err(format!("the line is over the limit of {MAX_LINE_BYTES} bytes"))
            }
            Ok(Some(_)) => repair(&mut line).map_err(|e| e.to_string()),
            Ok(None) => return,
            Err(e) => return eprintln!("mem: error: cannot read stdin: {e}"),
        };
        going_on = match repaired {
            Ok(None) => true,
            Ok(Some(Value::Array(items))) => {
                let split = session.split(items);
                let mut written = true;
                for message in split.to_rmcp {
                    written = written && to_rmcp.write_all(&message).await.is_ok();
                }
                match split.answer {
                    Some(answer) => written && out.send(answer).await.is_ok(),
                    None => written,
                }
            }
            Ok(Some(message)) => match invalid_params(&message) {
                Some(error) => {
                    eprintln!("mem: {}", error["error"]["message"].as_str().unwrap_or_default());
                    out.send(line_of(&error)).await.is_ok()
                }
                None => {
                    let completed = session.client_sent(&message);
                    line.push(b'\n');
                    let written = to_rmcp.write_all(&line).await.is_ok();
                    match completed {
                        Some(answer) => written && out.send(answer).await.is_ok(),
                        None => written,
                    }
                }
            },
            Err(reason) => {
                eprintln!("mem: parse error: {reason}");
                // By hand, for the usual order of the keys; `message` is a JSON string.
                let message = json!(format!("Parse error: {reason}"));
                let error = format!(r#"{{"code":-32700,"message":{message}}}"#);
                let response = format!("{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{error}}}\n");
                out.send(response.into_bytes()).await.is_ok()
            }
        };
    }
}

/// Passes rmcp's output on to `out`, a whole line at a time, until rmcp closes it; the
/// responses to a batch's requests go as one array, once all are there.
pub(super) async fn forward(from_rmcp: DuplexStream, out: Sender<Vec<u8>>, session: Arc<Session>) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    while from_rmcp.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
        let send = match session.rmcp_sent(&line) {
            Outgoing::Pass => Some(std::mem::take(&mut line)),
            Outgoing::Held => None,
            Outgoing::Batch(answer) => Some(answer),
        };
        line.clear();
        if let Some(send) = send
            && out.send(send).await.is_err()
        {
            return;
        }
    }
}

/// The one writer of stdout: writes and flushes each line, until every sender is gone.
pub(super) async fn write_lines(mut lines: Receiver<Vec<u8>>) -> io::Result<()> {
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.recv().await {
        stdout.write_all(&line).await?;
        stdout.flush().await?;
    }
    Ok(())
}
