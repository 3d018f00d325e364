//! Hook mode (`--hook AGENT`) of the commands an agent's hooks run: the payload read
//! from stdin, the answer in the shape that agent accepts, and exit status 0 whatever happens,
//! so that no agent is ever blocked or looped by its memory. Failures go to stderr and to
//! `.mem/capture.log` (reported by `mem health`).

use std::io::{IsTerminal, Read};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use mem::agent::Agent;
use mem::capture::{self, Payload};

use crate::shared::Globals;
use crate::shared::gate::{Gate, Started};

/// How long stdin may stay silent before the payload is given up on. Some hook runners do not
/// close stdin, so reading stops as soon as a whole payload has arrived.
const STDIN_IDLE: Duration = Duration::from_secs(10);

/// A hook that failed: the reason on stderr and, when the memory root can be found, in
/// `.mem/capture.log`, where `mem health` reports it. The agent sees exit status 0.
pub fn report_failure(ctx: &Globals, payload: &[u8], command: &str, error: &anyhow::Error) {
    let message = format!("{command} hook: {}", crate::shared::output::describe(error));
    let cwd = Payload::read(payload).cwd;
    let Ok(Some(root)) = ctx.existing_root_near(cwd.as_deref()) else {
        eprintln!("mem: {message} (not logged: no memory root)");
        return;
    };
    let entry = capture::LogEntry::failure(payload, &message, ctx.now);
    match capture::append_log(&root, &entry) {
        Ok(()) => eprintln!("mem: {message}"),
        Err(e) => eprintln!("mem: {message} (and could not log it: {e})"),
    }
}

/// Whether this is the first of identical calls of `command`'s hook on `payload` (the agent
/// running mem's hook from two of its files) in the memory root `root` of the payload's cwd:
/// only the first acts, see [`capture::once`].
pub fn first_call(
    ctx: &Globals,
    found: &mem::open::Found,
    agent: Agent,
    command: &str,
    payload: &[u8],
) -> anyhow::Result<bool> {
    let root = &found.root;
    if !found.is_made() {
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
/// the [`Gate`] of the registration that `started` it says not to, or not the [`first_call`]),
/// and never fails: a failure is reported with [`report_failure`] as `command`'s.
pub fn run(
    ctx: &Globals,
    agent: Agent,
    command: &str,
    started: Started,
    answer: impl FnOnce(Agent, &[u8], &Payload) -> anyhow::Result<Option<String>>,
) -> anyhow::Result<()> {
    run_answer(ctx, agent, command, started, |agent, payload, event, _| {
        Ok(answer(agent, payload, event)?.map(|text| Answer { text, delivered: None }))
    })
}

/// Where a hook acts: what opening its memory depends on, and its root, found once for the
/// gates and the answer.
pub struct Here {
    /// The surroundings of the payload's folder.
    pub surroundings: mem::open::Surroundings,
    /// Its root and how it was found.
    pub found: mem::open::Found,
}

/// [`run`] with an [`Answer`]: its `delivered` runs once the text was written to the agent. A
/// write that fails (the agent closed its end: its timeout gave up on the hook) is a failure,
/// reported and logged.
pub fn run_answer(
    ctx: &Globals,
    agent: Agent,
    command: &str,
    started: Started,
    answer: impl FnOnce(Agent, &[u8], &Payload, Here) -> anyhow::Result<Option<Answer>>,
) -> anyhow::Result<()> {
    let mut payload = Vec::new();
    let answer = read_payload()
        .map_err(|(partial, message)| {
            payload = partial;
            anyhow::anyhow!(message)
        })
        .and_then(|read| {
            payload = read;
            // The agent that really runs the hook: one that runs another's settings says so.
            let agent = agent.of_hook_payload(&payload);
            let event = Payload::of(agent, &payload);
            // The root is located once, for both gates and the answer.
            let surroundings = ctx.surroundings(event.cwd.as_deref())?;
            let found = mem::open::locate(&surroundings)?;
            let (root, source) = (found.root.clone(), found.source);
            match Gate::at(&root, source, started) {
                Gate::Act => {}
                Gate::Outside => return Ok(None),
                Gate::HeldBack(line) => {
                    // Said once, where the session starts; the other hooks leave the root alone.
                    eprintln!("{line}");
                    let start_event = agent.spec().events.start;
                    let start = event.hook_event.as_deref() == Some(start_event);
                    let text = (command == "context" && start)
                        .then(|| agent.context_answer(start_event, &line))
                        .flatten();
                    return Ok(text.map(|text| Answer { text, delivered: None }));
                }
            }
            if !first_call(ctx, &found, agent, command, &payload)? {
                return Ok(None);
            }
            answer(agent, &payload, &event, Here { surroundings, found })
        });
    let failed = match answer {
        Ok(Some(Answer { text, delivered })) => {
            match crate::shared::output::print_text(&format!("{text}\n")) {
                Err(e) => Some(e.context(
                    "the answer could not be written to the agent (the ledger does not count it \
                     as sent)",
                )),
                Ok(()) => delivered.and_then(|delivered| delivered().err()),
            }
        }
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
