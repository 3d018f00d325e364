//! Issue #52 end to end ("what reaches the model arrives once"), with the real agents of
//! `tests/agents_e2e.rs` against the model stand-in:
//!
//! - a four-prompt session of each agent whose second prompt states a rule of 207 characters,
//!   the later prompts resumed (`--continue`, `exec resume --last`, `--resume latest`): every
//!   request after the rule holds it only in the user's own prompt, once (the fact taken from
//!   it is never sent back into its session; Gemini CLI's resume sends no earlier prompt, so
//!   its requests hold it nowhere);
//! - the next session of the same agent: its first request holds the fact once and the first
//!   session's digest once (no run of its words twice), and digest lines are at most half of
//!   mem's characters there; a token given to `mem add` is in no request;
//! - a line of `GEMINI.md` adopted into the project reaches Gemini CLI once;
//! - a Codex session with `CODEX_HOME` set has its hooks answered by its `mem mcp`.
//!
//! The figures are printed (`--nocapture`) before the targets are asserted; to measure another
//! build, set `MEM_E2E_MEM_FOLDER` (see `tests/facts_e2e.rs`); `MEM_E2E_DUMP=FOLDER` writes each
//! agent's requests there (`claude.jsonl`, ...).

use serde_json::{Value, json};

use mem::agent::Agent;

use crate::agents_e2e::{Project, StandIn, TOKEN, agents, memory_blocks};

/// The rule prompt 2 states, 207 characters.
const RULE: &str = "Note for this project: we deploy with make ship-prod from a tagged release \
                    commit only, after the staging smoke tests pass and the on-call engineer \
                    approves the change in the release channel on Slack.";

/// A part of [`RULE`] that only the rule holds: how often the model saw the rule.
const CORE: &str = "make ship-prod from a tagged release commit only";

/// The first session's prompts: the second states [`RULE`]; the others ask about deploys, so
/// that the session's digest answers the next session's prompt.
const PROMPTS: [&str; 4] = [
    "How do I run the test suite before a release?",
    RULE,
    "Which steps does a deploy to production take after the smoke tests pass?",
    "Who approves a deploy to production in the release channel, and how long does it take?",
];

/// The next session's prompt.
const NEXT: &str = "How do we deploy to production?";

/// The stand-in's answer to every prompt.
const ANSWER: &str = "Deploys go out through the release pipeline once the checks pass.";

/// The agents this test drives (the library's own names for them).
const AGENTS: [Agent; 4] = [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::OpenCode];

/// `mem setup` for `agent` alone.
fn set_up(agent: Agent, project: &Project) {
    match agent {
        Agent::Claude => drop(project.mem_ok(&["setup", "claude", "--scope", "project"])),
        Agent::Codex => {
            project.mem_ok(&["setup", "codex"]);
            project.trust_codex_hooks();
        }
        Agent::Gemini => drop(project.mem_ok(&["setup", "gemini"])),
        Agent::OpenCode => drop(project.mem_ok(&["setup", "opencode"])),
        other => panic!("{other} is not driven by this test"),
    }
}

/// One prompt to `agent`: a new session, or the last one resumed.
fn ask(agent: Agent, project: &Project, model: &StandIn, prompt: &str, resume: bool) {
    match agent {
        Agent::Claude => {
            drop(project.claude(model, prompt, if resume { &["--continue"] } else { &[] }))
        }
        Agent::Codex => {
            let args: &[&str] = if resume { &["resume", "--last", prompt] } else { &[prompt] };
            project.codex_with(model, args);
        }
        Agent::Gemini => {
            project.gemini(model, prompt, if resume { &["--resume", "latest"] } else { &[] });
        }
        Agent::OpenCode => {
            crate::opencode_e2e::opencode(
                project,
                model,
                prompt,
                if resume { &["--continue"] } else { &[] },
            );
        }
        other => panic!("{other} is not driven by this test"),
    }
}

/// Whether a line of a block is a memory's (a list item naming an id in backticks).
fn memory_line(line: &str) -> bool {
    line.starts_with("- ") && line.contains('`')
}

/// The text a memory line gives of its memory: after the `: ` that ends its head.
fn line_text(line: &str) -> &str {
    line.split_once("): ").or_else(|| line.split_once("`: ")).map_or("", |(_, text)| text)
}

/// The runs of six words that occur more than once in `texts` together.
fn repeated_runs(texts: &[&str]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut twice = Vec::new();
    for text in texts {
        let words: Vec<String> = text
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        for run in words.windows(6) {
            let run = run.join(" ");
            if !seen.insert(run.clone()) && !twice.contains(&run) {
                twice.push(run);
            }
        }
    }
    twice
}

/// What one agent's sessions showed.
struct Figures {
    agent: Agent,
    /// For each request after the rule in the first session: how many times it held the rule's
    /// words, and how many of these were the user's prompt (a resumed Gemini CLI session sends
    /// no earlier prompt).
    resumed: Vec<(usize, usize)>,
    /// The next session's first request: copies of the rule's fact, mem's characters, digest
    /// characters, the first session's digest lines and the runs of words they repeat.
    fact: usize,
    memory: usize,
    digests: usize,
    digest_lines: Vec<String>,
    repeated: Vec<String>,
    /// Whether any request of either session held the token given to `mem add`.
    token: bool,
}

/// One agent's two sessions (see the module's documentation).
fn run(agent: Agent, agents: std::path::PathBuf) -> Figures {
    let project = Project::new(agents);
    set_up(agent, &project);
    let secret = format!("The deploy bot reads GITHUB_TOKEN={TOKEN} from the vault");
    project.mem_ok(&["add", "--type", "semantic", "--importance", "6", &secret]);
    let mut requests = Vec::new();
    let mut resumed = Vec::new();
    for (turn, prompt) in PROMPTS.iter().enumerate() {
        let model = StandIn::start(json!({ "text": ANSWER }));
        ask(agent, &project, &model, prompt, turn > 0);
        let conversation = model.conversation();
        assert!(!conversation.is_empty(), "{}: no request for prompt {}", agent.name(), turn + 1);
        if turn >= 2 {
            resumed.extend(
                conversation.iter().map(|r| (r.matches(CORE).count(), r.matches(RULE).count())),
            );
        }
        requests.extend(conversation);
    }
    let facts: Vec<String> = project
        .memories()
        .into_iter()
        .filter(|(path, text)| !path.starts_with("sessions/") && text.contains(CORE))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(facts.len(), 1, "{}: the rule became one fact: {facts:?}", agent.name());
    let digest = project
        .memories()
        .into_iter()
        .find(|(path, _)| path.starts_with("sessions/"))
        .map(|(path, _)| path.trim_start_matches("sessions/").trim_end_matches(".md").to_string())
        .unwrap_or_else(|| panic!("{}: no digest of the first session", agent.name()));
    let model = StandIn::start(json!({ "text": ANSWER }));
    ask(agent, &project, &model, NEXT, false);
    let conversation = model.conversation();
    let first = conversation.first().cloned().unwrap_or_default();
    requests.extend(conversation);
    if let Some(dir) = std::env::var_os("MEM_E2E_DUMP").map(std::path::PathBuf::from) {
        std::fs::write(dir.join(format!("{}.jsonl", agent.name())), requests.join("\n")).unwrap();
    }
    let blocks = memory_blocks(&first);
    let lines: Vec<&str> =
        blocks.iter().flat_map(|b| b.lines()).filter(|l| memory_line(l)).collect();
    let digest_lines: Vec<String> =
        lines.iter().filter(|l| l.contains("`session-")).map(|l| l.to_string()).collect();
    let own: Vec<&str> =
        lines.iter().filter(|l| l.contains(&format!("`{digest}`"))).map(|l| line_text(l)).collect();
    let titles: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains(&format!("`{digest}`")))
        .filter_map(|l| l.split("**").nth(1))
        .collect();
    let repeated = repeated_runs(&[own.as_slice(), titles.as_slice()].concat());
    Figures {
        agent,
        resumed,
        fact: first.matches(CORE).count(),
        memory: blocks.iter().map(|b| b.chars().count()).sum(),
        digests: digest_lines.iter().map(|l| l.chars().count()).sum(),
        digest_lines: lines
            .iter()
            .filter(|l| l.contains(&format!("`{digest}`")))
            .map(|l| l.to_string())
            .collect(),
        repeated,
        token: requests.iter().any(|r| r.contains(TOKEN)),
    }
}

/// The characters in a share of a total, as a whole percentage.
fn percent(part: usize, whole: usize) -> usize {
    (part * 100 + whole / 2).checked_div(whole).unwrap_or(0)
}

/// Issue #52's "Done when", the agents' part: the next session gets the fact and the digest
/// once, digests at most half of mem's characters; a resumed session holds the fact only in
/// the user's own prompt; a token given to `mem add` reaches no request.
#[test]
fn the_fact_and_the_digest_reach_the_model_once() {
    let Some(agents) = agents() else { return };
    let figures: Vec<Figures> =
        AGENTS.into_iter().map(|agent| run(agent, agents.clone())).collect();
    eprintln!("once_e2e, mem from {}", crate::agents_e2e::mem_folder().display());
    eprintln!(
        "| agent | rule in the resumed requests | next session: rule | memory chars | digest chars | digest % | words repeated |"
    );
    eprintln!("|---|---|---:|---:|---:|---:|---|");
    for f in &figures {
        eprintln!(
            "| {} | {:?} | {} | {} | {} | {} % | {} |",
            f.agent.name(),
            f.resumed,
            f.fact,
            f.memory,
            f.digests,
            percent(f.digests, f.memory),
            f.repeated.len()
        );
    }
    for f in &figures {
        eprintln!("\n{}: the first session's digest in the next one:", f.agent.name());
        f.digest_lines.iter().for_each(|l| eprintln!("{l}"));
    }
    let mut missed = Vec::new();
    for f in &figures {
        let name = f.agent.name();
        // Only in the user's own prompt, once (or not at all where the agent's resume sends no
        // earlier prompt: the fact is not sent in its place).
        let own = |&(all, prompt): &(usize, usize)| all == prompt && prompt <= 1;
        if f.resumed.is_empty() || !f.resumed.iter().all(own) {
            missed.push(format!(
                "{name}: the rule in the resumed requests, (copies, in the user's prompt): {:?}",
                f.resumed
            ));
        }
        if f.fact != 1 {
            missed.push(format!(
                "{name}: the rule {} times in the next session's first request",
                f.fact
            ));
        }
        if f.digest_lines.is_empty() {
            missed.push(format!("{name}: the first session's digest is not in the next one"));
        }
        if !f.repeated.is_empty() {
            missed.push(format!(
                "{name}: the digest says again {:?}:\n{}",
                f.repeated,
                f.digest_lines.join("\n")
            ));
        }
        if f.digests * 2 > f.memory {
            missed.push(format!(
                "{name}: digests are {} % of mem's characters (at most 50 %)",
                percent(f.digests, f.memory)
            ));
        }
        if f.token {
            missed.push(format!("{name}: a request holds the token given to mem add"));
        }
    }
    assert!(missed.is_empty(), "issue #52's targets missed:\n{}", missed.join("\n"));
}

/// The line of the project's `GEMINI.md` that the test adopts.
const GEMINI_LINE: &str = "Releases are cut on Thursdays by the on-call engineer";

/// Issue #52, item 3: a line of Gemini CLI's global `GEMINI.md` adopted into mem reaches Gemini
/// CLI once (from its own file), and the other agents once (from mem).
#[test]
fn an_adopted_gemini_line_reaches_gemini_once() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "gemini"]);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    let global = project.home.path().join(".gemini/GEMINI.md");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, format!("# Personal memory\n\n- {GEMINI_LINE}.\n")).unwrap();
    let hits: Value = serde_json::from_str(&project.mem_ok(&[
        "recall",
        "--layer",
        "gemini",
        "--json",
        "releases cut on thursdays",
    ]))
    .unwrap();
    let id = hits[0]["id"].as_str().expect("the line, as Gemini CLI's memory").to_string();
    project.mem_ok(&["adopt", &id]);
    let model = StandIn::start(json!({ "text": "On Thursdays." }));
    project.gemini(&model, "When are releases cut?", &[]);
    let first = model.conversation().into_iter().next().expect("a Gemini CLI request");
    eprintln!(
        "once_e2e: the adopted line in Gemini CLI's first request: {} times",
        first.matches(GEMINI_LINE).count()
    );
    assert_eq!(first.matches(GEMINI_LINE).count(), 1, "{:?}", memory_blocks(&first));
    let model = StandIn::start(json!({ "text": "On Thursdays." }));
    project.claude(&model, "When are releases cut?", &[]);
    let first = model.conversation().into_iter().next().expect("a Claude Code request");
    assert_eq!(first.matches(GEMINI_LINE).count(), 1, "{:?}", memory_blocks(&first));
}

/// Issue #52, item 4: with `CODEX_HOME` set (as every Codex of these tests has it), the
/// session's `mem mcp` answers Codex's hooks: asked from a command the session runs, the
/// root's server has the same key as that command and has answered the session's hooks.
#[test]
fn a_codex_session_with_codex_home_is_served() {
    let Some(agents) = agents() else { return };
    let mut project = Project::new(agents);
    project.served = true;
    project.mem_ok(&["setup", "codex"]);
    project.trust_codex_hooks();
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", GEMINI_LINE]);
    // Codex's shell is a login shell, whose PATH is the system's: mem by its path.
    let mem = project.mem_folder.join("mem");
    let cmd = format!(
        "'{}' health --json > served.json 2> served.err; echo $? >> served.err",
        mem.display()
    );
    let model = StandIn::start(json!({
        "tool": "exec_command",
        "input": { "cmd": cmd, "yield_time_ms": 30000 },
        "text": "Checked.",
    }));
    project.codex(&model, "when are releases cut");
    let health = std::fs::read_to_string(project.repo().join("served.json")).unwrap_or_else(|_| {
        panic!("the session did not run mem health: {:?}", model.conversation())
    });
    let err = std::fs::read_to_string(project.repo().join("served.err")).unwrap_or_default();
    let health: Value =
        serde_json::from_str(&health).unwrap_or_else(|e| panic!("{e}: {health}{err}"));
    let servers = health["served_hooks"]["servers"].as_array().cloned().unwrap_or_default();
    eprintln!("once_e2e: Codex with CODEX_HOME, the root's servers: {servers:?}");
    let serving = servers.iter().find(|s| s["differs"].as_array().is_some_and(Vec::is_empty));
    let answered = serving.and_then(|s| s["answered"].as_u64()).unwrap_or(0);
    assert!(answered >= 2, "the session's hooks were not served: {health}");
    assert!(model.conversation()[0].contains(GEMINI_LINE), "the served block reached the model");
}
