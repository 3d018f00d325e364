//! No import circle between two files of the workspace (issue #54): a file's `crate::`,
//! `super::` and `self::` paths, resolved to the file of the module they name, give the edges;
//! an edge between a module and one of its own submodules (a child using what its parent
//! declares, a parent re-exporting its child) is the module's inside and is not counted.

use std::collections::{BTreeMap, BTreeSet};

/// The roots of the workspace's crates: where each crate's module tree starts.
const CRATES: [(&str, &str); 2] = [("crates/mem/src/", "lib.rs"), ("src/", "main.rs")];

/// A file's crate root and its module path (`crates/mem/src/cites/resolve.rs` ->
/// (`crates/mem/src/`, [cites, resolve])), or `None` for a file outside the crates.
fn module_path(rel: &str) -> Option<(&'static str, Vec<String>)> {
    let (root, top) = CRATES.iter().find(|(root, _)| rel.starts_with(root))?;
    let rest = &rel[root.len()..];
    if rest == *top {
        return Some((root, Vec::new()));
    }
    let rest = rest.strip_suffix("/mod.rs").or_else(|| rest.strip_suffix(".rs"))?;
    Some((root, rest.split('/').map(String::from).collect()))
}

/// Every path a line names from `crate::`, `super::` or `self::`, as its segments (the
/// prefix kept), with `use` groups (`a::{b, c::d}`) spread out.
fn paths_in(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let rest = &line[i..];
        let head = ["crate::", "super::", "self::"].into_iter().find(|h| rest.starts_with(h));
        match head {
            Some(_) if starts_word => {
                let (paths, used) = tree(rest);
                out.extend(paths);
                i += used.max(1);
            }
            _ => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// The paths of the path tree at the start of `text` and how many bytes it took.
fn tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    let mut i = 0;
    loop {
        let rest = &text[i..];
        if let Some(inner) = rest.strip_prefix('{') {
            // A group: each member a tree of its own, after the prefix.
            let mut paths = Vec::new();
            let mut j = 0;
            loop {
                let member = inner[j..].trim_start();
                j = inner.len() - member.len();
                if member.starts_with('}') || member.is_empty() {
                    j += 1;
                    break;
                }
                let (subs, used) = tree(member);
                for sub in subs {
                    paths.push(prefix.iter().cloned().chain(sub).collect());
                }
                j += used;
                let after = inner[j..].trim_start();
                j = inner.len() - after.len();
                if after.starts_with(',') {
                    j += 1;
                }
            }
            return (paths, i + 1 + j);
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            return (vec![prefix], i);
        }
        i += name.len();
        prefix.push(name);
        if text[i..].starts_with("::") {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// The module `path` (from a file whose module is `here`) resolved against the crate's modules:
/// the longest prefix that is a module of `modules`.
fn resolve(
    here: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut at: Vec<String> = here.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    // The module the prefix names, then each segment while it still names a module.
    let mut found = at.clone();
    for segment in rest {
        at.push(segment.clone());
        if !modules.contains(&at) {
            break;
        }
        found = at.clone();
    }
    modules.contains(&found).then_some(found)
}

/// The edges between files of `files` (path, code lines): each file to the files it imports,
/// a module's own submodules and ancestors aside.
pub fn edges(files: &[(String, Vec<String>)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut by_module: BTreeMap<(&str, Vec<String>), &str> = BTreeMap::new();
    for (rel, _) in files {
        if let Some((root, path)) = module_path(rel) {
            by_module.insert((root, path), rel);
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, lines) in files {
        let Some((root, here)) = module_path(rel) else { continue };
        let modules: BTreeSet<Vec<String>> =
            by_module.keys().filter(|(r, _)| *r == root).map(|(_, p)| p.clone()).collect();
        let edges = graph.entry(rel.clone()).or_default();
        for line in lines {
            for path in paths_in(line) {
                let Some(target) = resolve(&here, &path, &modules) else { continue };
                let related = target.starts_with(&here) || here.starts_with(&target);
                if !related {
                    edges.insert(by_module[&(root, target)].to_string());
                }
            }
        }
    }
    graph
}

/// The files of `graph` that import each other in a circle, each circle's files (its strongly
/// connected components of more than one file, Tarjan's algorithm), in order.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_string());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found.sort();
    walk.found
}

/// The code lines of every source file of the workspace.
fn workspace() -> Vec<(String, Vec<String>)> {
    crate::layout::sources()
        .into_iter()
        .map(|rel| {
            let lines = crate::layout::code_lines(&rel);
            (rel, lines)
        })
        .collect()
}

#[test]
fn no_import_circle_between_two_files() {
    let graph = edges(&workspace());
    assert!(graph.values().map(BTreeSet::len).sum::<usize>() > 100, "the imports were read");
    let found = circles(&graph);
    let lines: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(found.is_empty(), "files importing each other in a circle:\n{}", lines.join("\n"));
}

/// The check itself: a planted circle between two sibling files is caught, through a group
/// and through `super::`; a child's use of its parent and the parent's re-export are not one.
#[test]
fn a_planted_circle_is_caught() {
    let file = |rel: &str, code: &str| (rel.to_string(), code.lines().map(String::from).collect());
    let mut files = vec![
        file("crates/mem/src/lib.rs", "pub mod cites;\n"),
        file("crates/mem/src/cites/mod.rs", "pub use self::resolve::Found;\n"),
        file("crates/mem/src/cites/resolve.rs", "use super::{Thing, symbols::{a, b}};\n"),
        file("crates/mem/src/cites/symbols.rs", "use crate::cites::Found;\n"),
    ];
    assert!(circles(&edges(&files)).is_empty(), "{:?}", edges(&files));
    files[3] = file("crates/mem/src/cites/symbols.rs", "let f = super::resolve::find(x);\n");
    assert_eq!(
        circles(&edges(&files)),
        [["crates/mem/src/cites/resolve.rs", "crates/mem/src/cites/symbols.rs"]]
    );
}

/// The binary's front ends (issue #54): each stands on the library and on what `src/shared/`
/// and `src/setup/` hold, and on no other front end; only `src/commands.rs` (and `main.rs`)
/// knows them all.
const FRONT_ENDS: [&str; 4] = ["cli", "mcp", "served", "ui"];

/// The top module of the binary a file belongs to (`src/ui/pool.rs` -> `ui`), if any.
fn top_module(rel: &str) -> Option<&str> {
    let rest = rel.strip_prefix("src/")?;
    let top = rest.split('/').next()?;
    Some(top.strip_suffix(".rs").unwrap_or(top))
}

/// The imports that break the rule: a front end's file importing another front end's, or a
/// shared file importing a front end's, as `from -> to`.
fn front_end_crossings(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut crossings = Vec::new();
    for (from, targets) in graph {
        let Some(here) = top_module(from) else { continue };
        if matches!(here, "main" | "commands") {
            continue;
        }
        for to in targets {
            let Some(there) = top_module(to) else { continue };
            if there != here && FRONT_ENDS.contains(&there) {
                crossings.push(format!("{from} -> {to}"));
            }
        }
    }
    crossings
}

#[test]
fn no_front_end_imports_another() {
    let graph = edges(&workspace());
    let tops: BTreeSet<&str> = graph.keys().filter_map(|f| top_module(f)).collect();
    for front in FRONT_ENDS {
        assert!(tops.contains(front), "the front end {front} was read: {tops:?}");
    }
    let crossings = front_end_crossings(&graph);
    assert!(
        crossings.is_empty(),
        "a front end (or what they share) imports a front end:\n{}",
        crossings.join("\n")
    );
}

/// The check itself: a planted import of the page from the MCP server is caught, and one from
/// the shared folder; the dispatch's and a front end's own imports are not.
#[test]
fn a_planted_front_end_import_is_caught() {
    let file = |rel: &str, code: &str| (rel.to_string(), code.lines().map(String::from).collect());
    let mut files = vec![
        file("src/main.rs", "mod commands;\nmod mcp;\nmod shared;\nmod ui;\n"),
        file("src/commands.rs", "use crate::{mcp, ui};\n"),
        file("src/mcp/mod.rs", "use crate::shared::Globals;\nuse self::args::X;\n"),
        file("src/mcp/args.rs", "use super::MemServer;\n"),
        file("src/ui/mod.rs", "use crate::shared::Globals;\n"),
        file("src/shared/mod.rs", "pub struct Globals;\n"),
    ];
    assert!(front_end_crossings(&edges(&files)).is_empty(), "{:?}", edges(&files));
    files[3] = file("src/mcp/args.rs", "let page = crate::ui::render(x);\n");
    files[5] = file("src/shared/mod.rs", "use crate::mcp::MemServer;\n");
    assert_eq!(
        front_end_crossings(&edges(&files)),
        ["src/mcp/args.rs -> src/ui/mod.rs", "src/shared/mod.rs -> src/mcp/mod.rs"]
    );
}
