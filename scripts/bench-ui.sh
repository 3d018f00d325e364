#!/usr/bin/env bash
# The server time of `mem ui`'s pages on a generated corpus (10,000 memories by default), as the
# server's own stopwatch reports it in each answer's `Server-Timing` header, against the whole
# process time of the commands the pages stand for (`mem prune --dry-run`,
# `mem health --transcripts`, by hyperfine), and the search page's weight. docs/benchmarks.md.
#
#   scripts/bench-ui.sh                 # 10000 memories
#   scripts/bench-ui.sh 1000            # another size
#   BENCH_DIR=/tmp/bench scripts/bench-ui.sh   # keep the corpus between runs
#   MEM_EMBED_MODEL_DIR=target/embed-model scripts/bench-ui.sh   # hybrid search (vectors made)
#   OBSERVED=1 scripts/bench-ui.sh 100000   # also the prune review with an observation start
#
# Needs hyperfine and curl (Debian's packages) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
cargo build --release --quiet --bin mem --example gen_corpus
mem=$PWD/target/release/mem
gen=$PWD/target/release/examples/gen_corpus
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
export MEM_NOW=2026-11-30T12:00:00Z
root=$work/c$n
if [ ! -f "$work/c$n.queries.jsonl" ]; then
  rm -rf "$root"
  "$gen" --n "$n" --seed 42 --out "$root" --queries "$work/c$n.queries.jsonl" >/dev/null
fi
"$mem" --dir "$root" index >/dev/null 2>&1

"$mem" --dir "$root" ui --port 0 >"$work/ui.url" 2>"$work/ui.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/ui.url" ] && break; sleep 0.1; done
url=$(head -1 "$work/ui.url")
# The pages live under the address's secret prefix: the base is the address without its slash.
base=${url%/}

# The median of the Server-Timing of each URL on stdin (each fetched once after one warm-up).
cat >"$work/timing.py" <<'PY'
import statistics, sys, urllib.request
base = sys.argv[1]
urls = [l.strip() for l in sys.stdin if l.strip()]
direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def get(path):
    req = urllib.request.Request(base + path)
    with direct.open(req) as r:
        body = r.read()
        dur = float(r.headers["Server-Timing"].split("dur=")[1])
        return dur, len(body)
get(urls[0])
times, sizes = [], []
for u in urls:
    d, s = get(u)
    times.append(d)
    sizes.append(s)
print("%.1f ms median, %.1f ms max, %d requests, %.1f KB largest" % (
    statistics.median(times), max(times), len(times), max(sizes) / 1024))
PY
timing() { python3 "$work/timing.py" "$base"; }

queries=$(python3 -c 'import json,sys,urllib.parse
for l in open(sys.argv[1]):
    print("/?q=" + urllib.parse.quote_plus(json.loads(l)["query"]))' "$work/c$n.queries.jsonl")
ids=$("$mem" --dir "$root" list --json 2>/dev/null | python3 -c 'import json,sys
for m in json.load(sys.stdin)[:50]: print("/memory/" + m["id"])')
echo "search page (${n} memories): $(echo "$queries" | timing)"
echo "memory page: $(echo "$ids" | timing)"
for page in / /prune /sessions /capture /overview; do
  echo "$page: $(yes "$page" | head -11 | timing)"
done
hyperfine -N -i --warmup 1 --runs 10 --export-json "$work/cmd.json" \
  "$mem --dir $root prune --dry-run" "$mem --dir $root health --transcripts" >/dev/null 2>&1 || true
python3 -c 'import json,sys,statistics
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s: %.1f ms median (whole process)" % (r["command"].split(" ", 3)[3], statistics.median(r["times"]) * 1000))' "$work/cmd.json"

# With OBSERVED=1: the prune review once usage has been observed for a while (most memories
# faded), all of them archived and restored from the page, on a copy of the corpus.
if [ "${OBSERVED:-}" = 1 ]; then
  kill $server 2>/dev/null || true
  rm -rf "$root.observed"
  cp -r "$root" "$root.observed"
  python3 scripts/ui_observed.py "$mem" "$root.observed"
  rm -rf "$root.observed"
fi
