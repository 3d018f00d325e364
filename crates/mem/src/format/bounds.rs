//! Bounds on the front-matter checked before the YAML parser sees it: a hostile file must cost
//! a memory's worth of time, not minutes (docs/format.md, "Bad input").

use crate::error::FormatError;

/// Front-matter over this many bytes is refused before it is parsed.
pub const MAX_FRONT_MATTER_BYTES: usize = 64 * 1024;

/// Front-matter with more `[` and `{` than this is refused before it is parsed. Every one
/// counts, quoted or not: no count of closing brackets can be trusted without parsing, and the
/// YAML parser's time grows with the square of the nesting (100,000 nested `[` took it
/// minutes). Real front-matter has a handful.
pub const MAX_FLOW_OPENERS: usize = 256;

/// Refuses front-matter that would cost the YAML parser more than a memory's worth of time.
pub(super) fn check(yaml: &str) -> Result<(), FormatError> {
    if yaml.len() > MAX_FRONT_MATTER_BYTES {
        return Err(FormatError::FrontMatterTooLarge {
            size: yaml.len(),
            limit: MAX_FRONT_MATTER_BYTES,
        });
    }
    let mut count = 0;
    for (i, b) in yaml.bytes().enumerate() {
        if b == b'[' || b == b'{' {
            count += 1;
            if count > MAX_FLOW_OPENERS {
                // The YAML starts on line 2 of the file.
                let line = 2 + yaml.as_bytes()[..i].iter().filter(|&&c| c == b'\n').count();
                return Err(FormatError::TooNested { line, count, limit: MAX_FLOW_OPENERS });
            }
        }
    }
    Ok(())
}
