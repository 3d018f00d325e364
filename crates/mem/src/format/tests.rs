//! Unit and property tests for the memory file format.

use proptest::prelude::*;

use super::*;

const GOOD: &str = "---\nid: 01JDXB6Q4Z7M3S5T8V9W0X1Y2Z\ntype: semantic\nimportance: 7\ncreated: 2026-11-29T23:46:04Z\ntags: [auth, login]\nsource: session/abc123\nreviewer: ana   # unknown key\n---\n# Login test\n\nBody with *markdown*.\n";

#[test]
fn parses_the_contract_example() {
    let m = Memory::parse(GOOD).unwrap();
    assert_eq!(m.id().as_str(), "01JDXB6Q4Z7M3S5T8V9W0X1Y2Z");
    assert_eq!(m.kind(), MemoryType::Semantic);
    assert_eq!(m.importance(), 7);
    assert_eq!(m.tags(), ["auth", "login"]);
    assert_eq!(m.source(), Some("session/abc123"));
    assert_eq!(m.title(), "Login test");
    assert_eq!(m.body(), "# Login test\n\nBody with *markdown*.\n");
    assert_eq!(m.front_matter().get("reviewer").and_then(|v| v.as_str()), Some("ana"));
}

#[test]
fn render_keeps_unknown_keys_and_body() {
    let m = Memory::parse(GOOD).unwrap();
    let again = Memory::parse(&m.render()).unwrap();
    assert_eq!(m, again);
    assert!(m.render().ends_with("---\n# Login test\n\nBody with *markdown*.\n"));
    assert!(m.render().contains("reviewer: ana"));
}

#[test]
fn title_falls_back_to_first_line_then_id() {
    let m = Memory::parse(
        "---\nid: a\ntype: episodic\ncreated: 2026-01-01\n---\n\n  plain first line\nsecond\n",
    )
    .unwrap();
    assert_eq!(m.title(), "plain first line");
    let m = Memory::parse("---\nid: a\ntype: episodic\ncreated: 2026-01-01\n---\n").unwrap();
    assert_eq!(m.title(), "a");
}

#[test]
fn defaults_and_date_only_created() {
    let m = Memory::parse("---\nid: x\ntype: procedural\ncreated: 2026-01-02\n---\nbody").unwrap();
    assert_eq!(m.importance(), DEFAULT_IMPORTANCE);
    assert_eq!(m.created().to_string(), "2026-01-02T00:00:00Z");
    assert_eq!(m.last_access(), m.created());
}

#[test]
fn crlf_files_parse_and_keep_their_body() {
    let text =
        "---\r\nid: x\r\ntype: semantic\r\ncreated: 2026-01-02T00:00:00Z\r\n---\r\nline one\r\n";
    let m = Memory::parse(text).unwrap();
    assert_eq!(m.body(), "line one\r\n");
}

fn err(text: &str) -> FormatError {
    Memory::parse(text).unwrap_err()
}

#[test]
fn bad_inputs_name_the_line_and_the_fix() {
    assert_eq!(err("no front matter"), FormatError::NoFrontMatter);
    assert_eq!(err("---\nid: x\n"), FormatError::Unterminated);
    let e = err("---\nid: x\ntype: [unclosed\n---\n");
    assert!(matches!(e, FormatError::Yaml { line: Some(_), .. }), "{e:?}");
    assert_eq!(err("---\n- a\n- b\n---\n"), FormatError::NotMapping);
    assert_eq!(err("---\ntype: semantic\ncreated: 2026-01-01\n---\n"), FormatError::Missing("id"));
    let e = err("---\nid: x\ntype: fact\ncreated: 2026-01-01\n---\n");
    assert_eq!(e.line(), Some(3));
    assert!(e.to_string().contains("unknown type \"fact\""), "{e}");
    let e = err("---\nid: x\ntype: semantic\nimportance: 11\ncreated: 2026-01-01\n---\n");
    assert_eq!(e.line(), Some(4));
    assert!(e.to_string().contains("must be 1..10"), "{e}");
    let e = err("---\nid: x\ntype: semantic\nimportance: high\ncreated: 2026-01-01\n---\n");
    assert!(e.to_string().contains("expected an integer 1..10, found text"), "{e}");
    let e = err("---\nid: x\ntype: semantic\ncreated: yesterday\n---\n");
    assert_eq!(e.line(), Some(4));
    let e = err("---\nid: ../etc/passwd\ntype: semantic\ncreated: 2026-01-01\n---\n");
    assert_eq!(e.line(), Some(2));
    assert!(e.to_string().contains("path separator"), "{e}");
    let e = err("---\nid: x\ntype: semantic\ncreated: 2026-01-01\ntags: auth\n---\n");
    assert!(e.to_string().contains("expected a list"), "{e}");
}

#[test]
fn times_need_an_offset_or_are_plain_dates() {
    assert_eq!(parse_time("2026-11-29T23:46:04Z").unwrap().to_string(), "2026-11-29T23:46:04Z");
    assert_eq!(
        parse_time("2026-11-29T23:46:04+01:00").unwrap().to_string(),
        "2026-11-29T22:46:04Z"
    );
    assert_eq!(parse_time("2026-11-29").unwrap().to_string(), "2026-11-29T00:00:00Z");
    let e = parse_time("2026-11-29T23:46:04").unwrap_err();
    assert!(e.contains("needs an offset"), "{e}");
    assert!(parse_time("2026-13-01").is_err());
    assert!(parse_time("yesterday").is_err());
}

#[test]
fn numeric_ids_must_be_quoted() {
    for number in ["1.50", "12", "0x1F"] {
        let e = err(&format!("---\nid: {number}\ntype: semantic\ncreated: 2026-01-01\n---\n"));
        assert!(e.to_string().contains("quote it"), "{number}: {e}");
    }
    let quoted = Memory::parse("---\nid: \"1.50\"\ntype: semantic\ncreated: 2026-01-01\n---\n");
    assert_eq!(quoted.unwrap().id().as_str(), "1.50");
}

#[test]
fn markup_only_lines_do_not_make_an_empty_title() {
    let m = Memory::parse(
        "---\nid: x\ntype: semantic\ncreated: 2026-01-01\n---\n# \n---\n\nReal text\n",
    )
    .unwrap();
    assert_eq!(m.title(), "Real text");
}

#[test]
fn non_utf8_reports_line_and_offset() {
    let bytes = b"---\nid: x\ntype: semantic\ncreated: 2026-01-01\n---\nok\n\xff\xfe\n";
    let e = Memory::parse_bytes(bytes).unwrap_err();
    assert_eq!(e, FormatError::NotUtf8 { line: 7, offset: 52 });
}

#[test]
fn ids_are_validated() {
    for good in ["01JDXB6Q4Z7M3S5T8V9W0X1Y2Z", "auth.py-notes_2", "a.b"] {
        assert!(MemoryId::new(good).is_ok(), "{good}");
    }
    for bad in ["", "a/b", "..", "a..b", "../x", "a b", "é", "a\\b", "...", &"x".repeat(129)] {
        assert!(MemoryId::new(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn create_writes_a_parseable_file() {
    let now: Timestamp = "2026-11-30T10:00:00.123Z".parse().unwrap();
    let m = Memory::create(
        NewMemory {
            text: "We use pnpm, never npm".into(),
            kind: MemoryType::Semantic,
            importance: 8,
            tags: vec!["tooling".into(), " tooling ".into(), "".into()],
            title: Some("Package manager".into()),
            source: None,
        },
        now,
    )
    .unwrap();
    let again = Memory::parse(&m.render()).unwrap();
    assert_eq!(m, again);
    assert_eq!(again.tags(), ["tooling"]);
    assert_eq!(again.title(), "Package manager");
    assert_eq!(again.created().to_string(), "2026-11-30T10:00:00Z");
    assert_eq!(again.id().as_str().len(), 26);
}

#[test]
fn edits_touch_only_their_keys() {
    let text = "---\n# kept comment\nid: x\ntype:   semantic\ntags:\n- a\n- b\ncreated: 2026-01-01\n---\nbody\n";
    let one = edit_front_matter(text, &[("access", Some("{ count: 1 }".into()))]).unwrap();
    assert_eq!(one, text.replace("---\nbody", "access: { count: 1 }\n---\nbody"));
    let replaced = edit_front_matter(&one, &[("access", Some("{ count: 2 }".into()))]).unwrap();
    assert_eq!(replaced, one.replace("count: 1", "count: 2"));
    let back = edit_front_matter(&replaced, &[("access", None)]).unwrap();
    assert_eq!(back, text, "removing the added key restores the bytes");
    let no_tags = edit_front_matter(text, &[("tags", None)]).unwrap();
    assert_eq!(
        no_tags,
        "---\n# kept comment\nid: x\ntype:   semantic\ncreated: 2026-01-01\n---\nbody\n"
    );
    let quoted = "---\nid: x\ntype: semantic\ncreated: 2026-01-01\n\"access\": { count: 1 }\n---\n";
    let edited = edit_front_matter(quoted, &[("access", Some("{ count: 5 }".into()))]).unwrap();
    assert_eq!(edited.matches("access").count(), 1, "{edited}");
    assert_eq!(Memory::parse(&edited).unwrap().access().unwrap().count, 5);
    let crlf = "---\r\nid: x\r\ntype: semantic\r\ncreated: 2026-01-01\r\n---\r\nbody\r\n";
    let edited =
        edit_front_matter(crlf, &[("invalid_at", Some("2026-02-01T00:00:00Z".into()))]).unwrap();
    assert_eq!(
        edited,
        crlf.replace("---\r\nbody", "invalid_at: 2026-02-01T00:00:00Z\r\n---\r\nbody")
    );
    assert!(
        edit_front_matter(text, &[("type", Some("fact".into()))]).is_err(),
        "the result must parse"
    );
}

#[test]
fn yaml_text_quotes_when_needed() {
    assert_eq!(yaml_text("moved to Datadog"), "moved to Datadog");
    assert_eq!(
        Memory::parse(&format!(
            "---\nid: x\ntype: semantic\ncreated: 2026-01-01\nr: {}\n---\n",
            yaml_text("a: b # c\nd")
        ))
        .unwrap()
        .front_matter()
        .get("r")
        .unwrap()
        .as_str(),
        Some("a: b # c d")
    );
    assert_eq!(yaml_text("true"), "'true'");
}

fn unknown_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        proptest::collection::vec(any::<String>().prop_map(Value::from), 0..4)
            .prop_map(Value::Sequence),
    ]
}

fn memory_text() -> impl Strategy<Value = String> {
    let ty = prop_oneof![Just("episodic"), Just("semantic"), Just("procedural")];
    (
        "[A-Za-z0-9_-][A-Za-z0-9._-]{0,30}",
        ty,
        proptest::option::of(1u8..=10),
        proptest::collection::vec("[ -~]{1,12}", 0..4),
        proptest::collection::btree_map("x_[a-z_]{1,8}", unknown_value(), 0..4),
        any::<String>(),
        0i64..4_000_000_000,
        proptest::option::of(0i64..4_000_000_000),
    )
        .prop_filter("id must be valid", |(id, ..)| MemoryId::new(id).is_ok())
        .prop_map(|(id, ty, importance, tags, extra, body, secs, updated)| {
            let mut front = Mapping::new();
            front.insert("id".into(), id.into());
            front.insert("type".into(), ty.into());
            if let Some(i) = importance {
                front.insert("importance".into(), u64::from(i).into());
            }
            let created = Timestamp::from_second(secs).unwrap();
            front.insert("created".into(), created.to_string().into());
            if let Some(secs) = updated {
                let updated = Timestamp::from_second(secs).unwrap();
                front.insert("updated".into(), updated.to_string().into());
            }
            if !tags.is_empty() {
                front.insert(
                    "tags".into(),
                    Value::Sequence(tags.into_iter().map(Value::from).collect()),
                );
            }
            for (k, v) in extra {
                front.insert(k.into(), v);
            }
            format!("---\n{}---\n{body}", serde_norway::to_string(&front).unwrap())
        })
}

proptest! {
    /// parse → render → parse gives the same memory, and rendering again gives the same bytes.
    #[test]
    fn round_trip_is_identical(text in memory_text()) {
        let first = Memory::parse(&text).unwrap();
        let written = first.render();
        let second = Memory::parse(&written).unwrap();
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(&written, &second.render());
        prop_assert!(text.ends_with(second.body()));
        prop_assert_eq!(first.updated(), second.updated());
        // Recording an edit keeps every other field and is read back to the second.
        let now = Timestamp::from_second(4_000_000_000).unwrap();
        let edited = Memory::parse(&edit_front_matter(&written, &[updated_at(now)]).unwrap())
            .unwrap();
        prop_assert_eq!(edited.updated(), Some(now));
        prop_assert_eq!(edited.created(), second.created());
        prop_assert_eq!(edited.body(), second.body());
    }
}

/// Issue #56, item 1: `updated` is a time like `created`; a bad one makes the file bad.
#[test]
fn updated_is_an_optional_time() {
    let head = "---\nid: x\ntype: semantic\ncreated: 2026-01-01\n";
    assert_eq!(Memory::parse(&format!("{head}---\n")).unwrap().updated(), None);
    let m = Memory::parse(&format!("{head}updated: 2026-02-03T04:05:06Z\n---\n")).unwrap();
    assert_eq!(m.updated(), Some("2026-02-03T04:05:06Z".parse().unwrap()));
    let e = err(&format!("{head}updated: soon\n---\n"));
    assert_eq!(e.line(), Some(5));
    assert!(e.to_string().starts_with("field `updated`: \"soon\" is not a valid time"), "{e}");
    let e = err(&format!("{head}updated: 2026\n---\n"));
    assert!(e.to_string().contains("expected an RFC 3339 time"), "{e}");
    let now: Timestamp = "2026-11-30T12:00:00.7Z".parse().unwrap();
    assert_eq!(updated_at(now), ("updated", Some("2026-11-30T12:00:00Z".to_string())));
}

/// Issue #52, item 3: a cut falls between words ("…passes on st…" cut a word in two), except in
/// one word longer than half the room.
#[test]
fn clips_fall_between_words() {
    let text = "Integration tests must pass on staging before merging";
    assert_eq!(clip(text, 40), "Integration tests must pass on staging…");
    assert_eq!(clip(text, 33), "Integration tests must pass on…");
    assert_eq!(clip(text, 30), "Integration tests must pass on…", "a space at the cut");
    assert_eq!(clip(text, 200), text);
    let url = "see https://example.invalid/a/very/long/path/to/a/page";
    assert_eq!(clip(url, 30), "see https://example.invalid/a/…");
    for max in 1..text.chars().count() {
        let cut = clip(text, max);
        let head = cut.trim_end_matches('…');
        assert!(cut.chars().count() <= max + 1, "{max}: {cut}");
        assert!(text.starts_with(head), "{max}: {cut}");
    }
}
