//! Two clones edit the same memory (issue #56): `updated` records each edit, the merge driver
//! keeps both texts without a conflict marker, and a file that still holds markers never
//! reaches the model until `mem resolve` splits it.

use crate::util::{Dir, NOW, memory};

const T0: &str = "2026-01-01T00:00:00Z";

/// Issue #56, item 1: every edit of a body or a field records `updated`; moving an `access:`
/// line into the usage file (machine bookkeeping) does not.
#[test]
fn edits_record_updated_and_bookkeeping_does_not() {
    let dir = Dir::new();
    dir.mem(&["init", "."]).ok();
    let old = memory("old", "semantic", 5, T0, "# Old\nThe build uses make.\n")
        .replace("---\n#", "access: { count: 2, last: 2026-02-01T00:00:00Z }\n---\n#");
    dir.write("old.md", old);
    dir.write("new.md", memory("new", "semantic", 5, T0, "# New\nThe build uses just.\n"));
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ987654";
    dir.write("key.md", memory("key", "semantic", 5, T0, &format!("# Key\nToken {token}\n")));
    dir.write("gone.md", memory("gone", "semantic", 5, T0, "# Gone\nWe deploy on Fridays.\n"));

    dir.mem(&["sync"]).ok();
    let synced = dir.read("old.md");
    assert!(!synced.contains("access:") && !synced.contains("updated:"), "{synced}");

    let stamp = format!("updated: {NOW}\n---\n");
    dir.mem(&["supersede", "old", "--by", "new"]).ok();
    assert!(dir.read("old.md").contains(&stamp), "{}", dir.read("old.md"));
    dir.mem(&["forget", "gone"]).ok();
    assert!(dir.read("gone.md").contains(&stamp), "{}", dir.read("gone.md"));
    dir.mem(&["redact"]).ok();
    let redacted = dir.read("key.md");
    assert!(!redacted.contains(token) && redacted.contains(&stamp), "{redacted}");
    assert!(!dir.read("new.md").contains("updated:"), "an untouched memory has none");
}
