//! Issue #43's ten-prompt scenario with the real Claude Code against the model stand-in: the
//! context hook's wall time in three settings (no model; the model in-process; the model with
//! the session's `mem mcp` answering the hooks), each in a fresh project. A `mem` wrapper on
//! PATH logs each call's wall time (with two `date` calls of its own, the same in every
//! setting). The figures are printed, for docs/benchmarks.md; the test checks only that every
//! setting ran its hooks and that the server's answers reached the model as in-process ones do.

use std::path::Path;

use serde_json::json;

use crate::agents_e2e::{Project, StandIn, agents};
use crate::util::model_dir;

/// The prompts: questions the memories answer.
const PROMPTS: [&str; 10] = [
    "How do we deploy to production?",
    "Which package manager do we use?",
    "Where do secrets come from?",
    "Why does the login test fail on staging?",
    "Which database does the billing service use?",
    "How are errors reported?",
    "What is the staging server?",
    "Who reviews migrations?",
    "How long do we keep logs?",
    "What port does the API listen on?",
];

/// The memories of the project.
const MEMORIES: [&str; 8] = [
    "Deploys go out with make ship-prod from a tagged release commit, never from a branch.",
    "We use pnpm, never npm, for every package of the web client.",
    "Secrets come from the vault at startup; none is ever committed to the repository.",
    "The login test fails on staging when the session cookie domain is the production one.",
    "The billing service uses PostgreSQL 16; the reports read from a replica.",
    "Errors are reported to the error tracker through the logging middleware.",
    "Migrations are reviewed by the data team before they are merged.",
    "The API listens on port 8443 behind the proxy; logs are kept for 30 days.",
];

/// Writes a `mem` into `folder` that runs `real` and appends each call's wall time in ns and
/// its arguments to `log`.
fn timing_wrapper(folder: &Path, real: &Path, log: &Path) {
    std::fs::create_dir_all(folder).unwrap();
    let script = format!(
        "#!/bin/sh\nstart=$(date +%s%N)\n{:?} \"$@\"\nstatus=$?\nend=$(date +%s%N)\necho \
         \"$((end - start)) $*\" >> {:?}\nexit $status\n",
        real.display().to_string(),
        log.display().to_string()
    );
    let path = folder.join("mem");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The median of `values` (sorted here).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One setting's run: the context hooks' wall times (ms), and the project memories of each
/// prompt block the model got.
fn run_setting(agents: &Path, model: bool, served: bool) -> (Vec<f64>, Vec<String>) {
    let mut project = Project::new(agents.to_path_buf());
    project.served = served;
    if model {
        let config = project.home.path().join(".config/mem/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        let text = format!("[embed]\nmodel_dir = {:?}\n", model_dir().display().to_string());
        std::fs::write(config, text).unwrap();
    }
    // Every `mem` the agent runs is the wrapper: set up after it is on PATH.
    let log = project.home.path().join("mem-calls.log");
    let wrapped = project.home.path().join("timed-bin");
    let real = project.mem_folder.join("mem");
    timing_wrapper(&wrapped, &real, &log);
    project.mem_folder = wrapped.clone();
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    // The user's settings name mem by its absolute path (the binary that ran setup): the
    // wrapper's there too.
    let user_settings = project.home.path().join(".claude/settings.json");
    let text = std::fs::read_to_string(&user_settings).unwrap();
    let real = real.canonicalize().unwrap().display().to_string();
    let wrapper = wrapped.join("mem").display().to_string();
    std::fs::write(&user_settings, text.replace(&real, &wrapper)).unwrap();
    // The facts are episodic: the session's start lists key (semantic and procedural)
    // memories, which these fill, so that each prompt's hook has its own to recall.
    for text in MEMORIES {
        project.mem_ok(&["add", "--type", "episodic", "--importance", "5", text]);
    }
    for i in 0..20 {
        let text =
            format!("Convention {i}: module {i} of the shop keeps its fixtures in data/{i}.");
        project.mem_ok(&["add", "--force", "--type", "semantic", "--importance", "8", &text]);
    }
    project.mem_ok(&["index"]);
    std::fs::write(&log, "").unwrap();
    let stand_in = StandIn::start(json!({ "text": "Answered from the project's memory." }));
    ten_prompts_in_one_session(&project, &stand_in);
    let log = std::fs::read_to_string(log).unwrap();
    // Setup puts the prompt hook in the project's settings and, for sessions started in a
    // subfolder, `--project-only` in the user's: both run for each prompt, and the one that
    // comes second does nothing (`capture::once`). A prompt's time is its pair's longer one.
    let calls: Vec<f64> = log
        .lines()
        .filter(|line| line.contains(" context --hook claude --budget"))
        .map(|line| line.split(' ').next().unwrap().parse::<f64>().unwrap() / 1e6)
        .collect();
    assert_eq!(calls.len(), 2 * PROMPTS.len(), "two prompt hooks per prompt:\n{log}");
    let times = calls.chunks(2).map(|pair| pair[0].max(pair[1])).collect();
    // Of each prompt's block, the project's memories it holds, in order (digests of the
    // sessions carry ids and times of their own run).
    let blocks = stand_in
        .conversation()
        .iter()
        .flat_map(|body| crate::agents_e2e::memory_blocks(body))
        .filter(|block| block.contains("For the task"))
        .map(|block| {
            let held: Vec<&str> = block
                .lines()
                .filter_map(|line| MEMORIES.iter().find(|m| line.contains(&m[..40])).copied())
                .collect();
            held.join(" | ")
        })
        .collect();
    (times, blocks)
}

/// The ten prompts in one Claude Code process (`--input-format stream-json`), each sent once
/// the one before has its result: one session, whose `mem mcp` lives as long as it does, as in
/// an interactive session.
fn ten_prompts_in_one_session(project: &Project, stand_in: &StandIn) {
    use std::io::{BufRead, Write};
    let mut cmd = project.claude_command(stand_in);
    cmd.args(["-p", "--input-format", "stream-json", "--output-format", "stream-json"])
        .arg("--verbose")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for prompt in PROMPTS {
        let message = json!({ "type": "user", "message": { "role": "user", "content": prompt } });
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = lines.next().expect("claude ended before the prompt's result").unwrap();
            if serde_json::from_str::<serde_json::Value>(&line).is_ok_and(|v| v["type"] == "result")
            {
                break;
            }
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn e2e_served_hooks_in_ten_prompts_of_claude_code() {
    let Some(agents) = agents() else { return };
    let settings =
        [("no model", false, false), ("model", true, false), ("model+server", true, true)];
    let mut results = Vec::new();
    for (name, model, served) in settings {
        let (mut times, blocks) = run_setting(&agents, model, served);
        // The UserPromptSubmit hook of each prompt.
        assert!(times.len() >= PROMPTS.len(), "{name}: {} context hooks ran", times.len());
        let calls = times.len();
        results.push((name, median(&mut times), calls, blocks));
    }
    let plain = results[0].1;
    eprintln!("served_e2e: context hook wall time in ten prompts of Claude Code (median ms)");
    for (name, ms, calls, blocks) in &results {
        eprintln!(
            "  {name:14} {ms:7.1} ms  {:.2}x no model  ({calls} calls, {} prompt blocks)",
            ms / plain,
            blocks.len()
        );
    }
    // The same memories reach the model whether the hooks are served or not.
    assert!(!results[1].3.is_empty(), "the prompts got memories");
    assert_eq!(results[1].3, results[2].3, "served and in-process blocks differ");
}
