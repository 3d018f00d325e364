#!/usr/bin/env python3
"""Median time of each hook mem setup writes, as an agent runs it, for one or more mem builds.

Usage: scripts/hook_timings.py [--runs N] [--repo DIR] [--user-remote URL ...] MEM [MEM ...]

For each build, in a throw-away git repository whose `.memory/` root holds a copy of
memories.example/ (the index built first), each hook command runs N times (default 21), the
builds taking turns, with the JSON payload the agent sends on stdin (a new session id for each
run, so that no call is a repeat of another): `context --hook claude` for SessionStart,
`context --hook claude --budget 2000` for UserPromptSubmit, `capture --hook claude` for Stop
on a ten-turn transcript, and `checkpoint --hook claude` for UserPromptSubmit. Prints the
median wall time of each, in milliseconds, per build, and its quartiles (the spread). Nothing leaves the temporary folder.

With `--repo DIR`, each build's repository is a copy of the git repository DIR (its `.memory/`
left out), such as `cargo run --release --example gen_repo -- --memories 0 --out DIR` writes
(5,000 files, 2,000 commits): the memories' citations are then checked against a real history.

With `--user-remote URL` once per build (in the builds' order; `-` for none), each build's home
has a user layer (`~/.local/share/mem-user`, a memory root in a git repository of its own) named
in its user configuration, whose `origin` is URL with `[layers] user_remote = URL` (`-`: no
remote); and a fifth hook runs, `capture --hook claude` for Stop in a session whose folder is the
user layer, so that the capture writes into it (and, with a remote, starts its background sync).
The same build given twice, `--user-remote - --user-remote https://10.255.255.1/x.git MEM MEM`,
measures what a remote that never answers costs the hooks. With two builds, the ratio of the
second's median to the first's is printed too.

With `--team URL` once per build (`-` for none), each build's user configuration names that
team store (`[team] url`). `--team - --team postgres://me@127.0.0.1:9/team MEM MEM` measures
the prompt hooks with a store that is down; with `--team-every-hook` the mark a failed hook
leaves (`.mem/team-failed`, which makes the next minute's hooks leave the store alone) is
removed before each run, so that every prompt hook is the first after the store stopped.
With `--team-push-capture` each team build's configuration also has `push = "capture"` (author
`bench`) and its root the project `bench/shop`: each capture that writes starts a background `mem team push`.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "memories.example")

PROMPT = "why does the dues calculation query the database once per boat length band?"


def transcript(path, session, cwd):
    """A Claude Code transcript of ten turns, each a prompt, a tool call, its result, an answer."""
    lines = []
    for turn in range(10):
        at = f"2026-12-01T10:{turn:02d}:00Z"
        lines.append({"type": "user", "sessionId": session, "cwd": cwd, "timestamp": at,
                      "message": {"role": "user", "content": f"turn {turn}: {PROMPT}"}})
        call = f"toolu_{turn}"
        lines.append({"type": "assistant", "sessionId": session, "timestamp": at, "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "Bash",
                                              "input": {"command": f"grep -rn band src/ | head -{turn + 1}"}}]}})
        lines.append({"type": "user", "sessionId": session, "timestamp": at, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                         "content": "src/dues.py:12: for band in bands:"}]}})
        lines.append({"type": "assistant", "sessionId": session, "timestamp": at, "message": {
            "role": "assistant", "content": [{"type": "text", "text": "One query per band."}]}})
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--repo", help="a git repository to copy as each build's repository")
    parser.add_argument("--user-remote", action="append", default=[], metavar="URL",
                        help="per build, in order: a user layer whose remote is URL (- for none)")
    parser.add_argument("--team", action="append", default=[], metavar="URL",
                        help="per build, in order: the team store's URL (- for none)")
    parser.add_argument("--team-every-hook", action="store_true",
                        help="remove .mem/team-failed before each run")
    parser.add_argument("--team-push-capture", action="store_true",
                        help='[team] push = "capture" for the builds with a team store')
    parser.add_argument("mem", nargs="+")
    args = parser.parse_args()
    builds = [os.path.abspath(m) for m in args.mem]
    if args.team and len(args.team) != len(builds):
        parser.error("give --team once per build (- for no team store)")
    if args.user_remote and len(args.user_remote) != len(builds):
        parser.error("give --user-remote once per build (- for a user layer without a remote)")
    work = tempfile.mkdtemp(prefix="mem-hooks-")
    try:
        envs, repos = [], []
        for i, mem in enumerate(builds):
            # Each build its own HOME and repository: nothing of one reaches the other.
            env = {"PATH": "/usr/bin:/bin", "HOME": os.path.join(work, f"home{i}"),
                   "LANG": "C.UTF-8", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
            os.makedirs(env["HOME"])
            repo = os.path.join(work, f"repo{i}")
            if args.repo:
                shutil.copytree(args.repo, repo, symlinks=True,
                                ignore=shutil.ignore_patterns(".memory"))
            else:
                os.makedirs(repo)
                subprocess.run(["git", "init", "-q", repo], check=True, env=env)
                with open(os.path.join(repo, "README.md"), "w") as f:
                    f.write("# Shop\n")
            root = os.path.join(repo, ".memory")
            shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mem"))
            for command in (["init", root], ["--dir", root, "index"]):
                subprocess.run([mem] + command, check=True, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            layer = os.path.join(env["HOME"], ".local", "share", "mem-user")
            if args.user_remote:
                url = args.user_remote[i]
                subprocess.run(["git", "init", "-q", layer], check=True, env=env)
                config = f'[layers]\nuser = "{layer}"\n'
                if url != "-":
                    subprocess.run(["git", "-C", layer, "remote", "add", "origin", url],
                                   check=True, env=env)
                    config += f'user_remote = "{url}"\n'
                os.makedirs(os.path.join(env["HOME"], ".config", "mem"))
                with open(os.path.join(env["HOME"], ".config", "mem", "config.toml"), "w") as f:
                    f.write(config)
                subprocess.run([mem, "init", layer], check=True, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if args.team and args.team[i] != "-":
                folder = os.path.join(env["HOME"], ".config", "mem")
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, "config.toml"), "a") as f:
                    f.write(f'[team]\nurl = "{args.team[i]}"\n')
                    if args.team_push_capture:
                        f.write('push = "capture"\nauthor = "bench"\n')
                if args.team_push_capture:
                    with open(os.path.join(root, "mem.toml"), "a") as f:
                        f.write('\n[team]\nproject = "bench/shop"\n')
            envs.append(env)
            repos.append((repo, layer))
        hooks = [
            ("SessionStart context", ["context", "--hook", "claude"], {"source": "startup"}),
            ("UserPromptSubmit context", ["context", "--hook", "claude", "--budget", "2000"],
             {"prompt": PROMPT}),
            ("UserPromptSubmit checkpoint", ["checkpoint", "--hook", "claude"], {"prompt": PROMPT}),
            ("Stop capture", ["capture", "--hook", "claude"], {"stop_hook_active": False}),
        ]
        if args.user_remote:
            hooks.append(("Stop capture (user layer)", ["capture", "--hook", "claude"],
                          {"stop_hook_active": False, "in_layer": True}))
        times = {(b, name): [] for b in range(len(builds)) for name, _, _ in hooks}
        for run in range(args.runs):
            for b, mem in enumerate(builds):
                for name, command, extra in hooks:
                    extra = dict(extra)
                    repo = repos[b][1] if extra.pop("in_layer", False) else repos[b][0]
                    session = str(uuid.uuid4())
                    path = os.path.join(work, f"{session}.jsonl")
                    transcript(path, session, repo)
                    event = name.split()[0]
                    payload = {"session_id": session, "transcript_path": path, "cwd": repo,
                               "hook_event_name": event, **extra}
                    failed = os.path.join(repo, ".memory", ".mem", "team-failed")
                    if args.team_every_hook and os.path.exists(failed):
                        os.remove(failed)
                    start = time.perf_counter()
                    done = subprocess.run([mem] + command, input=json.dumps(payload).encode(),
                                          cwd=repo, env=envs[b], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, check=True)
                    times[(b, name)].append((time.perf_counter() - start) * 1000)
                    if done.stderr:
                        # A hook exits 0 whatever happens: a failure shows on stderr only.
                        sys.exit(f"build {b + 1}, {name}: {done.stderr.decode(errors='replace')}")
        print(f"median ms over {args.runs} runs (builds taking turns):")
        print(f"{'hook':30}" + "".join(f"  build {b + 1:>2}" for b in range(len(builds))))
        for name, _, _ in hooks:
            cells = "".join(f"  {statistics.median(times[(b, name)]):8.1f}"
                            for b in range(len(builds)))
            print(f"{name:30}{cells}")
        # The spread: the quartiles of each build's runs.
        print("quartiles (25th-75th percentile), ms:")
        for name, _, _ in hooks:
            cells = ""
            for b in range(len(builds)):
                q = statistics.quantiles(times[(b, name)], n=4)
                cells += f"  {q[0]:6.1f}-{q[2]:<6.1f}"
            print(f"{name:30}{cells}")
        if len(builds) == 2:
            print("ratio of medians, build 2 / build 1:")
            for name, _, _ in hooks:
                ratio = statistics.median(times[(1, name)]) / statistics.median(times[(0, name)])
                print(f"{name:30}  {ratio:6.2f}")
        for b, mem in enumerate(builds):
            print(f"build {b + 1}: {mem}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
