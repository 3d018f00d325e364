//! The source layout the docs promise: every file of `src/` named in docs/architecture.md (and
//! no file named there missing) in a short code map, no source file over 600 lines, no
//! front-end crate or environment read below the CLI, and no import circle between the
//! library's modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest source file, in lines.
const MAX_LINES: usize = 600;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The library's sources, relative to the workspace's top.
const LIBRARY: &str = "crates/mem/src/";

/// The team store's crate's sources (docs/architecture.md names them too).
const TEAM: &str = "crates/mem-team/src/";

/// Every `.rs` file under `src/` (the binary), the library's `crates/mem/src/` and the team
/// crate's `crates/mem-team/src/`, relative to the workspace's top, with `/` separators.
pub fn sources() -> Vec<String> {
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
    walk(&root.join(LIBRARY), &mut files);
    walk(&root.join(TEAM), &mut files);
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
pub fn code_lines(rel: &str) -> Vec<String> {
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

/// Whether `rel` is the binary's (the front ends'), not the library's.
fn is_front_end(rel: &str) -> bool {
    rel.starts_with("src/")
}

#[test]
fn architecture_doc_names_every_source_file() {
    let doc = read("docs/architecture.md");
    let files = sources();
    let missing: Vec<&String> = files.iter().filter(|f| !doc.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "docs/architecture.md does not name: {missing:?}");
    let named: BTreeSet<String> = doc
        .split(|c: char| c.is_whitespace() || "`()[],;:*".contains(c))
        // `crates/mem/src/agent/<name>.rs` is a placeholder.
        .filter(|w| {
            (w.starts_with("src/") || w.starts_with(LIBRARY) || w.starts_with(TEAM))
                && w.ends_with(".rs")
                && !w.contains('<')
        })
        .map(String::from)
        .collect();
    let gone: Vec<&String> = named.iter().filter(|n| !files.contains(n)).collect();
    assert!(gone.is_empty(), "docs/architecture.md names files that do not exist: {gone:?}");
}

/// The most characters one entry of the code map may take: a file's path and a few words of
/// what it holds (the longest was 128 when this was written).
const MAX_MAP_ENTRY: usize = 150;

/// The most of docs/architecture.md the code map may take, in percent of its bytes (about 44
/// when this was written; it was 75 of 84 KB before issue #54).
const MAX_MAP_SHARE: usize = 50;

/// What the recipe of "Adding an agent" must name: every kind of file an agent's addition
/// touches that is easy to forget.
const RECIPE_NAMES: [&str; 9] = [
    "crates/mem/src/agent/<name>.rs",
    "crates/mem/src/agent/mod.rs",
    "crates/mem/src/agent/tests.rs",
    "src/setup/<name>.rs",
    "src/setup/mod.rs",
    "tests/main.rs",
    "scripts/e2e-agents.sh",
    "README.md",
    "code map",
];

/// The section of `doc` under the heading `## {title}`, up to the next `## ` heading.
fn doc_section<'a>(doc: &'a str, title: &str) -> Option<&'a str> {
    let heading = format!("\n## {title}\n");
    let start = doc.find(&heading)? + 1;
    let body = start + heading.len() - 1;
    let end = doc[body..].find("\n## ").map_or(doc.len(), |at| body + at);
    Some(&doc[start..end])
}

/// What keeps the code map of `doc` from being short: its share of the whole over
/// [`MAX_MAP_SHARE`], and each entry (a line starting with `- `, with the indented lines that
/// go on from it) over [`MAX_MAP_ENTRY`] characters.
fn long_code_map(doc: &str) -> Vec<String> {
    let Some(map) = doc_section(doc, "Code map") else {
        return vec!["no \"## Code map\" section".to_string()];
    };
    let mut found = Vec::new();
    let share = map.len() * 100 / doc.len().max(1);
    if share > MAX_MAP_SHARE {
        found.push(format!("the code map is {share} % of the file (at most {MAX_MAP_SHARE} %)"));
    }
    let mut entries: Vec<String> = Vec::new();
    let mut open = false;
    for line in map.lines() {
        if line.starts_with("- ") {
            entries.push(line.to_string());
            open = true;
        } else if open && line.starts_with(' ') {
            let entry = entries.last_mut().expect("an entry is open");
            entry.push(' ');
            entry.push_str(line.trim());
        } else {
            open = false;
        }
    }
    for entry in entries {
        let chars = entry.chars().count();
        if chars > MAX_MAP_ENTRY {
            let start: String = entry.chars().take(60).collect();
            found.push(format!("{chars} characters (at most {MAX_MAP_ENTRY}): {start}…"));
        }
    }
    found
}

/// What the "Adding an agent" section of `doc` does not name of [`RECIPE_NAMES`].
fn recipe_omits(doc: &str) -> Vec<&'static str> {
    let recipe = doc_section(doc, "Adding an agent").unwrap_or("");
    RECIPE_NAMES.into_iter().filter(|name| !recipe.contains(name)).collect()
}

/// Issue #54: the code map stays a map (short entries, well under the whole file), and the
/// recipe for a new agent names every file it touches.
#[test]
fn the_code_map_is_short() {
    let doc = read("docs/architecture.md");
    let long = long_code_map(&doc);
    assert!(long.is_empty(), "docs/architecture.md's code map:\n{}", long.join("\n"));
    let omitted = recipe_omits(&doc);
    assert!(omitted.is_empty(), "docs/architecture.md's \"Adding an agent\" omits {omitted:?}");
}

/// The check itself: an over-long entry (on one line or going on to the next), a map that
/// takes most of the file, and a recipe that forgets `tests/main.rs` are each caught; a short
/// map is not.
#[test]
fn a_long_code_map_is_caught() {
    let prose = format!("# Architecture\n\n## The crates\n\n{}\n", "Words. ".repeat(200));
    let recipe = format!("## Adding an agent\n\n{}\n", RECIPE_NAMES.join(", "));
    let short = "## Code map\n\n- `src/main.rs`: the exit statuses.\n";
    let doc = format!("{prose}\n{recipe}\n{short}");
    assert!(long_code_map(&doc).is_empty(), "{:?}", long_code_map(&doc));
    assert!(recipe_omits(&doc).is_empty());

    let words = "what it holds, ".repeat(10);
    let long_line = format!("{short}- `src/commands.rs`: {words}\n");
    let found = long_code_map(&format!("{prose}\n{recipe}\n{long_line}"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("`src/commands.rs`"), "{found:?}");
    let wrapped = format!("{short}- `src/commands.rs`: {}\n  {}\n", &words[..80], &words[80..]);
    assert_eq!(long_code_map(&format!("{prose}\n{recipe}\n{wrapped}")).len(), 1);

    let many = format!("{short}{}", "- `src/main.rs`: the exit statuses.\n".repeat(60));
    let found = long_code_map(&format!("{prose}\n{recipe}\n{many}"));
    assert!(found.len() == 1 && found[0].contains("% of the file"), "{found:?}");
    assert_eq!(long_code_map(&prose), ["no \"## Code map\" section"]);

    let forgetful = doc.replace("tests/main.rs", "tests/");
    assert_eq!(recipe_omits(&forgetful), ["tests/main.rs"]);
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

/// The lines of `files` (path, code) outside `crates/mem/src/git.rs` that start a git process.
fn git_started_outside(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in files.iter().filter(|(rel, _)| rel != "crates/mem/src/git.rs") {
        for (i, line) in code.lines().enumerate() {
            let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if squeezed.contains("Command::new(\"git\")") {
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn only_the_git_module_starts_git() {
    let files: Vec<(String, String)> =
        sources().into_iter().map(|rel| (rel.clone(), code_lines(&rel).join("\n"))).collect();
    let found = git_started_outside(&files);
    assert!(
        found.is_empty(),
        "git started outside crates/mem/src/git.rs (its one runner holds the policy of docs/security.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn starting_git_elsewhere_is_caught() {
    let file = |rel: &str, code: &str| (rel.to_string(), code.to_string());
    let files = [
        file("crates/mem/src/git.rs", "let cmd = Command::new(\"git\");"),
        file(
            "crates/mem/src/checkpoint/git.rs",
            "let mut cmd = std::process::Command::new( \"git\" );",
        ),
        file("src/cli/sync.rs", "Command::new(\"gitk\")"),
    ];
    let found = git_started_outside(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("crates/mem/src/checkpoint/git.rs:1:"), "{found:?}");
}

/// The top-level module a library file belongs to (`crates/mem/src/index/hybrid.rs` -> `index`).
fn module_of(rel: &str) -> Option<String> {
    let rest = rel.strip_prefix(LIBRARY)?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
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
                    let is_module = manifest_dir().join(format!("{LIBRARY}{to}.rs")).exists()
                        || manifest_dir().join(format!("{LIBRARY}{to}/mod.rs")).exists();
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

/// Agents are modelled once, in `crates/mem/src/agent/` (docs/architecture.md, "Adding an agent"): no
/// `Agent` type and no table of agent names anywhere else.
#[test]
fn agents_are_modelled_only_in_the_agent_module() {
    let mut found = Vec::new();
    for rel in sources().iter().filter(|f| !f.starts_with("crates/mem/src/agent/")) {
        for (i, line) in code_lines(rel).iter().enumerate() {
            if models_an_agent(line) {
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "agents modelled outside crates/mem/src/agent/:\n{}",
        found.join("\n")
    );
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

/// The agents: the files of `crates/mem/src/agent/` that define a `Spec`, by their names.
fn agent_names() -> Vec<String> {
    sources()
        .iter()
        .filter(|rel| {
            rel.starts_with("crates/mem/src/agent/") && read(rel).contains("pub const SPEC: Spec")
        })
        .map(|rel| {
            rel.trim_start_matches("crates/mem/src/agent/").trim_end_matches(".rs").to_string()
        })
        .collect()
}

/// The one file outside the agent module and an agent's own setup file that may name the
/// agents: the setup table's registration.
const REGISTRATION: &str = "src/setup/mod.rs";

/// Whether a line names `agent` (lower case) as a word start, in any case: `Agent::Codex`,
/// `codex::find_rollout`, `".codex/hooks.json"`, `CODEX_HOME`.
fn names_agent(line: &str, agent: &str) -> bool {
    let line = line.to_lowercase();
    line.match_indices(agent).any(|(at, _)| {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        // A whole word, or the start of one in upper case or snake case (`CODEX_HOME`): a
        // short name (`pi`) is no part of another word (`pipe`).
        !line[..at].chars().next_back().is_some_and(word)
            && !line[at + agent.len()..].chars().next().is_some_and(|c| c.is_alphanumeric())
    })
}

/// The files of `files` (path, text) that name one agent's function, constant, folder or name
/// in code (comments aside, inline tests included) where no agent should be named: outside
/// `crates/mem/src/agent/`, the agent's own `src/setup/<agent>.rs`, test files (`tests.rs`) and
/// [`REGISTRATION`]; each as `path: agent`.
fn agents_named_outside(files: &[(String, String)], agents: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, text) in files {
        if rel.starts_with("crates/mem/src/agent/")
            || rel.ends_with("/tests.rs")
            || rel == REGISTRATION
        {
            continue;
        }
        let code: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with("--"))
            .collect();
        for agent in agents {
            if *rel == format!("src/setup/{agent}.rs") {
                continue;
            }
            if code.iter().any(|line| names_agent(line, agent)) {
                found.push(format!("{rel}: {agent}"));
            }
        }
    }
    found
}

/// Everything one agent is lives in its files (docs/architecture.md, "Adding an agent"): no
/// other file of `src/` names an agent, but the setup table's registration.
#[test]
fn agents_are_named_only_in_their_own_files() {
    let agents = agent_names();
    assert!(agents.len() >= 3, "{agents:?}");
    let files: Vec<(String, String)> =
        sources().into_iter().chain(migrations()).map(|rel| (rel.clone(), read(&rel))).collect();
    let found = agents_named_outside(&files, &agents);
    assert!(found.is_empty(), "agents named outside their files:\n{}", found.join("\n"));
}

/// The session log's migrations, which are code too.
fn migrations() -> Vec<String> {
    let dir = manifest_dir().join("crates/mem/src/session/migrations");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| format!("crates/mem/src/session/migrations/{}", e.file_name().to_string_lossy()))
        .collect();
    found.sort();
    found
}

/// The check itself: a call of one agent's function, its folder or its variant in another file
/// is caught, in an inline test too; comments, the agent's own files and the registration are
/// not.
#[test]
fn naming_an_agent_elsewhere_is_caught() {
    let agents = vec!["claude".to_string(), "codex".to_string(), "pi".to_string()];
    let file = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let planted = [
        file("crates/mem/src/engine/capture.rs", "use crate::agent::codex::find_rollout;\n"),
        file("src/cli/health.rs", "let dir = home.join(\".claude/projects\");\n"),
        file("src/cli/hook.rs", "std::env::var_os(\"CODEX_HOME\")\n"),
        file("src/cli/capture.rs", "#[cfg(test)]\nmod tests {\n    let a = Agent::Claude;\n}\n"),
        file(
            "crates/mem/src/health/mod.rs",
            "// Claude Code keeps subagents apart.\nlet subagents = 1;\n",
        ),
        file("crates/mem/src/agent/codex.rs", "pub fn find_rollout() {}\n"),
        file("src/setup/codex.rs", "const HOOKS: &str = \".codex/hooks.json\";\n"),
        file("src/setup/claude.rs", "let a = Agent::Codex;\n"),
        file("src/setup/mod.rs", "Agent::Codex => &codex::ENTRY,\n"),
        file("crates/mem/src/health/tests.rs", "claude::folder_name(project);\n"),
        file("src/cli/agents.rs", "let name = \"encodex\"; let x = my_claude;\n"),
        file("src/cli/pipe.rs", "let pipe = spawn_piped(pid);\n"),
        file("src/cli/hook.rs", "let a = Agent::Pi;\n"),
    ];
    assert_eq!(
        agents_named_outside(&planted, &agents),
        [
            "crates/mem/src/engine/capture.rs: codex",
            "src/cli/health.rs: claude",
            "src/cli/hook.rs: codex",
            "src/cli/capture.rs: claude",
            "src/setup/claude.rs: codex",
            "src/cli/hook.rs: pi",
        ]
    );
}

/// The names of the library's `[dependencies]` (crates/mem/Cargo.toml), sorted.
fn library_dependencies() -> Vec<String> {
    let manifest: toml::Table = read("crates/mem/Cargo.toml").parse().unwrap();
    let deps = manifest["dependencies"].as_table().expect("a [dependencies] table");
    let mut names: Vec<String> = deps.keys().cloned().collect();
    names.sort();
    names
}

/// Every package the dependencies of the workspace's package `top` bring in, by `Cargo.lock`
/// (its dev-dependencies too: the lock does not tell them apart, so the check is stricter than
/// the build).
fn closure_of(top: &str) -> BTreeSet<String> {
    let lock: toml::Table = read("Cargo.lock").parse().unwrap();
    let packages = lock["package"].as_array().unwrap();
    let deps_of = |name: &str| -> Vec<String> {
        packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .flat_map(|p| {
                p.get("dependencies").and_then(|d| d.as_array()).cloned().unwrap_or_default()
            })
            .filter_map(|d| d.as_str().and_then(|d| d.split(' ').next()).map(String::from))
            .collect()
    };
    let mut seen = BTreeSet::new();
    let mut todo = vec![top.to_string()];
    while let Some(name) = todo.pop() {
        for dep in deps_of(&name) {
            if seen.insert(dep.clone()) {
                todo.push(dep);
            }
        }
    }
    seen
}

/// Issue #54: the library is usable by a program without the command line. Its dependencies
/// are the list docs/architecture.md gives, and none of them brings in a command line parser,
/// a web server, an async runtime, an MCP server or terminal output.
#[test]
fn the_library_depends_on_what_the_docs_list_and_no_front_end_crate() {
    let listed = listed("<!-- library dependencies -->");
    assert_eq!(
        library_dependencies(),
        listed,
        "crates/mem/Cargo.toml against docs/architecture.md"
    );
    let closure = closure_of("mem");
    assert!(closure.contains("tantivy") && closure.contains("rusqlite"), "{closure:?}");
    // The same reading finds them where they are: in the binary's.
    let binary = closure_of("mem-cli");
    assert!(["clap", "axum", "tokio", "rmcp"].iter().all(|n| binary.contains(*n)), "{binary:?}");
    let front: Vec<&str> =
        ["clap", "axum", "tokio", "rmcp", "indicatif", "hyper", "maud", "comfy-table", "console"]
            .into_iter()
            .filter(|name| closure.contains(*name))
            .collect();
    assert!(front.is_empty(), "the library brings in {front:?}");
}

/// The items docs/architecture.md lists between `marker` and the next `<!-- end -->`,
/// separated by commas or lines, sorted.
fn listed(marker: &str) -> Vec<String> {
    let doc = read("docs/architecture.md");
    let block = &doc[doc.find(marker).unwrap_or_else(|| panic!("no {marker}")) + marker.len()..];
    let block = &block[..block.find("<!-- end -->").unwrap()];
    let mut items: Vec<String> = block
        .split([',', '\n'])
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    items.sort();
    items
}

/// Issue #54: the library's public items are the list docs/architecture.md gives: its public
/// modules and the re-exports of `lib.rs`.
#[test]
fn the_library_s_public_items_are_the_docs_list() {
    let lib = code_lines("crates/mem/src/lib.rs");
    let mut modules: Vec<String> = lib
        .iter()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';').map(String::from))
        .collect();
    modules.sort();
    let mut exports: Vec<String> = Vec::new();
    for line in lib.iter().filter(|l| l.starts_with("pub use ")) {
        let items = match (line.find('{'), line.find('}')) {
            (Some(a), Some(b)) => line[a + 1..b].to_string(),
            _ => line.rsplit("::").next().unwrap_or("").trim_end_matches(';').to_string(),
        };
        exports.extend(items.split(',').map(|i| i.trim().to_string()).filter(|i| !i.is_empty()));
    }
    exports.sort();
    assert_eq!(modules, listed("<!-- public modules -->"));
    assert_eq!(exports, listed("<!-- public re-exports -->"));
}
