#!/usr/bin/env bash
# Whole-process benchmarks of `mem` on generated corpora (1k, 10k, 100k memories by default),
# with two baselines a user could reach for on the same files in the same run: ripgrep
# (`rg -l -i`, no ranking) and SQLite FTS5 through the sqlite3 CLI (bm25() ranking). It then
# rewrites the generated tables in docs/benchmarks.md (between the bench markers).
#
#   scripts/bench.sh                 # sizes 1000 10000 100000
#   scripts/bench.sh 1000 10000      # other sizes
#   BENCH_DIR=/tmp/bench scripts/bench.sh   # keep corpora between runs
#
# Needs hyperfine, ripgrep, sqlite3 and GNU time from Debian's packages (installed if missing)
# and python3 (to read hyperfine's JSON).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "bench: installing $2" >&2
    $sudo apt-get install -y "$2" >/dev/null
  fi
}
need hyperfine hyperfine
need rg ripgrep
need sqlite3 sqlite3
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --quiet --bin mem --example gen_corpus
mem=$PWD/target/release/mem
gen=$PWD/target/release/examples/gen_corpus
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
now=2026-11-30T12:00:00Z
query="why does the login session cookie expire"
fts_query="why OR does OR the OR login OR session OR cookie OR expire"

# median in ms of a hyperfine JSON export, one value per command
medians() {
  python3 -c 'import json,sys,statistics
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.1f" % (statistics.median(r["times"]) * 1000))' "$1"
}

speed="| memories | \`mem recall\` warm | first recall after \`mem index\` | \`rg -l -i\` | SQLite FTS5 | recall / rg | recall / FTS5 |
|---|---|---|---|---|---|---|"
build="| memories | \`mem index\` from scratch | peak RSS | \`mem index\` after 1 change (checks every file) | recall after 1 file added (walks its folder) | index on disk | FTS5 build | FTS5 db |
|---|---|---|---|---|---|---|---|"
memory="| memories | peak RSS of \`mem recall\` |
|---|---|"
quality="| memories | queries | R@5 | R@10 | R@20 | nDCG@10 | MRR | p50 ms | p95 ms |
|---|---|---|---|---|---|---|---|---|"

for n in "${sizes[@]}"; do
  root=$work/c$n
  if [ ! -f "$work/c$n.queries.jsonl" ]; then
    rm -rf "$root"
    "$gen" --n "$n" --seed 42 --out "$root" --queries "$work/c$n.queries.jsonl" >/dev/null
  fi
  echo "bench: $n memories in $root" >&2

  # Full index build, its peak memory, and its size on disk.
  rm -rf "$root/.mem"
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$mem" --dir "$root" --now $now index >/dev/null
  read -r index_s index_kb <"$work/time.txt"
  disk_kb=$(du -sk "$root/.mem" | cut -f1)

  # SQLite FTS5 with the porter stemmer over the same files.
  db=$work/c$n.fts5.db
  rm -f "$db"
  (
    echo "CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body, tokenize='porter unicode61');"
    echo "BEGIN;"
    (cd "$root" && find . -name '*.md' -not -path './.mem/*' | sed "s/'/''/g; s|^\./\(.*\)$|INSERT INTO docs VALUES ('\1', readfile('\1'));|")
    echo "COMMIT;"
  ) >"$work/fts5.sql"
  fts_start=$(date +%s.%N)
  (cd "$root" && sqlite3 "$db" <"$work/fts5.sql")
  fts_s=$(python3 -c "print('%.2f' % ($(date +%s.%N) - $fts_start))")
  fts_kb=$(du -sk "$db" | cut -f1)

  runs=30
  [ "$n" -lt 100000 ] || runs=15
  hyperfine -N --warmup 5 --runs $runs --export-json "$work/warm.json" \
    "$mem --dir $root --now $now recall \"$query\"" \
    "rg -l -i -e login -e session -e cookie -e expire $root" \
    "sqlite3 $db \"SELECT path FROM docs WHERE docs MATCH '$fts_query' ORDER BY bm25(docs) LIMIT 20;\"" \
    >/dev/null 2>&1
  mapfile -t warm < <(medians "$work/warm.json")

  cold_runs=5
  [ "$n" -lt 100000 ] || cold_runs=3
  hyperfine -N --runs $cold_runs --prepare "sh -c 'rm -rf $root/.mem && $mem --dir $root --now $now index >/dev/null'" \
    --export-json "$work/cold.json" "$mem --dir $root --now $now recall \"$query\"" >/dev/null 2>&1
  cold=$(medians "$work/cold.json")

  victim=$(cd "$root" && find . -name '*.md' -not -path './.mem/*' | sort | sed -n 1p)
  hyperfine -N --runs 20 --prepare "sh -c 'echo edited >> $root/$victim'" \
    --export-json "$work/reindex.json" "$mem --dir $root --now $now index" >/dev/null 2>&1
  reindex=$(medians "$work/reindex.json")

  # The recall after another tool added one file: only that file's folder is walked again.
  folder=$(dirname "$victim")
  hyperfine -N --runs 20 --prepare "sh -c 'n=\$(date +%s%N); printf -- \"---\\nid: added-\$n\\ntype: semantic\\nimportance: 5\\ncreated: 2026-01-01T00:00:00Z\\n---\\nadded \$n\\n\" > $root/$folder/added-\$n.md'" \
    --export-json "$work/added.json" "$mem --dir $root --now $now recall \"$query\"" >/dev/null 2>&1
  added=$(medians "$work/added.json")

  /usr/bin/time -f "%M" -o "$work/rss.txt" "$mem" --dir "$root" --now $now recall "$query" >/dev/null
  recall_kb=$(cat "$work/rss.txt")

  "$mem" --dir "$root" --now $now eval "$work/c$n.queries.jsonl" --json >"$work/eval.json"
  quality_row=$(python3 -c 'import json,sys
o=json.load(open(sys.argv[1]))["overall"]
print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f | %.1f |" % (sys.argv[2], o["queries"], o["recall_at_5"], o["recall_at_10"], o["recall_at_20"], o["ndcg_at_10"], o["mrr"], o["latency_p50_ms"], o["latency_p95_ms"]))' "$work/eval.json" "$n")

  ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
  speed+="
| $n | ${warm[0]} ms | $cold ms | ${warm[1]} ms | ${warm[2]} ms | $(ratio "${warm[0]}" "${warm[1]}") | $(ratio "${warm[0]}" "${warm[2]}") |"
  build+="
| $n | ${index_s} s | $((index_kb / 1024)) MiB | $reindex ms | $added ms | $((disk_kb / 1024)) MiB | ${fts_s} s | $((fts_kb / 1024)) MiB |"
  memory+="
| $n | $((recall_kb / 1024)) MiB |"
  quality+="
$quality_row"
done

machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(. /etc/os-release && echo "$PRETTY_NAME"), $(rustc --version | cut -d' ' -f1-2), measured $(date -u +%Y-%m-%d)"
tables="Generated by \`scripts/bench.sh ${sizes[*]}\` on: $machine. Medians of hyperfine runs
(warm page cache; \"first recall\" rebuilds the index before each run). Query:
\"$query\" (FTS5: the same words joined by OR; rg: its four content words).

### Recall, whole process

$speed

### Indexing

$build

### Memory

$memory

### Quality on the generated queries (\`mem eval\`, 50 queries per corpus)

$quality"

python3 scripts/write_section.py docs/benchmarks.md bench "$tables"
echo "bench: tables written to docs/benchmarks.md" >&2
