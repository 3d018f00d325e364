//! Git's conflict markers in a memory file: a line starting with `<<<<<<<`, then one that is
//! `=======`, then one starting with `>>>>>>>` (a `|||||||` line between the first two opens
//! the merge base's text, as `merge.conflictStyle = diff3` writes it). A file holding them is
//! bad ([`Memory::parse`]); [`split_conflicts`] gives back the two versions it merged, for
//! `mem resolve`.
//!
//! [`Memory::parse`]: super::Memory::parse

/// The versions a file with conflict markers was made from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sides {
    /// The file as the current branch had it (the text between `<<<<<<<` and `=======`).
    pub ours: String,
    /// The file as the merged branch had it (between `=======` and `>>>>>>>`).
    pub theirs: String,
    /// The file as the merge base had it, when every conflict shows it (diff3 style).
    pub base: Option<String>,
}

/// Where a line of a conflict's text goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Both,
    Ours,
    Base,
    Theirs,
}

/// Whether `line` (without its line break) is a marker of `c` repeated seven times, alone or
/// followed by a space and a label.
fn marker(line: &str, c: char) -> bool {
    let seven = c.to_string().repeat(7);
    line.strip_prefix(seven.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

/// What a walk over the markers of `text` found: the line of the first whole conflict, and the
/// two sides when every conflict is whole.
fn walk(text: &str) -> (Option<usize>, Option<Sides>) {
    if !text.contains("<<<<<<<") {
        return (None, None);
    }
    let (mut ours, mut theirs, mut base) = (String::new(), String::new(), String::new());
    let mut part = Part::Both;
    let (mut opened, mut first) = (0, None);
    let mut every_base = true;
    let mut saw_base = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        match part {
            Part::Both if marker(bare, '<') => {
                (part, opened, saw_base) = (Part::Ours, i + 1, false);
                continue;
            }
            Part::Ours if marker(bare, '|') => {
                (part, saw_base) = (Part::Base, true);
                continue;
            }
            Part::Ours | Part::Base if bare == "=======" => {
                every_base &= saw_base;
                part = Part::Theirs;
                continue;
            }
            Part::Theirs if marker(bare, '>') => {
                first = first.or(Some(opened));
                part = Part::Both;
                continue;
            }
            _ => {}
        }
        match part {
            Part::Both => {
                ours.push_str(line);
                theirs.push_str(line);
                base.push_str(line);
            }
            Part::Ours => ours.push_str(line),
            Part::Base => base.push_str(line),
            Part::Theirs => theirs.push_str(line),
        }
    }
    let whole = first.is_some() && part == Part::Both;
    let sides = whole.then(|| Sides { ours, theirs, base: every_base.then_some(base) });
    (first, sides)
}

/// The 1-based line of the first whole conflict in `text` (its `<<<<<<<` line), if any.
pub fn conflict_line(text: &str) -> Option<usize> {
    walk(text).0
}

/// The two versions git merged into `text`, when it holds conflict markers and every conflict
/// is whole (a conflict left open or a stray marker gives `None`).
pub fn split_conflicts(text: &str) -> Option<Sides> {
    walk(text).1
}

#[cfg(test)]
mod tests {
    use super::*;

    const MERGED: &str =
        "---\nid: a\n---\n# T\n<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> b\nend\n";

    #[test]
    fn finds_and_splits_a_conflict() {
        assert_eq!(conflict_line(MERGED), Some(5));
        let sides = split_conflicts(MERGED).unwrap();
        assert_eq!(sides.ours, "---\nid: a\n---\n# T\nmine\nend\n");
        assert_eq!(sides.theirs, "---\nid: a\n---\n# T\nyours\nend\n");
        assert_eq!(sides.base, None);
    }

    #[test]
    fn diff3_style_gives_the_base_too() {
        let text =
            "x\r\n<<<<<<< ours\r\na\r\n||||||| base\r\no\r\n=======\r\nb\r\n>>>>>>> theirs\r\n";
        let sides = split_conflicts(text).unwrap();
        assert_eq!(sides.ours, "x\r\na\r\n");
        assert_eq!(sides.theirs, "x\r\nb\r\n");
        assert_eq!(sides.base.as_deref(), Some("x\r\no\r\n"));
        // One conflict without its base: no base at all.
        let two = format!("{text}<<<<<<< o\nc\n=======\nd\n>>>>>>> t\n");
        assert_eq!(split_conflicts(&two).unwrap().base, None);
    }

    #[test]
    fn only_a_whole_conflict_counts() {
        for text in [
            "no markers at all\n",
            "<<<<<<< HEAD\nmine\n",
            "<<<<<<< HEAD\nmine\n=======\nyours\n",
            "<<<<<<<< eight\n=======\n>>>>>>> t\n",
            " <<<<<<< indented\n=======\n>>>>>>> t\n",
            "=======\n>>>>>>> t\n<<<<<<< late\n",
        ] {
            assert_eq!(conflict_line(text), None, "{text:?}");
        }
        // A whole conflict, then one left open: found, but not split.
        let open = "<<<<<<< a\n1\n=======\n2\n>>>>>>> b\n<<<<<<< a\n3\n";
        assert_eq!(conflict_line(open), Some(1));
        assert_eq!(split_conflicts(open), None);
    }
}
