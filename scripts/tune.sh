#!/usr/bin/env bash
# Runs `mem eval` on the labelled example set for a grid of ranking settings and prints one line
# per setting, best nDCG@10 first. Usage: scripts/tune.sh [QUERIES] [MEMORIES]
# The memories are copied to a temporary folder; "now" is fixed so the figures are reproducible.
set -euo pipefail
cd "$(dirname "$0")/.."
queries=${1:-benches/data/example-queries.jsonl}
memories=${2:-memories.example}
now=2026-11-30T12:00:00Z
cargo build --release --quiet
mem=$PWD/target/release/mem
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$memories" "$work/root"
rm -rf "$work/root/.mem"

printf '%-8s %-8s %-9s %-7s %-7s %-9s %-7s %-7s %-7s\n' rec_w imp_w half_life title expand nDCG@10 MRR R@5 R@10
for rw in 0 0.1 0.2 0.3 0.5; do
  for iw in 0 0.1 0.3 0.5; do
    for hl in 30 90 365; do
      for tb in 1.0 2.0 3.0; do
        for ew in 0 0.3 0.6; do
          cat > "$work/root/mem.toml" <<TOML
[ranking]
recency_weight = $rw
importance_weight = $iw
recency_half_life_days = $hl
title_boost = $tb
[query]
expansion_weight = $ew
TOML
          "$mem" --dir "$work/root" --now "$now" eval "$queries" --json |
            python3 -c "import json,sys; o=json.load(sys.stdin)['overall']; print('%-8s %-8s %-9s %-7s %-7s %-9.4f %-7.4f %-7.4f %-7.4f' % ('$rw','$iw','$hl','$tb','$ew',o['ndcg_at_10'],o['mrr'],o['recall_at_5'],o['recall_at_10']))"
        done
      done
    done
  done
done | sort -k6,6 -r -g
