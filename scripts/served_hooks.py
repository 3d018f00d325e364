#!/usr/bin/env python3
"""Time and peak memory of the per-prompt hook with and without the model, and served by the
session's `mem mcp`, for one or more mem builds.

Usage: scripts/served_hooks.py --model DIR [--runs N] [--after-capture [--pause MS]] MEM [MEM ...]

For each build, in a throw-away git repository whose `.memory/` root holds a copy of
memories.example/ (the index built first), the hook `context --hook claude --budget 2000` runs
on a UserPromptSubmit payload (a new session id each time) in three settings, taking turns:
  no model       MEM_NO_SERVER=1, no MEM_EMBED_MODEL_DIR: BM25 in-process
  model          MEM_NO_SERVER=1, MEM_EMBED_MODEL_DIR=DIR: hybrid in-process
  model+server   MEM_EMBED_MODEL_DIR=DIR while a `mem mcp` of the root runs with the same
                 environment (it answers the hook if the build can)
With --after-capture, a Stop capture of a new ten-turn session runs (not timed) before each
hook, so that each hook's refresh finds a new session digest to index (and, with the model, to
embed); --pause waits that long between the capture and the hook (a user reads the answer and
types the next prompt: a server embeds the digest meanwhile), and the capture's own time is
printed too (a capture with a server of the same key waits until the server has embedded what
it wrote). Prints the median wall time (ms) and the median peak resident memory (MiB) of the
hook process, per build and setting, and the ratios to "no model" of the same build. Nothing
leaves the temporary folder.
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
sys.path.insert(0, HERE)
from hook_timings import EXAMPLE, PROMPT, transcript  # noqa: E402

SETTINGS = ["no model", "model", "model+server"]


def start_server(mem, repo, env):
    """A `mem mcp` of the repository's root, past the MCP handshake (the root is open and the
    model loaded when it answers a ping)."""
    server = subprocess.Popen([mem, "mcp"], cwd=repo, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "served_hooks", "version": "1"}}})
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    server.stdout.readline()
    return server


def run(command, payload, repo, env):
    """Runs `command` with `payload` on stdin; its wall time (ms) and resource usage."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=repo, env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=err)
        child.stdin.write(json.dumps(payload).encode())
        child.stdin.close()
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = (time.perf_counter() - start) * 1000
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if text:
        # A hook exits 0 whatever happens: a failure shows on stderr only.
        sys.exit(f"{' '.join(command)}: {text.decode(errors='replace')}")
    return elapsed, usage


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the embedding model folder")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--after-capture", action="store_true")
    parser.add_argument("--pause", type=int, default=0, help="ms between capture and hook")
    parser.add_argument("mem", nargs="+")
    args = parser.parse_args()
    builds = [os.path.abspath(m) for m in args.mem]
    model = os.path.abspath(args.model)
    work = tempfile.mkdtemp(prefix="mem-served-")
    servers = []
    try:
        repos, envs = [], []
        for b, mem in enumerate(builds):
            home = os.path.join(work, f"home{b}")
            os.makedirs(home)
            base = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
                    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
            repo = os.path.join(work, f"repo{b}")
            os.makedirs(repo)
            subprocess.run(["git", "init", "-q", repo], check=True, env=base)
            root = os.path.join(repo, ".memory")
            shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mem"))
            with_model = {**base, "MEM_EMBED_MODEL_DIR": model}
            for command in (["init", root], ["--dir", root, "index"]):
                subprocess.run([mem] + command, check=True, env=with_model,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            envs.append({
                "no model": {**base, "MEM_NO_SERVER": "1"},
                "model": {**with_model, "MEM_NO_SERVER": "1"},
                "model+server": with_model,
            })
            repos.append(repo)
            servers.append(start_server(mem, repo, with_model))
        times = {(b, s): [] for b in range(len(builds)) for s in SETTINGS}
        captures = {(b, s): [] for b in range(len(builds)) for s in SETTINGS}
        peaks = {(b, s): [] for b in range(len(builds)) for s in SETTINGS}
        for _ in range(args.runs):
            for b, mem in enumerate(builds):
                for setting in SETTINGS:
                    env, repo = envs[b][setting], repos[b]
                    session = str(uuid.uuid4())
                    if args.after_capture:
                        path = os.path.join(work, f"{session}.jsonl")
                        transcript(path, session, repo)
                        stop = {"session_id": session, "transcript_path": path, "cwd": repo,
                                "hook_event_name": "Stop", "stop_hook_active": False}
                        took, _ = run([mem, "capture", "--hook", "claude"], stop, repo, env)
                        captures[(b, setting)].append(took)
                        session = str(uuid.uuid4())
                        time.sleep(args.pause / 1000)
                    payload = {"session_id": session, "cwd": repo,
                               "hook_event_name": "UserPromptSubmit", "prompt": PROMPT,
                               "transcript_path": os.path.join(work, "none.jsonl")}
                    command = [mem, "context", "--hook", "claude", "--budget", "2000"]
                    elapsed, usage = run(command, payload, repo, env)
                    times[(b, setting)].append(elapsed)
                    peaks[(b, setting)].append(usage.ru_maxrss / 1024)
        what = "after a capture each" if args.after_capture else "per prompt"
        if args.after_capture and args.pause:
            what += f", {args.pause} ms after it"
        print(f"UserPromptSubmit context hook ({what}), medians over {args.runs} runs, "
              "builds and settings taking turns:")
        print(f"{'build':8}{'setting':14}{'ms':>8}{'x no model':>12}{'peak MiB':>10}")
        for b in range(len(builds)):
            plain = statistics.median(times[(b, 'no model')])
            for setting in SETTINGS:
                ms = statistics.median(times[(b, setting)])
                peak = statistics.median(peaks[(b, setting)])
                print(f"{b + 1:<8}{setting:14}{ms:8.1f}{ms / plain:12.2f}{peak:10.1f}")
        if args.after_capture:
            print("The Stop capture hook before each (ms, median; with a server of the same key, "
                  "it waits until the server has embedded what it wrote):")
            for b in range(len(builds)):
                line = "  ".join(f"{setting} {statistics.median(captures[(b, setting)]):.1f}"
                                 for setting in SETTINGS)
                print(f"{b + 1:<8}{line}")
        for b, mem in enumerate(builds):
            print(f"build {b + 1}: {mem}")
    finally:
        for server in servers:
            server.stdin.close()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
