#!/usr/bin/env python3
"""Runs the real GitHub Copilot CLI in a throw-away repository set up for mem, against the model
stand-in (tests/e2e/standin.py), and prints what mem did with its sessions: whether the
memories reached the model's first request of each session (mem's context blocks in it), the
capture log's entries by status, the session log's agent and turns, and `mem health`'s exit
code and coverage line.

    scripts/copilot_check.py --mem-folder target/debug --agents "$(scripts/e2e-agents.sh)" \\
        --setup claude [--setup copilot] [--sessions 2]

`--mem-folder` is the folder of the `mem` to measure (put first on PATH, as the agents' files
name bare `mem`), so that two builds can be compared on the same sessions.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FACT = "We use pnpm, never npm, for the web client"


def parse(stamp):
    """Seconds of an ISO time with a `Z`."""
    from datetime import datetime
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mem-folder", required=True)
    parser.add_argument("--agents", required=True, help="the bin folder of scripts/e2e-agents.sh")
    parser.add_argument("--setup", action="append", default=[], help="mem setup AGENT (repeat)")
    parser.add_argument("--sessions", type=int, default=2)
    args = parser.parse_args()
    mem_folder = os.path.abspath(args.mem_folder)
    with tempfile.TemporaryDirectory() as tmp:
        home, repo = os.path.join(tmp, "home"), os.path.join(tmp, "repo")
        os.makedirs(home)
        os.makedirs(repo)
        env = {
            "PATH": f"{mem_folder}:/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "LANG": "C.UTF-8",
            "MEM_NO_SERVER": "1",
        }
        run = lambda cmd, **kw: subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, **kw)
        run(["git", "init", "-q"])
        for agent in args.setup:
            out = run(["mem", "setup", agent])
            if out.returncode != 0:
                sys.exit(f"mem setup {agent}: {out.stderr}")
        run(["mem", "add", "--type", "semantic", "--importance", "8", FACT])
        cache = os.path.join(os.path.dirname(os.path.dirname(args.agents)), "xdg-cache")
        for n in range(args.sessions):
            log = os.path.join(tmp, f"requests-{n}.jsonl")
            port_file = os.path.join(tmp, f"port-{n}")
            plan = {"tool": "bash", "input": {"command": "echo listed", "description": "list"},
                    "text": "Done."}
            standin = subprocess.Popen(
                [sys.executable, os.path.join(ROOT, "tests/e2e/standin.py"), "--port-file",
                 port_file, "--log", log, "--plan", json.dumps(plan)])
            try:
                while not os.path.exists(port_file):
                    time.sleep(0.02)
                port = open(port_file).read().strip()
                copilot_env = dict(env, COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}",
                                   COPILOT_PROVIDER_TYPE="anthropic", COPILOT_PROVIDER_API_KEY="x",
                                   COPILOT_MODEL="claude-sonnet-4", COPILOT_OFFLINE="true",
                                   COPILOT_ALLOW_ALL="true", XDG_CACHE_HOME=cache)
                prompt = f"which package manager do we use, question {n + 1}"
                out = subprocess.run(
                    [os.path.join(args.agents, "copilot"), "-p", prompt, "--allow-all-tools",
                     "--no-auto-update"], cwd=repo, env=copilot_env, capture_output=True,
                    text=True, timeout=180)
            finally:
                standin.kill()
                standin.wait()
            requests = [json.loads(l) for l in open(log)]
            first = json.dumps(requests[0]["body"]) if requests else ""
            print(f"session {n + 1}: copilot exit {out.returncode}; first request: "
                  f"{first.count('# Memory (from mem)')} mem block(s), the memory {first.count(FACT)} time(s)")
        log_file = os.path.join(repo, ".memory/.mem/capture.log")
        entries = [json.loads(l) for l in open(log_file)] if os.path.exists(log_file) else []
        by_status = {}
        for e in entries:
            key = f"{e.get('hook_event')} {e.get('status')}"
            by_status[key] = by_status.get(key, 0) + 1
        print("capture.log:", json.dumps(by_status, sort_keys=True))
        errors = [e.get("error") for e in entries if e.get("status") != "ok"]
        if errors:
            print("  first error:", errors[0][:200])
        sessions = json.loads(run(["mem", "session", "list", "--json"]).stdout or "[]")
        for s in sessions:
            print(f"session log: agent {s.get('agent')}, {s.get('turns')} turns, {s.get('events')} events")
        # How long Copilot waited for each hook, by its own `hook.start`/`hook.end` times.
        started, took = {}, {}
        state = os.path.join(home, ".copilot/session-state")
        for session in sorted(os.listdir(state)) if os.path.isdir(state) else []:
            events = os.path.join(state, session, "events.jsonl")
            for line in open(events) if os.path.exists(events) else []:
                event = json.loads(line)
                data, at = event.get("data", {}), event.get("timestamp", "")
                if event.get("type") == "hook.start":
                    started[data.get("hookInvocationId")] = (data.get("hookType"), at)
                elif event.get("type") == "hook.end" and data.get("hookInvocationId") in started:
                    kind, start = started.pop(data["hookInvocationId"])
                    ms = (parse(at) - parse(start)) * 1000
                    took.setdefault(kind, []).append(ms)
        for kind, times in sorted(took.items()):
            times.sort()
            print(f"hook {kind}: {len(times)} calls, median {times[len(times) // 2]:.0f} ms, "
                  f"max {times[-1]:.0f} ms (Copilot's own times, all of its hooks of the event)")
        health = run(["mem", "health", "--transcripts"])
        coverage = [l for l in health.stdout.splitlines() if "coverage" in l or "capture " in l]
        print(f"mem health --transcripts: exit {health.returncode}; " + " | ".join(coverage))


if __name__ == "__main__":
    main()
