//! The source layout the docs promise: every file of `src/` named in docs/architecture.md (and
//! no file named there missing), no source file over 600 lines, no front-end crate or
//! environment read below the CLI, and no import circle between the library's modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest source file, in lines.
const MAX_LINES: usize = 600;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, relative to the package, with `/` separators.
fn sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = manifest_dir();
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    let mut rels: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    rels.sort();
    rels
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(manifest_dir().join(rel)).unwrap()
}

/// The lines of a file that are neither docs (where examples live) nor test code.
fn code_lines(rel: &str) -> Vec<String> {
    if rel.ends_with("/tests.rs") {
        return Vec::new();
    }
    let text = read(rel);
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        lines.push(line.to_string());
    }
    lines
}

fn is_front_end(rel: &str) -> bool {
    rel.starts_with("src/cli/") || rel == "src/main.rs"
}

#[test]
fn architecture_doc_names_every_source_file() {
    let doc = read("docs/architecture.md");
    let files = sources();
    let missing: Vec<&String> = files.iter().filter(|f| !doc.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "docs/architecture.md does not name: {missing:?}");
    let named: BTreeSet<String> = doc
        .split(|c: char| c.is_whitespace() || "`()[],;:*".contains(c))
        // `src/agent/<name>.rs` is a placeholder.
        .filter(|w| w.starts_with("src/") && w.ends_with(".rs") && !w.contains('<'))
        .map(String::from)
        .collect();
    let gone: Vec<&String> = named.iter().filter(|n| !files.contains(n)).collect();
    assert!(gone.is_empty(), "docs/architecture.md names files that do not exist: {gone:?}");
}

#[test]
fn no_source_file_is_too_long() {
    let long: Vec<(String, usize)> = sources()
        .into_iter()
        .map(|f| {
            let n = read(&f).lines().count();
            (f, n)
        })
        .filter(|(_, n)| *n > MAX_LINES)
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn the_library_does_not_reach_into_the_front_end() {
    let mut found = Vec::new();
    for rel in sources().iter().filter(|f| !is_front_end(f)) {
        for (i, line) in code_lines(rel).iter().enumerate() {
            for needle in ["clap::", "indicatif::", "env::var"] {
                if line.contains(needle) {
                    found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "front-end code in the library:\n{}", found.join("\n"));
}

/// The top-level module a library file belongs to (`src/index/hybrid.rs` -> `index`).
fn module_of(rel: &str) -> Option<String> {
    let rest = rel.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "cli")).then(|| name.to_string())
}

#[test]
fn no_import_circle_between_library_modules() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rel in sources() {
        let Some(from) = module_of(&rel) else { continue };
        let edges = graph.entry(from.clone()).or_default();
        for line in code_lines(&rel) {
            let mut rest = line.as_str();
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let name: String =
                    rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                // `crate::{a, b}` lists several modules.
                let names: Vec<String> = if rest.starts_with('{') {
                    let end = rest.find('}').unwrap_or(rest.len());
                    rest[1..end]
                        .split(',')
                        .map(|p| p.trim().split("::").next().unwrap_or("").to_string())
                        .collect()
                } else {
                    vec![name]
                };
                for to in names {
                    let to = match to.as_str() {
                        "Error" | "Result" => "error".to_string(),
                        _ => to,
                    };
                    let is_module = manifest_dir().join(format!("src/{to}.rs")).exists()
                        || manifest_dir().join(format!("src/{to}/mod.rs")).exists();
                    if is_module && to != from {
                        edges.insert(to);
                    }
                }
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        let circle = visit(node, &graph, &mut Vec::new(), &mut done);
        assert!(circle.is_none(), "import circle: {}", circle.unwrap().join(" -> "));
    }
}

/// Whether a line of code models an agent: declares an `Agent` type, maps an agent to a name
/// (`Agent::Claude => "…"`), or spells the session log's old name of Claude Code.
fn models_an_agent(line: &str) -> bool {
    let table = line.find("Agent::").is_some_and(|at| {
        let rest = &line[at..];
        rest.find("=>").is_some_and(|arrow| rest[arrow + 2..].trim_start().starts_with('"'))
    });
    table
        || line.contains("enum Agent")
        || line.contains("struct Agent ")
        || line.contains("\"claude-code\"")
}

/// Agents are modelled once, in `src/agent/` (docs/architecture.md, "Adding an agent"): no
/// `Agent` type and no table of agent names anywhere else.
#[test]
fn agents_are_modelled_only_in_the_agent_module() {
    let mut found = Vec::new();
    for rel in sources().iter().filter(|f| !f.starts_with("src/agent/")) {
        for (i, line) in code_lines(rel).iter().enumerate() {
            if models_an_agent(line) {
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "agents modelled outside src/agent/:\n{}", found.join("\n"));
}

/// The check itself: each way of modelling an agent is caught, and setup's file lists are not.
#[test]
fn modelling_an_agent_is_caught() {
    assert!(models_an_agent("pub enum Agent {"));
    assert!(models_an_agent("            Agent::Claude => \"claude\","));
    assert!(models_an_agent("        Agent::Claude | Agent::Codex => \"Codex\","));
    assert!(models_an_agent("    if agent == \"claude-code\" {"));
    assert!(!models_an_agent("            Agent::Claude => &[\".claude/settings.json\"],"));
    assert!(!models_an_agent("    let agent = Agent::from_name(name);"));
}
