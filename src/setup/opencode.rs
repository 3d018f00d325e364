//! `mem setup opencode`: the `mem` MCP server in OpenCode's `opencode.json` (in the project, or
//! in OpenCode's configuration folder for the user: `$XDG_CONFIG_HOME/opencode`, else
//! `~/.config/opencode`), edited as a splice of its JSONC, and mem's hooks as a plugin module that
//! OpenCode loads from the `plugins/` folder beside it (`.opencode/plugins/mem.js` in the
//! project): OpenCode runs no hook commands of its own.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde_json::{Value, json};

use super::check::{Found, server_program_in};
use super::command::{USER_SCOPE, is_mem_exe, shell_word};
use super::servers::{Servers, is_server_args, with_server_in};
use super::{Change, Entry, Scope, Started, Target, own_file};

/// OpenCode's entry.
pub const ENTRY: Entry = Entry {
    project_files: &[CONFIG, ".opencode/plugins/mem.js"],
    changes,
    hooks_file: |scope, target, home| Some(folder(scope, target, home)?.1),
    // OpenCode runs both plugins, the user's and the project's: either is a whole set.
    full_set: |text| text.lines().next() == Some(FIRST_LINE),
    // OpenCode reads a project's `.opencode/` from any folder inside it.
    project_only_hooks: |_, _| None,
    notes: |_, _| {
        vec![
            "OpenCode runs mem's plugin (plugins/mem.js beside its opencode.json) in every \
             session; mem's tools appear as mem_recall, mem_remember and the like",
        ]
    },
    commands: |project, _, home| {
        let mut found = Vec::new();
        let folders = [
            Some((project.to_path_buf(), project.join(PLUGIN), false)),
            home.map(|h| (h.to_path_buf(), h.join(USER_PLUGIN), true)),
        ];
        for (folder, plugin, user) in folders.into_iter().flatten() {
            found.extend(server_program_in(&folder.join(CONFIG), "mcp", user));
            found.extend(plugin_program(&plugin, user));
        }
        found
    },
    defers_to_hooks: |_, _, _| false,
};

/// OpenCode's configuration file, in the project and in its configuration folder.
const CONFIG: &str = "opencode.json";

/// mem's plugin in a project.
const PLUGIN: &str = ".opencode/plugins/mem.js";

/// mem's plugin in OpenCode's configuration folder.
const USER_PLUGIN: &str = "plugins/mem.js";

/// The first line of mem's plugin, by which setup knows the file is its own.
const FIRST_LINE: &str = "// mem's plugin for OpenCode, written by `mem setup opencode` (`mem setup opencode --remove` takes it out).";

/// mem's plugin, with `__MEM__` (the executable, as a JavaScript string), `__CHECKPOINTS__` and
/// `__FLAG__` (nothing, or `, "--user-scope"` in the user's plugin) to put in place. It runs
/// `mem context`, `mem checkpoint` and `mem capture` with `--hook opencode` and a payload named
/// by OpenCode's events, and reads the context from mem's answer.
const PLUGIN_TEXT: &str = r#"// mem's plugin for OpenCode, written by `mem setup opencode` (`mem setup opencode --remove` takes it out).
// It runs mem's hook commands, each with a JSON payload on stdin: when a session's first request
// is made, the memories of the session (added to the system prompt of its requests); with each
// prompt, the prompt's memories (a part of the message, stored with it); each time the session
// goes idle, a capture of it. A mem that is missing or fails adds nothing and stops nothing; one
// that takes longer than its limit (as the other agents' hook timeouts: 10 s for the context, 30 s
// for a checkpoint or a capture) is killed, and the prompt goes on without memory.
const MEM = __MEM__;
const CHECKPOINTS = __CHECKPOINTS__;
const LIMITS = { context: 10000, checkpoint: 30000, capture: 30000 };

export const MemPlugin = async ({ directory }) => {
  const run = async (args, payload) => {
    let proc;
    let timer;
    try {
      const body = { cwd: directory, timestamp: new Date().toISOString(), ...payload };
      proc = Bun.spawn([MEM, ...args, "--hook", "opencode"__FLAG__], {
        cwd: directory,
        stdin: new TextEncoder().encode(JSON.stringify(body)),
        stdout: "pipe",
        stderr: "ignore",
      });
      const done = Promise.all([new Response(proc.stdout).text(), proc.exited])
        .then(([out]) => out)
        .catch(() => "");
      // Past the limit nothing is waited for, not even a child of mem's that holds its output.
      const late = new Promise((resolve) => {
        timer = setTimeout(() => resolve(null), LIMITS[args[0]] ?? 10000);
      });
      const out = await Promise.race([done, late]);
      if (out === null) {
        proc.kill(9);
        return "";
      }
      return JSON.parse(out).hookSpecificOutput.additionalContext || "";
    } catch {
      try {
        proc?.kill(9);
      } catch {}
      return "";
    } finally {
      clearTimeout(timer);
    }
  };
  const created = new Set();
  const started = new Map();
  return {
    event: async ({ event }) => {
      if (event.type === "session.created") created.add(event.properties?.info?.id);
      if (event.type === "session.idle" && event.properties?.sessionID) {
        await run(["capture"], { hook_event_name: "session.idle", session_id: event.properties.sessionID });
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = input.sessionID;
      if (!id) return;
      if (!started.has(id)) {
        // A session this process did not see created is one it resumed (`--continue`).
        const source = created.has(id) ? "startup" : "resume";
        started.set(id, run(["context"], { hook_event_name: "session.created", session_id: id, source }));
      }
      const text = await started.get(id);
      if (text) output.system.push(text);
    },
    "chat.message": async (input, output) => {
      const typed = output.parts.find((part) => part.type === "text" && !part.synthetic);
      if (!typed) return;
      const payload = {
        hook_event_name: "chat.message",
        session_id: input.sessionID,
        prompt_id: output.message.id,
        prompt: typed.text,
      };
      if (CHECKPOINTS) await run(["checkpoint"], payload);
      const text = await run(["context", "--budget", "2000"], payload);
      if (!text) return;
      output.parts.push({
        id: typed.id + "mem",
        sessionID: input.sessionID,
        messageID: output.message.id,
        type: "text",
        text,
        synthetic: true,
      });
    },
  };
};
"#;

/// The folder of OpenCode's configuration at `scope` and mem's plugin there.
fn folder(scope: Scope, target: &Target, home: Option<&Path>) -> Option<(PathBuf, PathBuf)> {
    match scope {
        Scope::Project => Some((target.project.clone(), target.project.join(PLUGIN))),
        Scope::User => home.map(|h| (h.to_path_buf(), h.join(USER_PLUGIN))),
    }
}

/// The changes for OpenCode at `target`; `home` is its configuration folder.
fn changes(target: &Target, home: Option<&Path>) -> Result<Vec<Change>> {
    let (folder, plugin) = folder(target.scope, target, home)
        .context("cannot tell OpenCode's configuration folder")?;
    let mem = target.mem().to_str().context("the mem executable's path is not UTF-8")?;
    let command: Vec<&str> = std::iter::once(mem).chain(target.server_args()).collect();
    let server = (!target.remove).then(|| json!({ "type": "local", "command": command }));
    let config = folder.join(CONFIG);
    let path = config.clone();
    let config =
        Change::new(config, move |text| with_server_in(text, &path, &MCP, server.clone()))?;
    let wanted = match target.remove {
        true => None,
        false => Some(plugin_text(target.mem(), target.checkpoints, target.started())?),
    };
    let path = plugin.clone();
    let plugin =
        Change::new(plugin, move |text| own_file(text, &path, wanted.as_deref(), FIRST_LINE))?;
    Ok(vec![config, plugin])
}

/// The servers of `opencode.json`: under `mcp`, mem's a local command of a mem executable and
/// `mcp`, with nothing but `enabled: true` and an empty `environment` beside.
const MCP: Servers = Servers { key: "mcp", is_mem: is_mem_server };

/// Whether an entry of `mcp` is the one setup writes (its command a mem executable and `mcp`,
/// with `--user-scope` or not).
fn is_mem_server(server: &Value) -> bool {
    let Some(entry) = server.as_object() else { return false };
    let known =
        entry.keys().all(|k| ["type", "command", "enabled", "environment"].contains(&k.as_str()));
    let command = entry.get("command").and_then(Value::as_array);
    let ours = |c: &Vec<Value>| {
        c.first().and_then(Value::as_str).is_some_and(is_mem_exe) && is_server_args(&c[1..])
    };
    known
        && entry.get("type").is_some_and(|t| t == "local")
        && command.is_some_and(ours)
        && entry.get("enabled").is_none_or(|e| e == true)
        && entry.get("environment").is_none_or(|e| e.as_object().is_some_and(|o| o.is_empty()))
}

/// The plugin for the `mem` at `exe`, whose commands end with the flag of the registration
/// `started` (see `hooks::flag`).
fn plugin_text(exe: &Path, checkpoints: bool, started: Started) -> Result<String> {
    // Checked as a hook command would be: a path a shell cannot take is refused the same way.
    shell_word(exe)?;
    let exe = exe.to_str().context("the mem executable's path is not UTF-8")?;
    let quoted = serde_json::to_string(exe).expect("a string serialises");
    let flag = super::hooks::flag(started).map(|f| format!(", {f:?}")).unwrap_or_default();
    Ok(PLUGIN_TEXT
        .replacen("__MEM__", &quoted, 1)
        .replacen("__CHECKPOINTS__", if checkpoints { "true" } else { "false" }, 1)
        .replacen("__FLAG__", &flag, 1))
}

/// The program mem's plugin at `file` runs, when it is mem's; in the `user`'s own folder,
/// unmarked when its commands do not end with `--user-scope` (an older setup wrote it).
fn plugin_program(file: &Path, user: bool) -> Option<Found> {
    let text = super::check::read_checked(file)?;
    if text.lines().next() != Some(FIRST_LINE) {
        return None;
    }
    let line = text.lines().find_map(|l| l.strip_prefix("const MEM = "))?;
    let program: String = serde_json::from_str(line.trim_end_matches(';')).ok()?;
    let marked = text.contains(&format!("\"opencode\", {USER_SCOPE:?}]"));
    Some(Found::plain(file, program).unmarked(user && !marked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_mem_and_is_found_again() {
        let text = plugin_text(Path::new("/opt/my mem/mem"), true, Started::Own).unwrap();
        assert!(text.starts_with(FIRST_LINE));
        assert!(text.contains("const MEM = \"/opt/my mem/mem\";"), "{text}");
        assert!(text.contains("const CHECKPOINTS = true;"));
        assert!(!text.contains("__"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mem.js");
        std::fs::write(&file, &text).unwrap();
        assert_eq!(plugin_program(&file, false).unwrap().program, "/opt/my mem/mem");
        assert!(plugin_program(&file, true).unwrap().unmarked, "the user's, of an older setup");
        let user = plugin_text(Path::new("/opt/mem"), false, Started::UserScope).unwrap();
        assert!(user.contains(r#""--hook", "opencode", "--user-scope"], {"#), "{user}");
        std::fs::write(&file, &user).unwrap();
        assert!(!plugin_program(&file, true).unwrap().unmarked);
    }

    #[test]
    fn the_server_is_set_in_jsonc_and_only_ours_is_removed() {
        let path = Path::new("opencode.json");
        let users = "{\n  // mine\n  \"model\": \"local/model-1\",\n}\n";
        let server = json!({ "type": "local", "command": ["mem", "mcp"] });
        let added = with_server_in(Some(users), path, &MCP, Some(server.clone())).unwrap().unwrap();
        assert!(added.contains("// mine") && added.contains("\"mcp\""), "{added}");
        assert_eq!(with_server_in(Some(&added), path, &MCP, Some(server)).unwrap().unwrap(), added);
        let removed = with_server_in(Some(&added), path, &MCP, None).unwrap().unwrap();
        assert_eq!(removed, users);
        let theirs = r#"{"mcp":{"mem":{"type":"remote","url":"http://x"}}}"#;
        assert_eq!(
            with_server_in(Some(theirs), path, &MCP, None).unwrap().as_deref(),
            Some(theirs)
        );
    }
}
