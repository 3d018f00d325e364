//! Unit tests of lenient JSON and JSONL reading.

use super::*;

#[test]
fn valid_json_is_parsed_as_is() {
    let v = parse_json_lenient(r#"{"a": "x\\d \u001b[31m", "b": [1, 2]}"#).unwrap();
    assert_eq!(v["a"], "x\\d \u{1b}[31m");
}

#[test]
fn raw_control_characters_and_nul_bytes_are_repaired() {
    let v = parse_json_lenient("{\"a\": \"tab\there\u{1b}[0m\nnext\u{0}end\"}").unwrap();
    assert_eq!(v["a"], "tab\there\u{1b}[0m\nnextend");
    let v = parse_json_lenient("\u{feff}{\"a\":\u{1} 1}").unwrap();
    assert_eq!(v["a"], 1);
}

#[test]
fn backslashes_that_are_not_escapes_stay_backslashes() {
    // What `echo` in sh leaves of `\\d+\\.\\w+` and `C:\\Users`.
    let v = parse_json_lenient(r#"{"a": "\d+\.\w+", "b": "C:\Users\x", "c": "\u12"}"#).unwrap();
    assert_eq!(v["a"], r"\d+\.\w+");
    assert_eq!(v["b"], r"C:\Users\x");
    assert_eq!(v["c"], r"\u12");
}

#[test]
fn lone_surrogates_become_replacement_characters() {
    let v = parse_json_lenient(r#"{"a": "x\ud83dy", "b": "\ud83d\ude00", "c": "\udc00"}"#).unwrap();
    assert_eq!(v["a"], "x\u{fffd}y");
    assert_eq!(v["b"], "😀");
    assert_eq!(v["c"], "\u{fffd}");
}

#[test]
fn garbage_still_fails() {
    assert!(parse_json_lenient("{\"a\": ").is_err());
    assert!(parse_json_lenient("not json").is_err());
}

/// Defect 14 of the second probe: a line cut inside a JSON string followed by 20,000 lines
/// that are not JSON was joined with all of them, each join parsing the whole run again (20 s
/// to capture). A run of joined lines stops at `MAX_JOINED_LINES`.
#[test]
fn joining_cut_lines_is_bounded() {
    let mut text = String::from("{\"type\":\"user\",\"text\":\"cut here\n");
    text.push_str(&"not json at all\n".repeat(20_000));
    text.push_str("{\"type\":\"user\",\"text\":\"whole\"}\n");
    let mut runs = Vec::new();
    let mut values = 0;
    let mut reader = std::io::Cursor::new(text.as_bytes());
    read_json_lines(
        &mut reader,
        true,
        |e| e,
        |line| {
            match line {
                JsonLine::Skipped { lines, .. } => runs.push(lines),
                JsonLine::Value { .. } => values += 1,
            }
            Ok::<(), std::io::Error>(())
        },
    )
    .unwrap();
    assert_eq!(values, 1);
    assert_eq!(runs.iter().sum::<usize>(), 20_001);
    assert_eq!(runs[0], MAX_JOINED_LINES, "the cut line and the lines joined to it");
    assert!(runs.iter().all(|&n| n <= MAX_JOINED_LINES), "{runs:?}");
}
