#!/usr/bin/env bash
# Installs the pinned real agents the end-to-end tests run (tests/agents_e2e.rs,
# tests/gemini_e2e.rs, tests/opencode_e2e.rs, tests/copilot_e2e.rs, tests/pi_e2e.rs): Claude
# Code, Codex CLI, Gemini CLI, OpenCode, GitHub Copilot CLI and pi, from the npm registry into a
# per-user cache, and prints the folder of their executables (export it as MEM_E2E_AGENTS). A
# second run downloads nothing.
#
#   scripts/e2e-agents.sh                  # installs if needed, prints the bin folder
#   MEM_E2E_CACHE=/some/dir scripts/e2e-agents.sh
#
# Needs Node.js 20 or later and npm. About 1.5 GB on disk.
set -euo pipefail

CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.171.0
GEMINI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
COPILOT_VERSION=1.0.102
PI_VERSION=0.73.1
cache="${MEM_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mem-e2e}"
dir="$cache/claude-$CLAUDE_VERSION-codex-$CODEX_VERSION-gemini-$GEMINI_VERSION-opencode-$OPENCODE_VERSION-copilot-$COPILOT_VERSION-pi-$PI_VERSION"
bin="$dir/node_modules/.bin"

installed() {
  [ -x "$bin/claude" ] && [ -x "$bin/codex" ] && [ -x "$bin/gemini" ] && [ -x "$bin/opencode" ] &&
    [ -x "$bin/copilot" ] && [ -x "$bin/pi" ] &&
    "$bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_VERSION " &&
    "$bin/codex" --version 2>/dev/null | grep -q " $CODEX_VERSION$" &&
    [ "$("$bin/gemini" --version 2>/dev/null)" = "$GEMINI_VERSION" ] &&
    [ "$(HOME="$dir/home" TMPDIR="$dir/home" OPENCODE_DISABLE_FFF=1 "$bin/opencode" --version 2>/dev/null)" = "$OPENCODE_VERSION" ] &&
    HOME="$dir/home" XDG_CACHE_HOME="$dir/xdg-cache" "$bin/copilot" --version 2>/dev/null | grep -q "^GitHub Copilot CLI $COPILOT_VERSION\.$" &&
    [ "$(HOME="$dir/home" PI_OFFLINE=1 "$bin/pi" --version 2>&1)" = "$PI_VERSION" ]
}

if ! installed; then
  command -v npm >/dev/null || { echo "e2e-agents: npm is needed (Node.js 20 or later)" >&2; exit 1; }
  mkdir -p "$dir"
  echo "e2e-agents: installing Claude Code $CLAUDE_VERSION, Codex CLI $CODEX_VERSION," \
    "Gemini CLI $GEMINI_VERSION, OpenCode $OPENCODE_VERSION, GitHub Copilot CLI" \
    "$COPILOT_VERSION and pi $PI_VERSION into $dir" >&2
  npm install --prefix "$dir" --no-save --no-audit --no-fund \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" \
    "@google/gemini-cli@$GEMINI_VERSION" "opencode-ai@$OPENCODE_VERSION" \
    "@github/copilot@$COPILOT_VERSION" "@mariozechner/pi-coding-agent@$PI_VERSION" >&2
  installed || { echo "e2e-agents: the agents do not run after the install" >&2; exit 1; }
fi
echo "$bin"
