#!/usr/bin/env python3
"""How late a stalled `mem` makes OpenCode's prompt through mem's plugin (issue #51, item 2).

Usage: scripts/opencode_stall.py --agents BIN [--stall S] [--runs N] MEM [MEM ...]

BIN is the folder `scripts/e2e-agents.sh` prints (it holds `opencode`). For each build, in a
throw-away HOME and git repository: `mem setup opencode` (that build's plugin), one memory, the
model stand-in (tests/e2e/standin.py) answering text; then `opencode run PROMPT` is timed with
the plugin as set up, and with the plugin's `mem` replaced by a script that waits S seconds and
then runs the real one (a `mem` that stalls). Prints the medians of N runs of each.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "..", "tests", "e2e", "standin.py")
PROMPT = "which package manager do we use"


def run_opencode(agents, home, repo, mem_folder, port):
    env = {
        "PATH": f"{mem_folder}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "LANG": "C.UTF-8",
        "MEM_NO_SERVER": "1",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "ANTHROPIC_API_KEY": "dummy",
        "OPENCODE_CONFIG_CONTENT": json.dumps(
            {"model": "anthropic/claude-sonnet-4-5", "small_model": "anthropic/claude-haiku-4-5"}
        ),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_FFF": "1",
        "npm_config_offline": "true",
        "TMPDIR": os.path.join(home, "tmp"),
        "PWD": repo,
    }
    start = time.monotonic()
    subprocess.run(
        [os.path.join(agents, "opencode"), "run", "--format", "json", "--title", "stall", *PROMPT.split()],
        env=env, cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
    )
    return time.monotonic() - start


def one(agents, mem, stall):
    with tempfile.TemporaryDirectory() as tmp:
        home, repo = os.path.join(tmp, "home"), os.path.join(tmp, "repo")
        os.makedirs(os.path.join(home, "tmp"))
        os.makedirs(repo)
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("# Shop\n")
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
        subprocess.run(git + ["commit", "-q", "-m", "one"], cwd=repo, check=True)
        mem_env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"))
        subprocess.run([mem, "setup", "opencode"], cwd=repo, env=mem_env, check=True, capture_output=True)
        subprocess.run([mem, "add", "--type", "semantic", "--importance", "8",
                        "The web client uses pnpm, not npm."],
                       cwd=repo, env=mem_env, check=True, capture_output=True)
        port_file = os.path.join(tmp, "port")
        standin = subprocess.Popen([sys.executable, STANDIN, "--port-file", port_file, "--log",
                                    os.path.join(tmp, "requests.jsonl"), "--plan",
                                    json.dumps({"text": "Answered."})])
        try:
            for _ in range(200):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                time.sleep(0.05)
            port = int(open(port_file).read().strip())
            mem_folder = os.path.dirname(mem)
            plain = run_opencode(agents, home, repo, mem_folder, port)
            script = os.path.join(tmp, "stalled-mem")
            with open(script, "w") as f:
                f.write(f'#!/bin/sh\nsleep {stall}\nexec "{mem}" "$@"\n')
            os.chmod(script, 0o755)
            plugin = os.path.join(repo, ".opencode", "plugins", "mem.js")
            lines = open(plugin).read().splitlines()
            lines = [f"const MEM = {json.dumps(script)};" if l.startswith("const MEM = ") else l
                     for l in lines]
            with open(plugin, "w") as f:
                f.write("\n".join(lines) + "\n")
            stalled = run_opencode(agents, home, repo, mem_folder, port)
        finally:
            standin.kill()
            standin.wait()
        return plain, stalled


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", required=True)
    parser.add_argument("--stall", type=float, default=25.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("mem", nargs="+")
    args = parser.parse_args()
    for mem in args.mem:
        mem = os.path.abspath(mem)
        runs = [one(args.agents, mem, args.stall) for _ in range(args.runs)]
        plain = statistics.median(r[0] for r in runs)
        stalled = statistics.median(r[1] for r in runs)
        print(f"{mem}: opencode run {plain:.1f} s; with a mem stalled {args.stall:.0f} s "
              f"{stalled:.1f} s ({stalled - plain:+.1f} s)")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
