//! Unit tests of the merge of two versions of a memory file.

use super::*;

const NOW: &str = "2026-11-30T12:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

/// A memory `m` with extra front-matter lines and a body.
fn file(extra: &str, body: &str) -> String {
    format!("---\nid: m\ntype: semantic\ncreated: 2026-01-01T00:00:00Z\n{extra}---\n{body}")
}

fn parsed(text: &str) -> Memory {
    Memory::parse(text).unwrap()
}

#[test]
fn both_bodies_changed_the_later_stays_and_the_earlier_is_superseded() {
    let base = file("tags: [a]\n", "# M\nThe port is 80.\n");
    let ours = file("tags: [a, ours]\nupdated: 2026-02-01T00:00:00Z\n", "# M\nThe port is 81.\n");
    let theirs =
        file("tags: [a, theirs]\nupdated: 2026-03-01T00:00:00Z\n", "# M\nThe port is 82.\n");
    let merged = merge(Some(&base), &ours, &theirs, now()).unwrap();
    let m = parsed(&merged.text);
    assert_eq!(m.body(), "# M\nThe port is 82.\n", "theirs is the later edit");
    assert_eq!(m.tags(), ["a", "ours", "theirs"]);
    assert_eq!(m.updated(), Some("2026-03-01T00:00:00Z".parse().unwrap()));
    assert_eq!(m.invalid_at(), None);
    let earlier = merged.earlier.unwrap();
    let e = parsed(&earlier.text);
    assert_eq!(e.id(), &earlier.id);
    assert!(earlier.id.as_str().starts_with("m-") && earlier.id.as_str().len() == 10);
    assert_eq!(e.body(), "# M\nThe port is 81.\n");
    assert_eq!(e.superseded_by().map(MemoryId::as_str), Some("m"));
    assert_eq!(e.invalid_at(), Some("2026-03-01T00:00:00Z".parse().unwrap()), "when replaced");
    assert_eq!(e.updated(), Some("2026-02-01T00:00:00Z".parse().unwrap()), "its own edit's");
    assert_eq!(e.tags(), ["a", "ours"], "as its side had them");
    // The same merge on another machine names the earlier edit the same.
    assert_eq!(merge(Some(&base), &ours, &theirs, now()).unwrap().earlier.unwrap(), earlier);
}

#[test]
fn ties_and_sides_without_updated_go_to_ours() {
    let ours = file("", "ours\n");
    let theirs = file("", "theirs\n");
    let merged = merge(None, &ours, &theirs, now()).unwrap();
    assert_eq!(parsed(&merged.text).body(), "ours\n");
    let earlier = parsed(&merged.earlier.unwrap().text);
    assert_eq!(earlier.body(), "theirs\n");
    assert_eq!(earlier.invalid_at(), Some(now()), "no time for the later edit: now");
    // A side with `updated` is later than one without.
    let dated = file("updated: 2026-01-02T00:00:00Z\n", "theirs\n");
    assert_eq!(parsed(&merge(None, &ours, &dated, now()).unwrap().text).body(), "theirs\n");
    // The same time on both sides: ours.
    let also = file("updated: 2026-01-02T00:00:00Z\n", "ours\n");
    assert_eq!(parsed(&merge(None, &also, &dated, now()).unwrap().text).body(), "ours\n");
}

#[test]
fn fields_merge_one_by_one_without_a_second_memory() {
    let base = file("importance: 5\nowner: ana\n", "same\n");
    // Ours raised the importance (earlier); theirs changed the owner and added a key (later).
    let ours = file("importance: 8\nowner: ana\nupdated: 2026-02-01T00:00:00Z\n", "same\n");
    let theirs = file(
        "importance: 5\nowner: bo   # the new owner\nupdated: 2026-03-01T00:00:00Z\nreviewed: yes\n",
        "same\n",
    );
    let merged = merge(Some(&base), &ours, &theirs, now()).unwrap();
    assert_eq!(merged.earlier, None);
    let m = parsed(&merged.text);
    assert_eq!(m.importance(), 8, "only ours changed it");
    let front = m.front_matter();
    assert_eq!(front.get("owner").and_then(Value::as_str), Some("bo"));
    assert_eq!(front.get("reviewed").and_then(Value::as_str), Some("yes"));
    assert!(merged.text.contains("owner: bo   # the new owner\n"), "lines kept as written");
    // Both changed the importance: the later edit's value.
    let theirs = theirs.replace("importance: 5", "importance: 2");
    let m = parsed(&merge(Some(&base), &ours, &theirs, now()).unwrap().text);
    assert_eq!(m.importance(), 2);
    // Without a base, every differing field is the later edit's.
    let m = parsed(&merge(None, &ours, &theirs, now()).unwrap().text);
    assert_eq!(m.importance(), 2);
}

#[test]
fn a_body_changed_on_one_side_only_is_taken() {
    let base = file("", "old\n");
    let ours = file("updated: 2026-02-01T00:00:00Z\n", "new text\n");
    // Theirs only forgot the memory, later.
    let theirs = file("invalid_at: 2026-03-01T00:00:00Z\nupdated: 2026-03-01T00:00:00Z\n", "old\n");
    let merged = merge(Some(&base), &ours, &theirs, now()).unwrap();
    assert_eq!(merged.earlier, None);
    let m = parsed(&merged.text);
    assert_eq!(m.body(), "new text\n");
    assert_eq!(m.invalid_at(), Some("2026-03-01T00:00:00Z".parse().unwrap()));
}

#[test]
fn tags_are_the_union_less_what_one_side_removed() {
    let s = |v: &[&str]| v.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    let (base, ours, theirs) = (s(&["a", "wip"]), s(&["b", "a"]), s(&["a", "wip", "c", "b"]));
    assert_eq!(merged_tags(Some(&base), &ours, &theirs), s(&["b", "a", "c"]));
    assert_eq!(merged_tags(None, &ours, &theirs), s(&["b", "a", "wip", "c"]));
    // Tags that need quotes are written so that they read back the same.
    let ours = file("tags:\n- 'a, b'\n", "x\n");
    let theirs = file("tags: ['- c']\n", "x\n");
    let m = parsed(&merge(None, &ours, &theirs, now()).unwrap().text);
    assert_eq!(m.tags(), ["a, b", "- c"]);
}

#[test]
fn what_is_not_one_memory_is_refused() {
    let good = file("", "x\n");
    let e = merge(None, &good, "not a memory", now()).unwrap_err();
    assert!(
        e.to_string().starts_with("theirs is not a memory file (line 1: no front-matter"),
        "{e}"
    );
    let marked = file("", "<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n");
    let e = merge(None, &marked, &good, now()).unwrap_err();
    assert!(e.to_string().contains("ours is not a memory file (line 6: git conflict"), "{e}");
    let other = good.replace("id: m", "id: n");
    let e = merge(None, &good, &other, now()).unwrap_err();
    assert!(e.to_string().contains("two memories, not two versions of one"), "{e}");
    // A base that is not a memory (an add/add conflict has an empty one) counts as none.
    let merged = merge(Some(""), &good, &file("", "y\n"), now()).unwrap();
    assert!(merged.earlier.is_some());
}

#[test]
fn the_earlier_id_fits_and_the_file_is_written_once() {
    let long = "x".repeat(MAX_ID_LEN);
    let id = earlier_id(&MemoryId::new(&long).unwrap(), "body").unwrap();
    assert_eq!(id.as_str().len(), MAX_ID_LEN);
    let dir = tempfile::tempdir().unwrap();
    let merged = merge(None, &file("", "a\n"), &file("", "b\n"), now()).unwrap();
    let earlier = merged.earlier.unwrap();
    let rel = write_earlier(dir.path(), "notes/", &earlier).unwrap();
    assert_eq!(rel, format!("notes/{}.md", earlier.id));
    assert_eq!(write_earlier(dir.path(), "notes", &earlier).unwrap(), rel, "the same again");
    let other = Earlier { id: earlier.id.clone(), text: file("", "c\n") };
    assert!(matches!(write_earlier(dir.path(), "notes", &other), Err(Error::Exists(_))));
    assert!(matches!(write_earlier(dir.path(), "../out", &earlier), Err(Error::OutsideRoot(_))));
}
