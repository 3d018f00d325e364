#!/usr/bin/env bash
# How many system calls of a prompt hook name `mem.toml`, for each build given (issue #54): in a
# throw-away git project with its root in `.memory/` and one memory, `mem context --hook
# claude` for a UserPromptSubmit whose folder is two below the project's top (`sub/deep`), each
# build with a new session, traced by strace (file and descriptor calls, all threads).
#
#   scripts/hook_syscalls.sh MEM [MEM ...]
#
# Needs strace (Debian's package) and git.
set -euo pipefail
builds=()
for mem in "$@"; do builds+=("$(cd "$(dirname "$mem")" && pwd)/$(basename "$mem")"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" MEM_NOW=2026-11-30T12:00:00Z
mkdir -p "$HOME" "$work/proj/sub/deep"
cd "$work/proj"
git init -q .
"${builds[0]}" init --project >/dev/null
"${builds[0]}" add "Deploys go through make ship from a tagged release" >/dev/null
cd sub/deep
n=0
for mem in "${builds[@]}"; do
  n=$((n + 1))
  payload=$(printf '{"session_id":"s%s","hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"how do we deploy"}' "$n" "$PWD")
  echo "$payload" | strace -f -e trace=%file,%desc -o "$work/trace" "$mem" context --hook claude >/dev/null 2>&1
  calls=$(grep -c 'mem\.toml' "$work/trace" || true)
  kinds=$(grep 'mem\.toml' "$work/trace" | awk '{print $2}' | cut -d'(' -f1 | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
  echo "$mem: $calls calls name mem.toml (${kinds%, })"
done
