//! Integration tests: each runs the real `mem` binary on a temporary memory root.

/// A real PostgreSQL with pgvector, started for a test and stopped when dropped.
mod postgres;
mod util;

/// `mem context` and `mem health`.
mod agents;
/// The real agents (Claude Code, Codex CLI) end to end, against a model stand-in.
mod agents_e2e;
/// GitHub Copilot CLI's payloads, events and setup, without the agent.
mod copilot;

/// The file format as seen through the binary, and every bad input of the contract.
mod bad_input;
/// `mem capture`: payloads, transcripts, redaction, capture.log, idempotence.
mod capture;
/// Workspace checkpoints and rewind in throw-away git repositories.
mod checkpoint;
/// Two clones edit one memory: `updated`, the git merge driver, conflict markers, `mem resolve`.
mod conflicts;
/// GitHub Copilot CLI end to end, against a model stand-in, as the other agents in `agents_e2e`.
mod copilot_e2e;
/// The crash harness: every writing command killed at random moments, invariants checked.
mod crash;
/// The crash harness of the workspace writers: checkpoint and rewind killed at random moments.
mod crash_git;
/// Dates, "when", names and reflections in the ranking.
mod cues;
/// Docs that cannot drift: the paths, the schema version and the `.mem/` map they state.
mod docs;
/// Local embeddings with the real model: hybrid recall, vectors, fallback, admission, reflection.
mod embed;
/// `mem eval` on a tiny labelled set with a known answer.
mod eval;
/// Facts from what the user says: taken once, a repeat a use, a change a supersession.
mod facts;
/// Issue #39's scenario with the real agents: facts first, digests kept in their place.
mod facts_e2e;
/// The freshness contract: what recall sees of files changed by mem and by other tools.
mod fresh;
/// Gemini CLI end to end, against a model stand-in, as the other agents in `agents_e2e`.
mod gemini_e2e;
/// Regression tests of the fault and bad-input probe (crashes, cloned roots, symlinks...).
mod hardening;
/// Regressions of the second probe: links in `.mem/`, crafted indexes, names that are not UTF-8.
mod hostile;
/// No import circle between two files of the workspace.
mod imports;
/// `mem index`: incremental refresh, rebuild, corrupt indexes, concurrency.
mod index;
/// The injection ledger: each memory reaches a session's context once.
mod injections;
/// The source layout: docs/architecture.md names every file, short files, no front end in the
/// library, no import circle.
mod layout;
/// The engine used as a library by another program: open, recall, record a use.
mod library;
/// Inputs local processes control: stopped, dribbling or flooding servers, another user's
/// folder, writers racing setup, Codex's `event_msg`-only rollouts (issue #51).
mod local;
/// `mem mcp`: the MCP server over real stdio, with hand-written JSON-RPC.
mod mcp;
/// `mem mcp` driven by the official MCP Python SDK (scripts/mcp-client.sh).
mod mcp_client;
/// The agents' own memories as read-only layers: recall by layer, adopt, never twice, bad files.
mod native;
/// The agents' own memories with the real agents: one agent's memory reaches the others, once.
mod native_e2e;
/// Issue #52 with the real agents: a fact, a digest and an adopted line reach the model once,
/// a resumed session gets none of its own facts back, Codex with `CODEX_HOME` is served.
mod once_e2e;
/// OpenCode end to end, against a model stand-in, as the other agents in `agents_e2e`.
mod opencode_e2e;
/// The engine split by what it does: `impl Engine` in its own module, no type of over 30
/// public methods.
mod parts;
/// pi's session files (a tree, captured as the branch kept) and setup, without the agent.
mod pi;
/// pi end to end, against a model stand-in, as the other agents in `agents_e2e`.
mod pi_e2e;
/// A project's memory root inside a git repository, and the agents' hooks run as the agents
/// run them.
mod project;
/// The ranking signals on hand-made roots: fillers, coverage, contiguity.
mod ranking;
/// `mem recall`, `show`, `list`, `stats` and their output contracts.
mod recall;
/// `mem reflect` and admission control on `mem add`.
mod reflect;
/// Inputs a repository controls: git config, attributes, missing objects, huge blobs, names.
mod repository;
/// A memory retired on one machine and edited on another: each combination's one state.
mod retired;
/// Rewind and checkpoints on the tree: kind changes, byte names, the checkpoint's ignore rules,
/// worktrees, the size cap, home, concurrency, submodules, control characters.
mod rewind;
/// `mem init`, root resolution, `mem add`.
mod root;
/// Issue #49's repository boundary: user-level hooks, `mem mcp --user-scope` and `mem ui` hold
/// back a root nobody here made or allowed; setup's `--user-scope` marker, old forms rewritten.
mod scope;
/// The third probe's seams without an agent: hooks go on, setup's guards and output.
mod seams;
/// The third probe's seams with the real agents: hooks that never block a prompt.
mod seams_e2e;
/// Secrets given to every writer: kept and sent redacted; the user's own patterns.
mod secrets;
/// Hooks answered by the session's `mem mcp`: the same answers, the key, kill -9, stale sockets.
mod served;
/// Issue #43's ten-prompt scenario with the real Claude Code: hook times with and without the server.
mod served_e2e;
/// The session log: capture feeds it, `mem session` reads it, kills, the checkpoint hook.
mod session;
/// `mem setup` edits only what it wrote: foreign servers, the user's hooks, links, exact JSON.
mod setup_edits;
/// `mem completions` and `mem man`.
mod shell;
/// The team store on a real PostgreSQL: schema, pushes from two homes, recall of the team layer.
mod team;
/// `mem team push`: deleted files leave the store; a capture's push in the background, never waited for.
mod team_push;
/// The team store's vectors with the real model: reused from the index, compared only with the same model's.
mod team_vectors;
/// The team store's read-only layer in `mem ui` and the MCP tools `get`, `recent`, `forget`, `used`.
mod team_views;
/// A root shared with git by two machines: usage merges without conflict.
mod teams;
/// `mem ui`: the gate (token, cookie, Host, same-origin POSTs), hostile content, the pages.
mod ui;
/// `mem ui` in a real browser (chromium over WebDriver); skipped without it unless CI=true.
mod ui_browser;
/// Files others control (usage files, settings, transcripts, mem.toml): FIFOs, device links.
mod unreadable;
/// Usage log, decay through time, prune and restore, invalidation, sync.
mod usage;
/// The user layer on a git remote of its own: `mem sync` between two homes, offline, privacy.
mod user_remote;
/// Memories checked against the code they cite: verify, recall, the context hook, MCP, fix.
mod verify;
/// Memories checked against the code they cite, with the real agents: the notes reach the model.
mod verify_e2e;
/// Linked git worktrees share the main worktree's project root; `[project] per_worktree`.
mod worktrees;
