#!/usr/bin/env python3
"""Writes lost by `mem setup` beside a program that saves the agents' settings (issue #51).

Usage: scripts/settings_race.py [--runs N] [--writes N] MEM [MEM ...]

For each build and run, in a throw-away HOME: a writer re-saves `~/.gemini/settings.json` and
`~/.claude.json` the way the agents do (read the file, add a key of its own, write a temporary
file beside it, rename it over the file), N writes each, 1 to 5 ms apart, while
`mem setup claude|gemini --scope user` and the same with `--remove` run one after the other,
over and over, until the writer is done. A write is acknowledged when its rename returned; it
is lost when its key is missing from the file at the end. Prints, per build, the writes lost of
those acknowledged, the setups run and failed, and the temporary files left. Nothing leaves
the temporary folder.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading

FILES = [".gemini/settings.json", ".claude.json"]
SETUPS = [
    ["setup", "claude", "--scope", "user"],
    ["setup", "gemini", "--scope", "user"],
    ["setup", "claude", "--scope", "user", "--remove"],
    ["setup", "gemini", "--scope", "user", "--remove"],
]


def writer(home, writes, done, stats):
    """Re-saves each file `writes` times by rename, each time with one more key of its own."""
    rng = random.Random()
    for i in range(writes):
        for rel in FILES:
            path = os.path.join(home, rel)
            for _ in range(100):
                try:
                    with open(path) as f:
                        value = json.load(f)
                    break
                except (OSError, ValueError):
                    stats["unreadable"] += 1
            else:
                value = {}
            value.setdefault("writer", {})[f"w{i}"] = i
            tmp = f"{path}.writer-{os.getpid()}"
            with open(tmp, "w") as f:
                json.dump(value, f, indent=2)
            os.rename(tmp, path)
            stats["acknowledged"] += 1
        threading.Event().wait(rng.uniform(0.001, 0.005))
    done.set()


def one_run(mem, writes):
    with tempfile.TemporaryDirectory() as home:
        os.makedirs(os.path.join(home, ".gemini"))
        for rel in FILES:
            with open(os.path.join(home, rel), "w") as f:
                f.write('{\n  "theirs": true\n}\n')
        env = dict(os.environ)
        env.update(
            HOME=home,
            XDG_CONFIG_HOME=os.path.join(home, ".config"),
            XDG_DATA_HOME=os.path.join(home, ".local/share"),
            CODEX_HOME=os.path.join(home, ".codex"),
            MEM_NO_SERVER="1",
        )
        env.pop("GEMINI_CLI_HOME", None)
        stats = {"acknowledged": 0, "unreadable": 0}
        done = threading.Event()
        thread = threading.Thread(target=writer, args=(home, writes, done, stats))
        setups = failed = 0
        errors = {}
        thread.start()
        while not done.is_set():
            args = SETUPS[setups % len(SETUPS)]
            out = subprocess.run([mem, *args], cwd=home, env=env, capture_output=True, text=True)
            setups += 1
            if out.returncode != 0:
                failed += 1
                line = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "?"
                line = line.replace(home, "~")
                errors[line] = errors.get(line, 0) + 1
        thread.join()
        lost = 0
        for rel in FILES:
            with open(os.path.join(home, rel)) as f:
                kept = json.load(f).get("writer", {})
            lost += sum(1 for i in range(writes) if f"w{i}" not in kept)
        left = [
            name
            for rel in FILES
            for name in os.listdir(os.path.dirname(os.path.join(home, rel)))
            if name.startswith(".mem-tmp-")
        ]
        return stats["acknowledged"], lost, setups, failed, len(left), errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("mem", nargs="+")
    args = parser.parse_args()
    for mem in args.mem:
        totals = [0, 0, 0, 0, 0]
        for run in range(args.runs):
            acknowledged, lost, setups, failed, left, errors = one_run(mem, args.writes)
            print(
                f"{mem} run {run + 1}: {lost} of {acknowledged} writes lost; "
                f"{setups} setups, {failed} failed; {left} temporary files left"
            )
            for line, n in sorted(errors.items()):
                print(f"    {n} x {line}")
            for i, v in enumerate([acknowledged, lost, setups, failed, left]):
                totals[i] += v
        print(
            f"{mem}: {totals[1]} of {totals[0]} writes lost in {args.runs} runs; "
            f"{totals[2]} setups, {totals[3]} failed; {totals[4]} temporary files left"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
