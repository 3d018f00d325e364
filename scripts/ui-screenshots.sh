#!/usr/bin/env bash
# Screenshots of each page of `mem ui` for docs/ui.md, taken by the browser the tests drive
# (Debian's chromium, headless), on a copy of memories.example/ with one session whose start
# context a hook sent. Writes docs/ui/<page>.png (or into the folder given).
#
#   scripts/ui-screenshots.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/ui}
mkdir -p "$out"
out=$(cd "$out" && pwd)
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
cargo build --quiet --bin mem
mem=$PWD/target/debug/mem
work=$(mktemp -d)
export MEM_NOW=2026-11-30T12:00:00Z HOME=$work/home XDG_CONFIG_HOME=$work/home/.config
root=$work/root
cp -r memories.example "$root"
printf '{"session_id":"s-demo","hook_event_name":"SessionStart","cwd":"%s","source":"startup"}' "$root" |
  "$mem" --dir "$root" context --hook claude >/dev/null
printf '{"session_id":"s-demo","hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"how do I run the tests locally","prompt_id":"p1"}' "$root" |
  "$mem" --dir "$root" context --hook claude >/dev/null
"$mem" --dir "$root" ui --port 0 >"$work/url" 2>"$work/log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -1 "$work/url")
# The pages live under the address's secret prefix: the base is the address without its slash.
base=${url%/}
shot() { # name path: each run is a new profile
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1000 \
    --user-data-dir="$work/profile-$1" --screenshot="$out/$1.png" "$base$2" \
    >/dev/null 2>&1
  echo "$out/$1.png"
}
shot search "/?q=run+the+tests+locally"
shot memory "/memory/01JAQK5R20BTSGRCVJ4HXS40AN"
shot prune "/prune"
shot session "/sessions/s-demo"
shot capture "/capture"
shot overview "/overview"
