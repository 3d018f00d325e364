//! What the context block (`engine/context.rs`) sends of a memory, given what the session's
//! context holds of it (the injection ledger's rows since its last reset): its line as made,
//! cut when the body is long, the first time; once more with the rest of the body after a cut
//! line, when that fits (never the part sent already); never again after that or a whole line,
//! until its content changes. And the cut line itself: how to tell it from a whole one, what
//! ends it, and the line of the rest that follows it.

use crate::session::ledger::Sent;

/// What goes of one memory, given what the session's context holds of its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Goes {
    /// Its line as made: the context holds nothing of this content (a new or a changed memory).
    AsMade,
    /// The line of the rest of its body, once, and only if it fits: the context holds only a
    /// cut line of it.
    RestIfFits,
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
        Goes::RestIfFits
    }
}

/// What ends a cut line: how to read the rest (the MCP tool `get` returns the whole memory).
pub(super) fn rest_hint(id: &str) -> String {
    format!("`get {id}` for the rest")
}

/// The line `line` of memory `id`, whose body on one line, uncut, is `body` (the text after
/// the title, as the block makes it): whether the line holds less than that (then it gets
/// [`rest_hint`] at its end) and, when it does and its cut text is the last thing on it, the
/// line of the rest. Returns (the line to send first, whether it is cut, the line of the rest).
pub(super) fn cut_or_rest(id: &str, line: String, body: &str) -> (String, bool, Option<String>) {
    let bare = line.strip_suffix('\n').unwrap_or(&line);
    if bare.contains(body) {
        return (line, false, None);
    }
    let rest = rest_line(id, bare, body);
    (format!("{bare} {}\n", rest_hint(id)), true, rest)
}

/// The line that goes on from `bare`, the line of memory `id` without its line break, which
/// ends with `: ` and a start of `body` clipped with `…`: what `body` says after the start sent
/// (from `…`), named as the rest of `id`, so that nothing of the memory goes twice (its title
/// neither).
fn rest_line(id: &str, bare: &str, body: &str) -> Option<String> {
    let head = bare.strip_suffix('…')?;
    let at =
        head.match_indices(": ").map(|(i, _)| i + 2).find(|&i| body.starts_with(&head[i..]))?;
    let sent = head[at..].trim_start_matches('…');
    let body = body.trim_start_matches('…');
    let rest = body.strip_prefix(sent.trim_start_matches('…')).unwrap_or(body).trim_start();
    (!rest.is_empty()).then(|| format!("- the rest of `{id}`: …{rest}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(memory: &str, hash: &str, cut: bool) -> Sent {
        Sent { memory: memory.into(), hash: hash.into(), chars: 10, cut }
    }

    #[test]
    fn a_memory_goes_as_made_then_its_rest_once_after_a_cut_line() {
        assert_eq!(goes(&[], "a", "1"), Goes::AsMade);
        let other = [sent("b", "1", false), sent("a", "0", false)];
        assert_eq!(goes(&other, "a", "1"), Goes::AsMade, "changed since: as made");
        assert_eq!(goes(&[sent("a", "1", false)], "a", "1"), Goes::Nothing);
        assert_eq!(goes(&[sent("a", "1", true)], "a", "1"), Goes::RestIfFits);
        let both = [sent("a", "1", true), sent("a", "1", false)];
        assert_eq!(goes(&both, "a", "1"), Goes::Nothing, "its rest went after the cut line");
        let twice = [sent("a", "1", true), sent("a", "1", true)];
        assert_eq!(goes(&twice, "a", "1"), Goes::RestIfFits);
    }

    /// Issue #52, item 3: the cut line and the line of the rest hold the body once between
    /// them, never a part twice.
    #[test]
    fn a_cut_line_ends_with_the_hint_and_its_rest_goes_on_from_it() {
        let body = "The address is stage-7.example.net on port 8443: ask ops before you deploy.";
        let line = "- **Staging** (semantic, `a`): ".to_string();
        let (text, cut, rest) = cut_or_rest("a", format!("{line}{body}\n"), body);
        assert_eq!((text, cut, rest), (format!("{line}{body}\n"), false, None));
        let clipped = crate::format::clip(body, 50);
        assert_eq!(clipped, "The address is stage-7.example.net on port 8443:…");
        let (text, cut, rest) = cut_or_rest("a", format!("{line}{clipped}\n"), body);
        assert_eq!(text, format!("{line}{clipped} `get a` for the rest\n"));
        assert!(cut);
        let rest = rest.unwrap();
        assert_eq!(rest, "- the rest of `a`: …ask ops before you deploy.\n");
        let said = format!("{} {}", clipped.trim_end_matches('…'), rest.split('…').nth(1).unwrap());
        assert_eq!(said.trim_end(), body, "the two lines give the body once");
        // A title clipped with `…` goes on in the text after it, which starts with `…`.
        let body = "…the deploy process. The address is stage-7: port 8443.";
        let line = "- **Words about…** (`a`): ";
        let (_, cut, rest) = cut_or_rest("a", format!("{line}…the deploy…\n"), body);
        assert!(cut);
        let expected = "- the rest of `a`: …process. The address is stage-7: port 8443.\n";
        assert_eq!(rest.as_deref(), Some(expected));
        // An empty body is never cut; a line that holds no start of the body has no rest line.
        assert!(!cut_or_rest("a", "- **T** (`a`)\n".into(), "").1);
        let (text, cut, rest) = cut_or_rest("a", "- **T** (`a`): files…\n".into(), body);
        assert_eq!((text.ends_with("for the rest\n"), cut, rest), (true, true, None));
    }
}
