#!/usr/bin/env bash
# Whole-process benchmark of the session log: N generated Claude Code transcripts (1,000 by
# default; examples/gen_transcripts.rs, seed 42) captured into a new memory root through the
# real `mem capture --hook claude`, one process per session as the agent's Stop hook runs it;
# then `mem session search` for a rare word, a frequent word, a common word, two words and a
# word in no event, and `mem session list` and `mem session resume` for reference. Prints a Markdown summary
# (also written to $BENCH_DIR/summary.md); docs/benchmarks.md has the figures of a run.
#
#   scripts/bench_sessions.sh                         # 1000 sessions, in a temporary folder
#   BENCH_DIR=/tmp/bench-sessions scripts/bench_sessions.sh 1000   # keep the files
#
# Uses hyperfine when installed (else a loop of timed runs, median reported), sqlite3 when
# installed (to count the events each query matches), and python3 (statistics). The
# transcripts are kept between runs in $BENCH_DIR/transcripts-N; the root-N is made anew.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}

cargo build --release --quiet --bin mem --example gen_transcripts
mem=$PWD/target/release/mem
gen=$PWD/target/release/examples/gen_transcripts
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
transcripts=$work/transcripts-$n
root=$work/root-$n
db=$root/.mem/sessions.db

if [ ! -f "$transcripts/sessions.tsv" ]; then
  rm -rf "$transcripts"
  "$gen" --n "$n" --seed 42 --out "$transcripts" >&2
fi
transcript_mb=$(du -sm "$transcripts/projects" | cut -f1)
turns=$(awk -F'\t' '{t += $4} END {print t}' "$transcripts/sessions.tsv")

# Capture every session as the hook does: the payload on stdin, one process each.
rm -rf "$root"
"$mem" init "$root" >/dev/null
echo "bench: capturing $n sessions into $root" >&2
: >"$work/capture.times"
while IFS=$'\t' read -r id cwd path _; do
  payload="{\"session_id\":\"$id\",\"transcript_path\":\"$path\",\"cwd\":\"$cwd\",\"hook_event_name\":\"Stop\"}"
  start=$EPOCHREALTIME
  "$mem" --dir "$root" capture --hook claude <<<"$payload"
  echo "$start $EPOCHREALTIME" >>"$work/capture.times"
done <"$transcripts/sessions.tsv"
capture_stats=$(python3 -c 'import sys, statistics as st
ms = [(float(b) - float(a)) * 1000 for a, b in (l.split() for l in open(sys.argv[1]))]
k = max(1, len(ms) // 10)
q = sorted(ms)
print("%.1f s in all; per session: median %.1f ms, mean %.1f ms, p95 %.1f ms, max %.1f ms; mean of the first %d %.1f ms, of the last %d %.1f ms" % (
    sum(ms) / 1000, st.median(ms), st.mean(ms), q[int(len(q) * 0.95) - 1], q[-1], k, st.mean(ms[:k]), k, st.mean(ms[-k:])))' \
  "$work/capture.times")

# The log as `mem health` reports it; it must hold every session.
health=$("$mem" --dir "$root" health 2>&1 || true)
# A line of `mem health` without its mark and its label.
strip() { sed -E 's/^[^ ]+ +[a-z]+ +//' <<<"$1"; }
sessions_line=$(grep 'sessions\.db' <<<"$health" || true)
captures_line=$(grep -E '^[^ ]+ +capture ' <<<"$health" || true)
if ! grep -q "($n sessions," <<<"$sessions_line"; then
  echo "bench: the log does not hold the $n sessions:" >&2
  echo "$health" >&2
  exit 1
fi
db_kb=$(du -k "$db" | cut -f1)
wal_kb=$(du -k "$db-wal" 2>/dev/null | cut -f1 || echo 0)

# The longest session, for resume.
longest=$(sort -t $'\t' -k4,4n "$transcripts/sessions.tsv" | tail -n 1)
longest_id=$(cut -f1 <<<"$longest")
longest_turns=$(cut -f4 <<<"$longest")

# name|words|FTS5 expression (the AND that `mem session search` runs first). With seed 42 and
# 1,000 sessions: wireguard is in 18 events, cookie in 3 %, test in half of them.
queries=(
  "rare word|wireguard|\"wireguard\""
  "frequent word|cookie|\"cookie\""
  "common word|test|\"test\""
  "two words|cookie expiry|\"cookie\" AND \"expiry\""
  "no match|quaternion|\"quaternion\""
)
commands=()
for q in "${queries[@]}"; do
  IFS='|' read -r _ words _ <<<"$q"
  commands+=("$mem --dir $root session search $words")
done
commands+=("$mem --dir $root session list" "$mem --dir $root session resume $longest_id")

runs=30
# Median wall-clock ms of each command, one per line.
if command -v hyperfine >/dev/null 2>&1; then
  timer="hyperfine -N --warmup 5 --runs $runs"
  hyperfine -N --warmup 5 --runs $runs --export-json "$work/sessions.json" "${commands[@]}" >/dev/null 2>&1
  mapfile -t medians < <(python3 -c 'import json, sys, statistics as st
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.1f" % (st.median(r["times"]) * 1000))' "$work/sessions.json")
else
  timer="a loop of 5 + $runs runs (hyperfine not installed)"
  medians=()
  for c in "${commands[@]}"; do
    : >"$work/loop.times"
    for i in $(seq 1 $((runs + 5))); do
      start=$EPOCHREALTIME
      $c >/dev/null 2>&1 || true
      [ "$i" -le 5 ] || echo "$start $EPOCHREALTIME" >>"$work/loop.times"
    done
    medians+=("$(python3 -c 'import sys, statistics as st
print("%.1f" % st.median([(float(b) - float(a)) * 1000 for a, b in (l.split() for l in open(sys.argv[1]))]))' "$work/loop.times")")
  done
fi

table="| command | events matching (FTS5) | lines printed | median |
|---|---|---|---|"
i=0
for q in "${queries[@]}"; do
  IFS='|' read -r name words fts <<<"$q"
  matching="-"
  if command -v sqlite3 >/dev/null 2>&1; then
    matching=$(sqlite3 "file:$db?mode=ro" "SELECT count(*) FROM events_fts WHERE events_fts MATCH '$fts';")
  fi
  # shellcheck disable=SC2086 # the words are separate arguments
  printed=$("$mem" --dir "$root" session search $words 2>/dev/null | wc -l)
  table+="
| \`mem session search $words\` ($name) | $matching | $printed | ${medians[$i]} ms |"
  i=$((i + 1))
done
table+="
| \`mem session list\` (20 most recent) | | $("$mem" --dir "$root" session list | wc -l) | ${medians[$i]} ms |
| \`mem session resume ID\` (the longest session, $longest_turns turns) | | $("$mem" --dir "$root" session resume "$longest_id" | wc -l) | ${medians[$((i + 1))]} ms |"

# Reference: the common word's FTS5 query alone in the sqlite3 CLI (Debian's SQLite, not the
# one bundled in mem): ranking every match, against only counting them.
reference=""
if command -v sqlite3 >/dev/null 2>&1 && command -v hyperfine >/dev/null 2>&1; then
  common='\"test\"' # escaped for hyperfine's own splitting of the command
  hyperfine -N --warmup 3 --runs 15 --export-json "$work/sqlite.json" \
    "sqlite3 file:$db?mode=ro \"SELECT rowid FROM events_fts WHERE events_fts MATCH '$common' ORDER BY rank LIMIT 20;\"" \
    "sqlite3 file:$db?mode=ro \"SELECT count(*) FROM events_fts WHERE events_fts MATCH '$common';\"" \
    "sqlite3 file:$db?mode=ro \"SELECT 1;\"" >/dev/null 2>&1
  mapfile -t sq < <(python3 -c 'import json, sys, statistics as st
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.1f" % (st.median(r["times"]) * 1000))' "$work/sqlite.json")
  reference="

Reference, sqlite3 CLI $(sqlite3 --version | cut -d' ' -f1) on the same file, word \"test\" (hyperfine, 15 runs): the
best 20 by rank ${sq[0]} ms, count of the matches ${sq[1]} ms, \`SELECT 1\` ${sq[2]} ms."
fi

machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(. /etc/os-release && echo "$PRETTY_NAME"), $(rustc --version | cut -d' ' -f1-2), measured $(date -u +%Y-%m-%d)"
summary="Generated by \`scripts/bench_sessions.sh $n\` on: $machine.

Corpus: $n generated Claude Code transcripts (seed 42, $turns turns, $transcript_mb MiB), captured
one \`mem capture --hook claude\` process per session: $capture_stats.
\`mem health\`: $(strip "$sessions_line"); captures: $(strip "$captures_line").
sessions.db: $((db_kb / 1024)) MiB (WAL: $((wal_kb / 1024)) MiB).

Whole process, warm page cache, $timer:

$table$reference"
echo "$summary" | tee "$work/summary.md"
