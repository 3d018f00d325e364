//! Hook mode (`--hook claude|codex`) of the commands an agent's hooks run: the payload read
//! from stdin, the answer in the shape that agent accepts, and exit status 0 whatever happens,
//! so that no agent is ever blocked or looped by its memory. Failures go to stderr and to
//! `.mem/capture.log` (reported by `mem health`).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use mem::agent::{Agent, codex};
use mem::capture;

use mem::store::RootSource;

use super::Globals;

/// How long stdin may stay silent before the payload is given up on. Some hook runners do not
/// close stdin, so reading stops as soon as a whole payload has arrived.
const STDIN_IDLE: Duration = Duration::from_secs(10);

/// The values of an argument that names an agent (`--hook`, `mem setup`): each agent's name,
/// in alphabetical order.
pub fn agent_parser() -> impl clap::builder::TypedValueParser<Value = Agent> {
    let mut names = Agent::ALL.map(Agent::name);
    names.sort();
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names)
        .map(|name| Agent::from_name(&name).expect("a name clap checked"))
}

/// The help of `--project-only`, which every hook command takes.
pub const PROJECT_ONLY_HELP: &str = "With --hook: do nothing unless the payload's working \
directory is in a project with a memory root (a hook in the user's own agent configuration, set \
up by `mem setup --scope project` so that sessions started in a project's subfolders are \
captured, never captures elsewhere)";

/// `hook_event_name` of the hook run when a session starts.
pub const SESSION_START: &str = "SessionStart";

/// What a hook payload says about the moment (the fields the answers need).
#[derive(Debug, Default)]
pub struct Event {
    /// `hook_event_name`.
    pub name: Option<String>,
    /// `prompt`, on the agent's prompt event (see [`Event::of`]).
    pub prompt: Option<String>,
    /// `cwd`: the agent's working directory.
    pub cwd: Option<String>,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `transcript_path`.
    pub transcript: Option<String>,
    /// `source`, on a SessionStart: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
}

impl Event {
    /// The fields of `agent`'s payload, its prompt as the user typed it (what the agent adds
    /// to it taken out), and `None` for it on any other event than the agent's prompt event.
    pub fn of(agent: Agent, payload: &[u8]) -> Event {
        let mut event = Event::parse(payload);
        let spec = agent.spec();
        event.prompt = event
            .prompt
            .filter(|_| event.name.as_deref() == Some(spec.prompt_event))
            .map(|p| (spec.clean_prompt)(&p))
            .filter(|p| !p.trim().is_empty());
        event
    }

    /// The fields of a payload; those missing or not text are `None` (a payload that does not
    /// parse gives an event with no field).
    pub fn parse(payload: &[u8]) -> Event {
        let value = mem::json::parse_json_lenient(&String::from_utf8_lossy(payload)).ok();
        let field = |key: &str| {
            value
                .as_ref()
                .and_then(|v| v.get(key))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
                .filter(|s| !s.trim().is_empty())
        };
        Event {
            name: field("hook_event_name"),
            prompt: field("prompt"),
            cwd: field("cwd"),
            session_id: field("session_id"),
            transcript: field("transcript_path"),
            source: field("source"),
        }
    }
}

/// A hook that failed: the reason on stderr and, when the memory root can be found, in
/// `.mem/capture.log`, where `mem health` reports it. The agent sees exit status 0.
pub fn report_failure(ctx: &Globals, payload: &[u8], command: &str, error: &anyhow::Error) {
    let message = format!("{command} hook: {}", super::describe(error));
    let event = Event::parse(payload);
    let Ok(Some(root)) = ctx.existing_root_near(event.cwd.as_deref()) else {
        eprintln!("mem: {message} (not logged: no memory root)");
        return;
    };
    let entry = capture::LogEntry::failure(payload, &message, ctx.now);
    match capture::append_log(&root, &entry) {
        Ok(()) => eprintln!("mem: {message}"),
        Err(e) => eprintln!("mem: {message} (and could not log it: {e})"),
    }
}

/// What a `--project-only` hook (set up in the user's file for the sake of the projects that
/// have a memory root, so it runs in every repository) does at the root found from its
/// payload's working directory.
pub enum ProjectOnly {
    /// Act: a root made, set up or allowed on this machine.
    Act,
    /// Nothing: no project with a memory root there.
    Outside,
    /// Leave the root alone and say this line: it was not made, set up or allowed on this
    /// machine (a cloned repository's `.memory/`), so its memories may not reach the session,
    /// nor the session's digest its folder.
    HeldBack(String),
}

impl ProjectOnly {
    /// The gate for the root `root`, found as `source`.
    pub fn at(root: &std::path::Path, source: RootSource) -> ProjectOnly {
        if source == RootSource::Default {
            return ProjectOnly::Outside;
        }
        if super::machine::is_known(root) {
            return ProjectOnly::Act;
        }
        ProjectOnly::HeldBack(format!(
            "mem: the memory root {} was not made, set up or allowed on this machine (a cloned \
             repository's?): its memories are held back and nothing is captured into it; run \
             `mem allow` there to use it",
            root.display()
        ))
    }
}

/// Whether this is the first of identical calls of `command`'s hook on `payload` (the agent
/// running mem's hook from two of its files) in the memory root `root` of the payload's cwd:
/// only the first acts, see [`capture::once`].
pub fn first_call(
    ctx: &Globals,
    root: &std::path::Path,
    agent: Agent,
    command: &str,
    payload: &[u8],
) -> anyhow::Result<bool> {
    if !root.join(mem::config::CONFIG_FILE).exists() {
        // The per-user root, not made yet: made by the command if it needs one, not for this.
        return Ok(true);
    }
    Ok(capture::once::claim(root, &format!("{agent:?} {command}"), payload, ctx.now)?)
}

/// A hook's answer: the text the agent reads, and what to do once it was written to the agent
/// (the injection ledger records only what reached it).
pub struct Answer {
    /// What is printed.
    pub text: String,
    /// Run once `text` was written and flushed; not run when the write failed.
    pub delivered: Option<Box<dyn FnOnce() -> anyhow::Result<()>>>,
}

/// Runs a hook's command: reads the payload, prints `answer`'s text when it has one (unless
/// `project_only` and the [`ProjectOnly`] gate says not to, or not the [`first_call`]), and
/// never fails: a failure is reported with [`report_failure`] as `command`'s.
pub fn run(
    ctx: &Globals,
    agent: Agent,
    command: &str,
    project_only: bool,
    answer: impl FnOnce(&[u8], &Event) -> anyhow::Result<Option<String>>,
) -> anyhow::Result<()> {
    run_answer(ctx, agent, command, project_only, |payload, event| {
        Ok(answer(payload, event)?.map(|text| Answer { text, delivered: None }))
    })
}

/// [`run`] with an [`Answer`]: its `delivered` runs once the text was written to the agent. A
/// write that fails (the agent closed its end: its timeout gave up on the hook) is a failure,
/// reported and logged.
pub fn run_answer(
    ctx: &Globals,
    agent: Agent,
    command: &str,
    project_only: bool,
    answer: impl FnOnce(&[u8], &Event) -> anyhow::Result<Option<Answer>>,
) -> anyhow::Result<()> {
    let mut payload = Vec::new();
    let answer = read_payload()
        .map_err(|(partial, message)| {
            payload = partial;
            anyhow::anyhow!(message)
        })
        .and_then(|read| {
            payload = read;
            let event = Event::of(agent, &payload);
            // The root is located once, for both gates.
            let (root, source) = ctx.locate_root(event.cwd.as_deref())?;
            match project_only.then(|| ProjectOnly::at(&root, source)) {
                None | Some(ProjectOnly::Act) => {}
                Some(ProjectOnly::Outside) => return Ok(None),
                Some(ProjectOnly::HeldBack(line)) => {
                    // Said once, where the session starts; the other hooks leave the root alone.
                    eprintln!("{line}");
                    let start = event.name.as_deref() == Some(SESSION_START);
                    let text = (command == "context" && start)
                        .then(|| agent.context_answer(SESSION_START, &line))
                        .flatten();
                    return Ok(text.map(|text| Answer { text, delivered: None }));
                }
            }
            if !first_call(ctx, &root, agent, command, &payload)? {
                return Ok(None);
            }
            answer(&payload, &event)
        });
    let failed = match answer {
        Ok(Some(Answer { text, delivered })) => match super::print_text(&format!("{text}\n")) {
            Err(e) => Some(e.context(
                "the answer could not be written to the agent (the ledger does not count it \
                     as sent)",
            )),
            Ok(()) => delivered.and_then(|delivered| delivered().err()),
        },
        Ok(None) => None,
        Err(e) => Some(e),
    };
    if let Some(e) = failed {
        report_failure(ctx, &payload, command, &e);
    }
    Ok(())
}

/// The payload on stdin, up to [`capture::MAX_PAYLOAD_BYTES`]; on failure, what was read and
/// why. Reading stops at the end of stdin or as soon as a whole JSON payload has arrived, and
/// fails after [`STDIN_IDLE`] without either.
pub fn read_payload() -> std::result::Result<Vec<u8>, (Vec<u8>, String)> {
    if std::io::stdin().is_terminal() {
        return Err((
            Vec::new(),
            "a hook payload (JSON) is read on stdin, and stdin is a terminal".into(),
        ));
    }
    let (tx, rx) = mpsc::channel();
    // The reader thread may stay blocked on a stdin that is never closed; the process does
    // not wait for it.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let read = match stdin.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) => Err(e),
            };
            let last = !matches!(&read, Ok(chunk) if !chunk.is_empty());
            if tx.send(read).is_err() || last {
                return;
            }
        }
    });
    let mut data = Vec::new();
    loop {
        match rx.recv_timeout(STDIN_IDLE) {
            Ok(Ok(chunk)) if chunk.is_empty() => return Ok(data),
            Ok(Ok(chunk)) => {
                data.extend_from_slice(&chunk);
                if data.len() > capture::MAX_PAYLOAD_BYTES {
                    let message = format!(
                        "the hook payload on stdin is over {} MiB",
                        capture::MAX_PAYLOAD_BYTES >> 20
                    );
                    return Err((data, message));
                }
                if capture::payload_complete(&data) {
                    return Ok(data);
                }
            }
            Ok(Err(e)) => {
                return Err((data, format!("cannot read the hook payload on stdin: {e}")));
            }
            Err(RecvTimeoutError::Timeout) => {
                let message = if data.is_empty() {
                    format!("no hook payload on stdin after {} s", STDIN_IDLE.as_secs())
                } else {
                    format!(
                        "the hook payload on stdin stopped after {} bytes, incomplete, and stdin \
                         stayed open for {} s",
                        data.len(),
                        STDIN_IDLE.as_secs()
                    )
                };
                return Err((data, message));
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(data),
        }
    }
}

/// Codex's home folder: `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".codex")))
}

/// Gemini CLI's folder: `.gemini` in `$GEMINI_CLI_HOME`, else in the home folder.
pub fn gemini_home() -> Option<PathBuf> {
    std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .map(|h| h.join(".gemini"))
}

/// The folder Codex writes its session rollouts to (`<codex home>/sessions`).
pub fn codex_sessions() -> Option<PathBuf> {
    codex_home().map(|h| h.join("sessions"))
}

impl Event {
    /// The session's transcript: `transcript_path` when it names a file, else the Codex
    /// rollout of `session_id` (Codex's payloads may name none).
    pub fn transcript_file(&self) -> Option<PathBuf> {
        let given = self.transcript.as_deref().map(PathBuf::from).filter(|t| t.is_file());
        given.or_else(|| {
            let id = self.session_id.as_deref()?;
            codex::find_rollout(&codex_sessions()?, id)
        })
    }
}
