//! What the context block (`engine/context.rs`) sends of a memory, given what the session's
//! context holds of it (the injection ledger's rows since its last reset): its line as made,
//! cut when the body is long, the first time; once more with the whole body after a cut line,
//! when that fits; never again after a whole one, until its content changes. And the cut line
//! itself: how to tell it from a whole one, what ends it, and the whole line it stands for.

use crate::session::ledger::Sent;

/// What goes of one memory, given what the session's context holds of its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Goes {
    /// Its line as made: the context holds nothing of this content (a new or a changed memory).
    AsMade,
    /// Its whole line, once, and only if it fits: the context holds only a cut line of it.
    WholeIfFits,
    /// Nothing: the context holds all of it.
    Nothing,
}

/// What goes of memory `id`, whose content has the hash `hash`, into a context that holds
/// `held`.
pub(super) fn goes(held: &[Sent], id: &str, hash: &str) -> Goes {
    let mut same = held.iter().filter(|s| s.memory == id && s.hash == hash).peekable();
    if same.peek().is_none() {
        Goes::AsMade
    } else if same.any(|s| !s.cut) {
        Goes::Nothing
    } else {
        Goes::WholeIfFits
    }
}

/// What ends a cut line: how to read the rest (the MCP tool `get` returns the whole memory).
pub(super) fn rest_hint(id: &str) -> String {
    format!("`get {id}` for the rest")
}

/// The line `line` of memory `id`, whose body on one line, uncut, is `body` (the text after
/// the title, as the block makes it): whether the line holds less than that (then it gets
/// [`rest_hint`] at its end) and, when it does and its cut text is the last thing on it, the
/// whole line. Returns (the line to send first, whether it is cut, the whole line).
pub(super) fn cut_or_whole(id: &str, line: String, body: &str) -> (String, bool, Option<String>) {
    let bare = line.strip_suffix('\n').unwrap_or(&line);
    if bare.contains(body) {
        return (line, false, None);
    }
    let whole = whole_line(bare, body);
    (format!("{bare} {}\n", rest_hint(id)), true, whole)
}

/// `bare` (a line without its line break) that ends with `: ` and a start of `body` clipped
/// with `…`, with all of `body` instead.
fn whole_line(bare: &str, body: &str) -> Option<String> {
    let head = bare.strip_suffix('…')?;
    let at =
        head.match_indices(": ").map(|(i, _)| i + 2).find(|&i| body.starts_with(&head[i..]))?;
    Some(format!("{}{body}\n", &head[..at]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(memory: &str, hash: &str, cut: bool) -> Sent {
        Sent { memory: memory.into(), hash: hash.into(), chars: 10, cut }
    }

    #[test]
    fn a_memory_goes_as_made_then_whole_once_after_a_cut_line() {
        assert_eq!(goes(&[], "a", "1"), Goes::AsMade);
        let other = [sent("b", "1", false), sent("a", "0", false)];
        assert_eq!(goes(&other, "a", "1"), Goes::AsMade, "changed since: as made");
        assert_eq!(goes(&[sent("a", "1", false)], "a", "1"), Goes::Nothing);
        assert_eq!(goes(&[sent("a", "1", true)], "a", "1"), Goes::WholeIfFits);
        let both = [sent("a", "1", true), sent("a", "1", false)];
        assert_eq!(goes(&both, "a", "1"), Goes::Nothing, "sent whole after the cut line");
        let twice = [sent("a", "1", true), sent("a", "1", true)];
        assert_eq!(goes(&twice, "a", "1"), Goes::WholeIfFits);
    }

    #[test]
    fn a_cut_line_ends_with_the_hint_and_stands_for_its_whole_line() {
        let body = "The address is stage-7.example.net on port 8443: ask ops.";
        let line = "- **Staging** (semantic, `a`): ".to_string();
        let (text, cut, whole) = cut_or_whole("a", format!("{line}{body}\n"), body);
        assert_eq!((text, cut, whole), (format!("{line}{body}\n"), false, None));
        let clipped = crate::format::clip(body, 30);
        assert_eq!(clipped, "The address is stage-7.example…");
        let (text, cut, whole) = cut_or_whole("a", format!("{line}{clipped}\n"), body);
        assert_eq!(text, format!("{line}{clipped} `get a` for the rest\n"));
        assert!(cut);
        assert_eq!(whole, Some(format!("{line}{body}\n")));
        // A title clipped with `…` goes on in the text after it, which starts with `…`.
        let rest = "…e deploy process. The address is stage-7: port 8443.";
        let line = "- **Words about th…** (`a`): ";
        let (_, cut, whole) = cut_or_whole("a", format!("{line}…e deploy pro…\n"), rest);
        assert!(cut);
        assert_eq!(whole, Some(format!("{line}{rest}\n")));
        // An empty body is never cut; a line that holds no start of the body has no whole line.
        assert!(!cut_or_whole("a", "- **T** (`a`)\n".into(), "").1);
        let (text, cut, whole) = cut_or_whole("a", "- **T** (`a`): files…\n".into(), body);
        assert_eq!((text.ends_with("for the rest\n"), cut, whole), (true, true, None));
    }
}
