//! Issue #39 ("facts first"), end to end: the scenario of its "Targets", with the real agents
//! of `tests/agents_e2e.rs` against the model stand-in.
//!
//! A project where ten facts were added with `mem add` (one of them "We use pnpm, never npm"),
//! then fifteen Claude Code sessions were captured (five that only ask about the package
//! manager, five about deploys, one that states the staging server, four with tool calls), then
//! a ten-prompt session in each of Claude Code (`--continue`), Codex (`exec resume --last`) and
//! Gemini CLI (`--resume latest`). Each agent's session starts from the same `.memory/` (a copy
//! taken after the fifteen sessions), so the three are measured on the same root and no agent
//! sees another's ten prompts as a digest. From the stand-in's log, per prompt (the first
//! request of its turn): the characters of mem's context blocks, those of digest lines, whether
//! the stated staging server arrived whole, the first memory line of the prompt's own block and
//! whether the facts the prompt asks for reached the model. The figures are printed (for docs),
//! then the targets are asserted.
//!
//! `MEM_E2E_DUMP=FOLDER` also writes each agent's requests there (`claude.jsonl`, ...) and its
//! `.memory/` after its session (`claude-memory`, ...).
//!
//! To measure another build of `mem` with the same sessions (the base figures below came so):
//! `MEM_E2E_MEM_FOLDER=/path/to/release CI=true cargo test --test integration -- facts_e2e
//! --nocapture`, with `MEM_E2E_AGENTS` set to what `scripts/e2e-agents.sh` prints. Without
//! `MEM_E2E_MEM_FOLDER`, the same command runs the `mem` that cargo builds for the tests.

use serde_json::{Value, json};

use crate::agents_e2e::{Project, StandIn, agents, first_request, memory_blocks};

/// The fact of the package-manager prompt.
const PNPM: &str = "We use pnpm, never npm";

/// What the user stated in one captured session, and what prompt 1 asks for.
const STAGE: &str = "stage-7.example.net on port 8443";

/// The ten facts: type, importance, text. The first is [`PNPM`].
const FACTS: [(&str, &str, &str); 10] = [
    ("semantic", "8", PNPM),
    ("procedural", "7", "Deploy to production with make ship-prod from a tagged release commit"),
    ("procedural", "6", "Run the test suite with cargo nextest run --workspace before pushing"),
    ("semantic", "6", "The main database is PostgreSQL 16; migrations live in db/migrations"),
    ("procedural", "5", "Format code with rustfmt at max width 100 and lint with clippy"),
    ("semantic", "5", "Feature branches are squash-merged into main after one approving review"),
    ("semantic", "5", "Continuous integration runs on Buildkite and a red pipeline blocks merging"),
    ("semantic", "4", "The dev server listens on port 3000 and the API gateway on port 4000"),
    ("semantic", "6", "Secrets come from Vault under kv/shop; never commit .env files"),
    ("semantic", "4", "Errors are reported to Sentry and alerts page the on-call engineer"),
];

/// The ten prompts of each agent's session, each with the facts it asks for (indexes into
/// [`FACTS`]). Prompt 1 asks for the stated staging server; every fact is asked for once.
const PROMPTS: [(&str, &[usize]); 10] = [
    ("What is the staging server address?", &[]),
    ("How do I deploy to production?", &[1]),
    ("How do I run the test suite?", &[2]),
    ("which package manager should I use?", &[0]),
    ("Which database do we use, and where do migrations live?", &[3]),
    ("How should I format and lint the code?", &[4]),
    ("How are feature branches merged into main?", &[5]),
    ("What runs our continuous integration?", &[6]),
    ("Which ports do the dev server and the API listen on?", &[7]),
    ("Where do secrets come from, and where are errors reported?", &[8, 9]),
];

/// The package-manager prompt's index in [`PROMPTS`].
const PNPM_PROMPT: usize = 3;

/// Memory characters in the request of prompt 10 at the base commit, per agent.
/// Measured at 1e7ecd2 (its release build) on 2026-12-03,
/// with the agents `scripts/e2e-agents.sh` pins (Claude Code 2.1.197, Codex CLI 0.171.0,
/// Gemini CLI 0.61.0); two runs gave the same figures. Each with the share of it that is the
/// target: 0.66 for Claude Code and Codex, whose requests the issue measured (10,600 characters
/// in its run). Gemini CLI's base is smaller: its resumed history keeps none of the earlier
/// prompts, nor the context sent with them, so its request at prompt 10 holds the session
/// start's block alone (every key fact, which must stay); for it the target is not to grow.
const BASE: [(&str, usize, f64); 3] =
    [("claude", 7003, 0.66), ("codex", 7003, 0.66), ("gemini", 2211, 1.0)];

/// The question-only sessions: the prompt, and the stand-in's text answer.
const QUESTIONS: [(&str, &str); 10] = [
    ("Check the memory: which package manager do we use?", "You use pnpm."),
    ("Which package manager does this project use?", "This project uses pnpm."),
    ("Check the memory: is it npm or pnpm here?", "It is pnpm."),
    ("What package manager should the web client use?", "The web client uses pnpm."),
    ("Remind me which package manager we picked", "You picked pnpm."),
    ("Check the memory: how do we deploy?", "Run make ship-prod from a tagged release."),
    ("How does a deploy to production work here?", "With make ship-prod, from a release tag."),
    ("Check the memory: what is the deploy command?", "The deploy command is make ship-prod."),
    ("Can I deploy from a feature branch?", "No: deploys go from a tagged release commit."),
    ("Who runs the production deploys?", "Whoever tags the release runs make ship-prod."),
];

/// The session that states a fact.
const NOTE: &str = "Note for this project: we use pnpm, never npm, and the staging server is \
                    stage-7.example.net on port 8443.";

/// What one prompt's first request held.
struct Turn {
    /// Characters of mem's context blocks.
    memory: usize,
    /// Of these, characters of digest lines (list items whose id starts with `session-`).
    digests: usize,
    /// Whether [`STAGE`] is in the request.
    stage: bool,
    /// Whether [`STAGE`] is in a memory line of its own (not a digest's).
    own: bool,
    /// The first memory line of the prompt's own block (`## For the task: PROMPT`), if any.
    first: Option<String>,
    /// The first memory line of the request (its first block, from the session's start).
    leading: Option<String>,
    /// For each fact the prompt asks for: whether its text is in the request.
    facts: Vec<(usize, bool)>,
}

/// The three agents, as the test runs them.
#[derive(Clone, Copy)]
enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    /// Turn `turn` (from 1) of a session: the first starts it, the others resume it.
    fn prompt(self, project: &Project, model: &StandIn, turn: usize, prompt: &str) {
        let first = turn == 1;
        match self {
            Agent::Claude => {
                project.claude(model, prompt, if first { &[] } else { &["--continue"] });
            }
            Agent::Codex => {
                let args: &[&str] = if first { &[prompt] } else { &["resume", "--last", prompt] };
                project.codex_with(model, args);
            }
            Agent::Gemini => {
                project.gemini(model, prompt, if first { &[] } else { &["--resume", "latest"] });
            }
        }
    }
}

/// Whether a line of a block is a memory (a list item naming an id in backticks).
fn memory_line(line: &str) -> bool {
    line.starts_with("- ") && line.contains('`')
}

/// Whether a memory line is a session's digest (its id starts with `session-`).
fn digest_line(line: &str) -> bool {
    memory_line(line) && line.contains("`session-")
}

/// A memory line's title (between its first `**` pair).
fn title(line: &str) -> Option<&str> {
    line.split("**").nth(1)
}

/// A memory line's title, clipped for the table.
fn title_of(line: &str) -> String {
    let title = title(line).unwrap_or(line);
    let mut short: String = title.chars().take(44).collect();
    if title.chars().count() > 44 {
        short.push('…');
    }
    short
}

/// What the first request of each prompt's turn held, from the stand-in's log.
fn measure(model: &StandIn) -> Vec<Turn> {
    PROMPTS
        .iter()
        .map(|(prompt, asks)| {
            let body = first_request(model, prompt)
                .unwrap_or_else(|| panic!("no request holds the prompt {prompt:?}"));
            let blocks = memory_blocks(&body);
            let memory = blocks.iter().map(|b| b.chars().count()).sum();
            let digests = blocks
                .iter()
                .flat_map(|b| b.lines())
                .filter(|l| digest_line(l))
                .map(|l| l.chars().count())
                .sum();
            let heading = format!("## For the task: {prompt}");
            let first = blocks
                .iter()
                .find(|b| b.contains(&heading))
                .and_then(|b| b.lines().find(|l| memory_line(l)).map(str::to_string));
            let own = blocks
                .iter()
                .flat_map(|b| b.lines())
                .any(|l| memory_line(l) && !digest_line(l) && l.contains(STAGE));
            let leading =
                blocks.iter().flat_map(|b| b.lines()).find(|l| memory_line(l)).map(String::from);
            let facts = asks.iter().map(|&f| (f, body.contains(FACTS[f].2))).collect();
            Turn { memory, digests, stage: body.contains(STAGE), own, first, leading, facts }
        })
        .collect()
}

/// The characters in a share of a total, as a whole percentage.
fn percent(part: usize, whole: usize) -> usize {
    (part * 100 + whole / 2).checked_div(whole).unwrap_or(0)
}

/// One agent's figures, a Markdown table with a row per prompt. The stage-7 column: `own`
/// (whole, in a memory line of its own), `digest` (whole, in a digest or elsewhere), `no`.
fn print_table(agent: Agent, turns: &[Turn]) {
    eprintln!("\n{}:\n", agent.name());
    eprintln!(
        "| prompt | memory chars | digest chars | digest % | stage-7 | facts reached | first line of the prompt's block |"
    );
    eprintln!("|---:|---:|---:|---:|---|---|---|");
    for (i, t) in turns.iter().enumerate() {
        let facts: Vec<String> = t
            .facts
            .iter()
            .map(|(f, ok)| format!("F{} {}", f + 1, if *ok { "yes" } else { "no" }))
            .collect();
        let stage = match (t.own, t.stage) {
            (true, _) => "own",
            (false, true) => "digest",
            (false, false) => "no",
        };
        eprintln!(
            "| {} | {} | {} | {} % | {stage} | {} | {} |",
            i + 1,
            t.memory,
            t.digests,
            percent(t.digests, t.memory),
            if facts.is_empty() { "-".to_string() } else { facts.join(", ") },
            t.first.as_deref().map_or("(no block)".to_string(), title_of),
        );
    }
}

/// The fifteen captured sessions, run with Claude Code against a stand-in each.
fn capture_sessions(project: &Project) {
    let (questions, deploys) = QUESTIONS.split_at(5);
    for (prompt, answer) in questions.iter().chain(deploys) {
        project.claude(&StandIn::start(json!({ "text": answer })), prompt, &[]);
    }
    project.claude(&StandIn::start(json!({ "text": "Noted." })), NOTE, &[]);
    let contributing = project.repo().join("CONTRIBUTING.md");
    let tools = [
        ("List the source files", "Bash", json!({ "command": "ls src" }), "src holds main.rs."),
        (
            "Run the unit tests and report the result",
            "Bash",
            json!({ "command": "echo 'test result: ok. 3 passed'" }),
            "The tests pass.",
        ),
        (
            "Write a CONTRIBUTING.md that states the branch policy",
            "Write",
            json!({
                "file_path": contributing.display().to_string(),
                "content": "# Contributing\n\nSquash-merge after one approving review.\n",
            }),
            "Wrote CONTRIBUTING.md.",
        ),
        ("Show the last commit", "Bash", json!({ "command": "git log --oneline -1" }), "One."),
    ];
    for (prompt, tool, input, answer) in tools {
        let model = StandIn::start(json!({ "tool": tool, "input": input, "text": answer }));
        project.claude(&model, prompt, &["--allowedTools", tool]);
        let calls = model.conversation().len();
        assert!(calls >= 2, "{prompt}: a tool call and the answer ({calls} requests)");
    }
}

/// Copies a folder with everything in it (`cp -a`).
fn copy_all(from: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("cp").arg("-a").arg(from).arg(to).status();
    assert!(status.unwrap().success(), "cp -a {} {}", from.display(), to.display());
}

/// The rank of the memory `id` in `mem recall QUERY --json`, and the hits down to it (at
/// least three): title and score.
fn recall_rank(project: &Project, query: &str, id: &str) -> (Option<usize>, Vec<String>) {
    let hits: Value = serde_json::from_str(&project.mem_ok(&["recall", query, "--json"])).unwrap();
    let hits = hits.as_array().unwrap();
    let rank = hits.iter().position(|h| h["id"] == id).map(|p| p + 1);
    let top = hits
        .iter()
        .take(rank.unwrap_or(0).max(3))
        .map(|h| format!("{} ({:.3})", h["title"].as_str().unwrap(), h["score"].as_f64().unwrap()))
        .collect();
    (rank, top)
}

/// Issue #39's targets, on its scenario. Expected to fail until the issue is done (the base
/// commit's figures are in [`BASE`]).
#[test]
fn facts_first_in_three_agents() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.set_up_claude_codex_gemini();
    let mut ids = Vec::new();
    for (kind, importance, text) in FACTS {
        let added =
            project.mem_ok(&["add", "--type", kind, "--importance", importance, "--json", text]);
        let added: Value = serde_json::from_str(&added).unwrap();
        ids.push(added["id"].as_str().unwrap().to_string());
    }
    capture_sessions(&project);
    let digests = project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/"));
    assert_eq!(digests.count(), 15, "fifteen digests: {:?}", project.memories());
    let (rank, top) = recall_rank(&project, "which package manager do we use", &ids[0]);
    // Each agent's session starts from this root.
    let saved = tempfile::tempdir().unwrap();
    let memory = project.repo().join(".memory");
    copy_all(&memory, &saved.path().join("memory"));
    let mut measured = Vec::new();
    for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
        std::fs::remove_dir_all(&memory).unwrap();
        copy_all(&saved.path().join("memory"), &memory);
        let model = StandIn::start(json!({ "text": "Answered from the project's memory." }));
        for (turn, (prompt, _)) in PROMPTS.iter().enumerate() {
            agent.prompt(&project, &model, turn + 1, prompt);
        }
        if let Some(dir) = std::env::var_os("MEM_E2E_DUMP").map(std::path::PathBuf::from) {
            let requests = model.conversation().join("\n");
            std::fs::write(dir.join(format!("{}.jsonl", agent.name())), requests).unwrap();
            copy_all(&memory, &dir.join(format!("{}-memory", agent.name())));
        }
        measured.push((agent, measure(&model)));
    }
    // The figures (docs/agents.md).
    let mem = project.mem_folder.display();
    eprintln!("facts_e2e (issue #39 scenario), mem from {mem}");
    let rank_text = rank.map_or("not found".to_string(), |r| r.to_string());
    eprintln!(
        "recall \"which package manager do we use\": the pnpm fact ranks {rank_text}; hits: {top:?}"
    );
    for (agent, turns) in &measured {
        print_table(*agent, turns);
    }
    // The targets.
    let mut missed = Vec::new();
    if rank != Some(1) {
        missed.push(format!("recall ranks the pnpm fact {rank_text}, not first"));
    }
    for (agent, turns) in &measured {
        let name = agent.name();
        if !turns[0].stage || !turns[0].own {
            missed.push(format!(
                "{name}: {STAGE:?} is not in the request of prompt 1 as a memory of its own"
            ));
        }
        // The fact comes first: in the prompt's own block when the hook sends one; when it
        // sends none (the session's context holds what answers the prompt already, sent once
        // per session), as the first memory of the request.
        let turn = &turns[PNPM_PROMPT];
        let first = turn.first.as_deref().or(turn.leading.as_deref());
        let pnpm = |l: &str| l.contains(&format!("`{}`", ids[0])) || title(l) == Some(PNPM);
        if !first.is_some_and(pnpm) {
            missed.push(format!(
                "{name}: the pnpm fact is not the first memory for prompt {}: {first:?}",
                PNPM_PROMPT + 1
            ));
        }
        let last = &turns[PROMPTS.len() - 1];
        if last.digests * 4 > last.memory {
            missed.push(format!(
                "{name}: digest lines are {} % of the memory characters at prompt 10 (at most 25 %)",
                percent(last.digests, last.memory)
            ));
        }
        let (_, base, share) = *BASE.iter().find(|(n, _, _)| *n == name).unwrap();
        if last.memory as f64 > share * base as f64 {
            missed.push(format!(
                "{name}: {} memory characters at prompt 10, more than {share} × {base} (the base's)",
                last.memory
            ));
        }
        for (turn, t) in turns.iter().enumerate() {
            for (fact, reached) in &t.facts {
                if !reached {
                    missed.push(format!(
                        "{name}: fact {} did not reach prompt {}",
                        fact + 1,
                        turn + 1
                    ));
                }
            }
        }
    }
    assert!(missed.is_empty(), "issue #39's targets missed:\n{}", missed.join("\n"));
}
