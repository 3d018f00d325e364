//! `mem setup pi`: mem's hooks and tools as an extension that pi loads at start, with no build
//! step and no question asked: `.pi/extensions/mem.ts` in the project (pi reads it when started
//! in the project's top folder), `extensions/mem.ts` in pi's folder (`~/.pi/agent`) for the user.
//! pi has no hook commands and no MCP client of its own: the extension runs mem's hook commands
//! on pi's events and asks the session's `mem mcp` for its two tools.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::check::Found;
use super::command::{USER_SCOPE, shell_word};
use super::{Change, Entry, Scope, Started, Target, own_file};

/// pi's entry.
pub const ENTRY: Entry = Entry {
    project_files: &[EXTENSION],
    changes,
    hooks_file: file,
    // pi loads both extensions, the user's and the project's: either is a whole set.
    full_set: |text| text.lines().next() == Some(FIRST_LINE),
    project_only_hooks: |_, _| None,
    notes: |scope, _| match scope {
        Scope::Project => vec![
            "pi loads a project's extensions only when started in its top folder (the \
             .pi/extensions/ of its working directory): for sessions started in a subfolder, \
             set mem up for the user instead (--scope user); mem's tools appear as mem_recall \
             and mem_remember",
        ],
        Scope::User => vec![
            "pi loads mem's extension in every session; mem's tools appear as \
             mem_recall and mem_remember",
        ],
    },
    commands: |project, _, home| {
        let files =
            [Some((project.join(EXTENSION), false)), home.map(|h| (h.join(USER_EXTENSION), true))];
        files
            .into_iter()
            .flatten()
            .filter_map(|(file, user)| extension_program(&file, user))
            .collect()
    },
    defers_to_hooks: |_, _, _| false,
};

/// mem's extension in a project.
const EXTENSION: &str = ".pi/extensions/mem.ts";

/// mem's extension in pi's folder.
const USER_EXTENSION: &str = "extensions/mem.ts";

/// The first line of mem's extension, by which setup knows the file is its own.
const FIRST_LINE: &str =
    "// mem's extension for pi, written by `mem setup pi` (`mem setup pi --remove` takes it out).";

/// mem's extension, with `__MEM__` (the executable, as a JavaScript string), `__FLAG__` (nothing,
/// or `"--user-scope"` in the user's extension) and `__CHECKPOINTS__` to put in place.
const EXTENSION_TEXT: &str = r#"// mem's extension for pi, written by `mem setup pi` (`mem setup pi --remove` takes it out).
// It runs mem's hook commands, each with a JSON payload on stdin: when a session starts, the
// memories of the session; with each prompt, the prompt's memories. What mem sent is kept by this
// extension and put into the system prompt of each of the session's requests (never into a
// message, which the session file would keep and send again): mem sends each memory once per
// session, and the model sees it once in each request. When the agent has answered a prompt, a
// capture of the session. The tools mem_recall and mem_remember ask the session's `mem mcp`. A mem
// that is missing or fails adds nothing and stops nothing; one that takes longer than its limit
// (as the other agents' hook timeouts: 10 s for the context, 30 s for a checkpoint or a capture)
// is killed, and the prompt goes on without memory.
import { spawn } from "node:child_process";
import { Type } from "typebox";

const MEM = __MEM__;
const FLAG = [__FLAG__];
const CHECKPOINTS = __CHECKPOINTS__;
const LIMITS = { context: 10000, checkpoint: 30000, capture: 30000, mcp: 30000 };

/** Runs `mem ARGS --hook pi` in `cwd` with `payload` on stdin; its output, or "" on failure. */
function run(args, payload, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    const timer = setTimeout(() => {
      try {
        child?.kill("SIGKILL");
      } catch {}
      resolve("");
    }, LIMITS[args[0]] ?? 10000);
    const done = (value) => {
      clearTimeout(timer);
      resolve(value);
    };
    try {
      child = spawn(MEM, [...args, "--hook", "pi", ...FLAG], {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
      });
      child.on("error", () => done(""));
      child.stdout.on("data", (chunk) => (out += chunk));
      child.on("close", () => done(out));
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ cwd, timestamp: new Date().toISOString(), ...payload }));
    } catch {
      done("");
    }
  });
}

/** The context of mem's hook answer. */
function context(out) {
  try {
    return JSON.parse(out).hookSpecificOutput.additionalContext || "";
  } catch {
    return "";
  }
}

/** The session's `mem mcp`, started on first use: `call(tool, args)` gives the tool's text. */
function server(cwd) {
  let child;
  let next = 1;
  let buffer = "";
  const waiting = new Map();
  const start = () => {
    child = spawn(MEM, ["mcp", ...FLAG], { cwd, stdio: ["pipe", "pipe", "ignore"] });
    child.on("error", () => stop());
    child.on("close", () => stop());
    child.stdin.on("error", () => {});
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      let at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        try {
          const message = JSON.parse(line);
          waiting.get(message.id)?.(message);
          waiting.delete(message.id);
        } catch {}
      }
    });
    const ready = request("initialize", {
      protocolVersion: "2025-03-26",
      capabilities: {},
      clientInfo: { name: "pi", version: "mem" },
    });
    return ready.then(() => send({ jsonrpc: "2.0", method: "notifications/initialized" }));
  };
  const send = (message) => child?.stdin.write(JSON.stringify(message) + "\n");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`mem mcp did not answer ${method} within ${LIMITS.mcp / 1000} s`));
      }, LIMITS.mcp);
      waiting.set(id, (message) => {
        clearTimeout(timer);
        if (message.error) reject(new Error(message.error.message || "mem mcp failed"));
        else resolve(message.result);
      });
      send({ jsonrpc: "2.0", id, method, params });
    });
  let started;
  const stop = () => {
    for (const answer of waiting.values()) answer({ error: { message: "mem mcp ended" } });
    waiting.clear();
    started = undefined;
    try {
      child?.kill();
    } catch {}
    child = undefined;
  };
  const call = async (name, args) => {
    started ??= start();
    await started;
    const result = await request("tools/call", { name, arguments: args });
    const text = (result.content || []).map((part) => part.text || "").join("\n");
    if (result.isError) throw new Error(text || `mem ${name} failed`);
    return text;
  };
  return { call, stop };
}

export default function (pi) {
  // The blocks mem sent into this session, in the order sent; the session start's, once asked.
  let held = [];
  let start;
  let mcp;
  const payload = (ctx, event) => ({
    hook_event_name: event,
    session_id: ctx.sessionManager.getSessionId(),
  });

  pi.on("session_start", async (_event, ctx) => {
    held = [];
    // A session that already holds messages is one resumed (`--continue`, `/resume`): mem
    // sends again what its earlier processes' system prompts held.
    const resumed = ctx.sessionManager.getEntries().some((entry) => entry.type === "message");
    const source = resumed ? "resume" : "startup";
    start = run(["context"], { ...payload(ctx, "session_start"), source }, ctx.cwd);
    mcp = server(ctx.cwd);
  });

  pi.on("before_agent_start", async (event, ctx) => {
    if (start) {
      const block = context(await start);
      start = undefined;
      if (block) held.push(block);
    }
    const prompt = { ...payload(ctx, "before_agent_start"), prompt: event.prompt };
    if (CHECKPOINTS) await run(["checkpoint"], prompt, ctx.cwd);
    const block = context(await run(["context", "--budget", "2000"], prompt, ctx.cwd));
    if (block) held.push(block);
    if (held.length === 0) return;
    return { systemPrompt: `${event.systemPrompt}\n\n${held.join("\n\n")}` };
  });

  pi.on("agent_end", async (_event, ctx) => {
    await run(["capture"], payload(ctx, "agent_end"), ctx.cwd);
  });

  pi.on("session_shutdown", async () => {
    mcp?.stop();
  });

  pi.registerTool({
    name: "mem_recall",
    label: "mem recall",
    description:
      "Recall long-term memories (mem) relevant to a task: the project's facts, decisions, " +
      "procedures and past sessions, ranked by relevance, recency and importance.",
    parameters: Type.Object({
      query: Type.String({ description: "What you are working on or looking for." }),
      k: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "How many at most." })),
    }),
    async execute(_id, params, _signal, _update, ctx) {
      mcp ??= server(ctx.cwd);
      const text = await mcp.call("recall", params);
      return { content: [{ type: "text", text }], details: {} };
    },
  });

  pi.registerTool({
    name: "mem_remember",
    label: "mem remember",
    description:
      "Remember one self-contained fact, decision or procedure in long-term memory (mem), " +
      "with the names someone would search for.",
    parameters: Type.Object({
      text: Type.String({ description: "The memory's text (Markdown)." }),
      type: Type.Optional(
        Type.Union([Type.Literal("semantic"), Type.Literal("episodic"), Type.Literal("procedural")]),
      ),
      importance: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
      tags: Type.Optional(Type.Array(Type.String())),
    }),
    async execute(_id, params, _signal, _update, ctx) {
      mcp ??= server(ctx.cwd);
      const text = await mcp.call("remember", params);
      return { content: [{ type: "text", text }], details: {} };
    },
  });
}
"#;

/// mem's extension at `scope`.
fn file(scope: Scope, target: &Target, home: Option<&Path>) -> Option<PathBuf> {
    match scope {
        Scope::Project => Some(target.project.join(EXTENSION)),
        Scope::User => home.map(|h| h.join(USER_EXTENSION)),
    }
}

/// The change for pi at `target`; `home` is pi's folder.
fn changes(target: &Target, home: Option<&Path>) -> Result<Vec<Change>> {
    let path = file(target.scope, target, home).context("cannot tell pi's folder")?;
    let wanted = match target.remove {
        true => None,
        false => Some(extension_text(target.mem(), target.checkpoints, target.started())?),
    };
    let at = path.clone();
    Ok(vec![Change::new(path, move |text| own_file(text, &at, wanted.as_deref(), FIRST_LINE))?])
}

/// The extension for the `mem` at `exe`, whose commands end with the flag of the registration
/// `started` (see `hooks::flag`).
fn extension_text(exe: &Path, checkpoints: bool, started: Started) -> Result<String> {
    // Checked as a hook command would be: a path a shell cannot take is refused the same way.
    shell_word(exe)?;
    let exe = exe.to_str().context("the mem executable's path is not UTF-8")?;
    let quoted = serde_json::to_string(exe).expect("a string serialises");
    let flag = super::hooks::flag(started).map(|f| format!("{f:?}")).unwrap_or_default();
    Ok(EXTENSION_TEXT.replacen("__MEM__", &quoted, 1).replacen("__FLAG__", &flag, 1).replacen(
        "__CHECKPOINTS__",
        if checkpoints { "true" } else { "false" },
        1,
    ))
}

/// The program mem's extension at `file` runs, when it is mem's; in the `user`'s own folder,
/// unmarked when its commands do not end with `--user-scope`.
fn extension_program(file: &Path, user: bool) -> Option<Found> {
    let text = super::check::read_checked(file)?;
    if text.lines().next() != Some(FIRST_LINE) {
        return None;
    }
    let line = text.lines().find_map(|l| l.strip_prefix("const MEM = "))?;
    let program: String = serde_json::from_str(line.trim_end_matches(';')).ok()?;
    let marked = text.contains(&format!("const FLAG = [{USER_SCOPE:?}];"));
    Some(Found::plain(file, program).unmarked(user && !marked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_mem_and_is_found_again() {
        let text = extension_text(Path::new("/opt/my mem/mem"), true, Started::Own).unwrap();
        assert!(text.starts_with(FIRST_LINE));
        assert!(text.contains("const MEM = \"/opt/my mem/mem\";"), "{text}");
        assert!(text.contains("const FLAG = [];") && text.contains("const CHECKPOINTS = true;"));
        assert!(!text.contains("__"), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mem.ts");
        std::fs::write(&file, &text).unwrap();
        assert_eq!(extension_program(&file, false).unwrap().program, "/opt/my mem/mem");
        assert!(extension_program(&file, true).unwrap().unmarked, "the user's, unmarked");
        let user = extension_text(Path::new("/opt/mem"), false, Started::UserScope).unwrap();
        assert!(user.contains("const FLAG = [\"--user-scope\"];"), "{user}");
        std::fs::write(&file, &user).unwrap();
        assert!(!extension_program(&file, true).unwrap().unmarked);
    }
}
