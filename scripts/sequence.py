#!/usr/bin/env python3
"""Does recording retrievals change later recalls? Asks the LoCoMo dev questions in order, one
`mem recall` process each, with `mem sync` on every root every 20 questions, once recording and
once with --no-record, each on a fresh copy of the memories, and prints R@10 for both.

Usage: scripts/sequence.py MEM_BINARY [WORKDIR]
The data is read from ../shared/eval-dev at run time (LoCoMo is CC BY-NC: never copy it into
the project). "Now" is fixed at 2024-02-01T00:00:00Z, as in run.sh.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
EVAL_DEV = HERE.parent.parent / "shared" / "eval-dev"
NOW = "2024-02-01T00:00:00Z"
SYNC_EVERY = 20


def run(mem, work, record):
    """R@10 over every question, asked in order in fresh copies of the roots under `work`."""
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(
        [sys.executable, str(EVAL_DEV / "prepare.py"), "--out", str(work)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    roots = sorted(p for p in work.iterdir() if p.name.startswith("conv-"))
    env = dict(os.environ, MEM_NOW=NOW)
    for root in roots:
        subprocess.run([mem, "--dir", root / "memories", "index"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    recalls, asked = [], 0
    for root in roots:
        for line in open(root / "eval.jsonl"):
            q = json.loads(line)
            cmd = [mem, "--dir", root / "memories", "recall", "--json", "-k", "10"]
            if not record:
                cmd.append("--no-record")
            out = subprocess.run(cmd + ["--", q["query"]], env=env, capture_output=True, text=True)
            hits = [h["id"] for h in json.loads(out.stdout or "[]")]
            relevant = set(q["relevant"])
            recalls.append(len(relevant & set(hits[:10])) / len(relevant))
            asked += 1
            if asked % SYNC_EVERY == 0:
                for r in roots:
                    subprocess.run([mem, "--dir", r / "memories", "sync"], check=True, env=env,
                                   stdout=subprocess.DEVNULL)
    return sum(recalls) / len(recalls), len(recalls)


def main():
    mem = str(pathlib.Path(sys.argv[1]).resolve())
    base = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/sequence").resolve()
    for record in (True, False):
        r10, n = run(mem, base / ("record" if record else "no-record"), record)
        print(f"{'recording' if record else '--no-record':12} questions {n}  R@10 {r10:.4f}")


if __name__ == "__main__":
    main()
