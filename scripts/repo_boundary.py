#!/usr/bin/env python3
"""The repository boundary (issue #49), measured for one or more mem builds.

Usage: scripts/repo_boundary.py [--work DIR] [--real REPO] MEM [MEM ...]

1. A 200 MB cited file changed since its memory: peak resident memory (its git processes
   included) and wall time of `mem verify`, `mem recall` and the prompt hook, cold verdict
   cache, three runs per build, and the memory's verdict.
2. A blobless clone (`git clone --filter=blob:none`) whose promisor remote runs a command
   (`ext::`, then `core.sshCommand`) when git fetches: whether verify, recall or the prompt
   hook made it run.
3. With --real REPO (a git repository, such as a fetched ripgrep): a full clone and a blobless
   clone of it, each with 300 memories citing its files and functions as they were at random
   commits (seed 7); per build, `mem verify --json` (cold; on the full clone the median of
   seven runs, the builds taking turns; on the blobless one a single run, since a build that
   fetches changes it), the objects missing before and after, what it says, and whether the builds'
   outputs are the same.

Everything is made under --work (a temporary folder by default); nothing else is written.
"""

import argparse
import collections
import datetime
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

ENV = {"MEM_NOW": "2026-11-30T12:00:00Z", "MEM_NO_SERVER": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def git(cwd, *args, day="01", check=True):
    """git in `cwd` with a fixed identity and commit date (October 2026, `day`)."""
    date = f"2026-10-{day}T12:00:00Z"
    env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date, GIT_CONFIG_GLOBAL="/dev/null")
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"]
    return subprocess.run(cmd + list(args), cwd=cwd, env=env, capture_output=True, check=check)


def mem(build, cwd, home, *args, stdin=b""):
    """Runs a build; returns (exit code, stdout, peak KiB of it and its children, seconds)."""
    env = dict(os.environ, HOME=home, **ENV)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    out = subprocess.run([build, *args], cwd=cwd, env=env, input=stdin, capture_output=True)
    took = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is a maximum over all of them: only a new maximum is this run's.
    return out.returncode, out.stdout, (peak if peak > before else None), took


def memory(path, mid, created, body):
    with open(path, "w") as f:
        f.write(f"---\nid: {mid}\ntype: semantic\nimportance: 5\ncreated: {created}\n---\n{body}\n")


def hook_payload(cwd, session, prompt):
    return json.dumps({"session_id": session, "hook_event_name": "UserPromptSubmit",
                       "cwd": cwd, "prompt": prompt}).encode()


def big_file(work, builds):
    repo = os.path.join(work, "big")
    if not os.path.isdir(repo):
        os.makedirs(repo)
        git(repo, "init", "-q")
        line = b"1970-01-01,sensor,0000000000,ok,a reading of the same length every time\n"
        with open(os.path.join(repo, "data.csv"), "wb") as f:
            f.write(line * (200_000_000 // len(line)))
        git(repo, "-c", "core.compression=0", "add", ".")
        git(repo, "-c", "core.compression=0", "commit", "-qm", "one")
        with open(os.path.join(repo, "data.csv"), "ab") as f:
            f.write(b"the end, changed\n")
        git(repo, "-c", "core.compression=0", "commit", "-qam", "two", day="10")
    print("1. a 200 MB cited file, changed since its memory (peak KiB / seconds, cold cache)")
    for n, build in enumerate(builds):
        copy = os.path.join(work, f"big-{n}")
        if not os.path.isdir(copy):
            os.makedirs(copy)
            shutil.copytree(os.path.join(repo, ".git"), os.path.join(copy, ".git"))
            git(copy, "checkout", "-q", "main", "--", ".")
        home = os.path.join(work, f"home-big-{n}")
        os.makedirs(home, exist_ok=True)
        mem(build, copy, home, "init", "--project")
        memory(os.path.join(copy, ".memory", "data.md"), "data", "2026-10-05T00:00:00Z",
               "The sensor readings are kept in data.csv, one per line.")
        rows = collections.defaultdict(list)
        for run in range(3):
            for what, args, stdin in [
                ("verify", ["verify"], b""),
                ("recall", ["recall", "sensor readings"], b""),
                ("hook", ["context", "--hook", "claude"],
                 hook_payload(copy, f"s{run}", "sensor readings data.csv")),
            ]:
                cache = os.path.join(copy, ".memory", ".mem", "cites.json")
                if os.path.exists(cache):
                    os.remove(cache)
                # A fresh interpreter per run, so that the peak is this run's alone.
                probe = ("import resource,subprocess,sys,time,os\n"
                         "t=time.monotonic(); subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), "
                         "capture_output=True)\n"
                         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic()-t)")
                env = dict(os.environ, HOME=home, **ENV)
                out = subprocess.run(["python3", "-c", probe, build, *args], cwd=copy, env=env,
                                     input=stdin, capture_output=True, text=False)
                kib, secs = out.stdout.split()
                rows[what].append(f"{int(kib)}/{float(secs):.2f}")
        _, verdict, _, _ = mem(build, copy, home, "verify")
        print(f"  {build}: " + "; ".join(f"{k} {' '.join(v)}" for k, v in rows.items()))
        print(f"    verdict: {verdict.decode().splitlines()[-1].strip()}")


def partial_clone(work, builds):
    print("2. a blobless clone whose promisor remote runs a command when git fetches")
    for n, build in enumerate(builds):
        base = os.path.join(work, f"partial-{n}")
        shutil.rmtree(base, ignore_errors=True)
        origin = os.path.join(base, "origin")
        os.makedirs(os.path.join(origin, "src"))
        git(origin, "init", "-q")
        with open(os.path.join(origin, "src", "a.py"), "w") as f:
            f.write("def answer():\n    return 1\n")
        git(origin, "add", ".")
        git(origin, "commit", "-qm", "one")
        with open(os.path.join(origin, "src", "a.py"), "w") as f:
            f.write("def answer():\n    return 2\n")
        git(origin, "commit", "-qam", "two", day="10")
        git(origin, "config", "uploadpack.allowFilter", "true")
        git(base, "clone", "-q", "--filter=blob:none", f"file://{origin}", "clone")
        clone = os.path.join(base, "clone")
        home = os.path.join(base, "home")
        os.makedirs(home)
        mem(build, clone, home, "init", "--project")
        memory(os.path.join(clone, ".memory", "a.md"), "a", "2026-10-05T00:00:00Z",
               "The answer is computed in src/a.py by answer().")
        marker = os.path.join(base, "MARK")
        results = []
        for route in ["ext", "ssh"]:
            if route == "ext":
                git(clone, "remote", "set-url", "origin", f"ext::sh -c touch% {marker}")
                git(clone, "config", "protocol.ext.allow", "always")
            else:
                git(clone, "remote", "set-url", "origin", "ssh://example.invalid/x")
                git(clone, "config", "core.sshCommand", f"touch {marker}")
            for what, args, stdin in [
                ("verify", ["verify", "--json"], b""),
                ("recall", ["recall", "answer computed"], b""),
                ("hook", ["context", "--hook", "claude"],
                 hook_payload(clone, route, "answer computed in src/a.py")),
            ]:
                cache = os.path.join(clone, ".memory", ".mem", "cites.json")
                if os.path.exists(cache):
                    os.remove(cache)
                if os.path.exists(marker):
                    os.remove(marker)
                mem(build, clone, home, *args, stdin=stdin)
                results.append(f"{route} {what}: {'RAN' if os.path.exists(marker) else 'no'}")
        print(f"  {build}: " + ", ".join(results))


def generate(repo, out, count=300):
    """`count` memories citing REPO's files and functions as they were at random commits."""
    def g(*args):
        return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout
    rng = random.Random(7)
    commits = [l.split() for l in g("log", "--first-parent", "--format=%H %ct", "HEAD").decode().splitlines()]
    made = 0
    while made < count:
        commit, at = rng.choice(commits[10:])
        files = [f for f in g("ls-tree", "-r", "--name-only", commit).decode().splitlines()
                 if f.endswith((".rs", ".py", ".go", ".ts", ".js", ".c"))]
        if not files:
            continue
        path = rng.choice(files)
        text = g("cat-file", "blob", f"{commit}:{path}").decode("utf-8", "replace")
        names = re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:fn|def|func|function)\s+([A-Za-z_]\w*)", text, re.M)
        created = datetime.datetime.fromtimestamp(int(at) + 60, datetime.timezone.utc)
        if names and made % 3:
            body = f"`{rng.choice(names)}()` in {path} handles this; read it before changing the behaviour."
        else:
            body = f"The logic for this lives in {path}; keep it in sync with its tests."
        made += 1
        memory(os.path.join(out, f"m{made:04d}.md"), f"m{made:04d}",
               created.strftime("%Y-%m-%dT%H:%M:%SZ"), body)


def real_repository(work, real, builds):
    print(f"3. {real}: a full and a blobless clone, 300 generated memories each")
    source = os.path.join(work, "real")
    if not os.path.isdir(source):
        subprocess.run(["git", "clone", "-q", real, source], check=True)
        subprocess.run(["git", "-C", source, "config", "uploadpack.allowFilter", "true"], check=True)
    for kind in ["full", "blobless"]:
        clones = []
        for n, build in enumerate(builds):
            clone = os.path.join(work, f"real-{kind}-{n}")
            shutil.rmtree(clone, ignore_errors=True)
            extra = ["--filter=blob:none"] if kind == "blobless" else []
            subprocess.run(["git", "clone", "-q", *extra, f"file://{source}", clone], check=True)
            home = os.path.join(work, f"home-real-{kind}-{n}")
            os.makedirs(home, exist_ok=True)
            mem(build, clone, home, "init", "--project")
            generate(source, os.path.join(clone, ".memory"))
            clones.append((clone, home))

        def verify(n):
            clone, home = clones[n]
            cache = os.path.join(clone, ".memory", ".mem", "cites.json")
            if os.path.exists(cache):
                os.remove(cache)
            return mem(builds[n], clone, home, "verify", "--json")

        def missing(n):
            out = subprocess.run(
                ["git", "-C", clones[n][0], "rev-list", "--objects", "--all", "--missing=print"],
                capture_output=True).stdout.decode()
            return sum(1 for line in out.splitlines() if line.startswith("?"))

        before = [missing(n) for n in range(len(builds))]
        firsts = [verify(n) for n in range(len(builds))]
        times = [[f[3]] for f in firsts]
        # The builds take turns; a blobless clone runs once (a build that fetches changes it).
        for _ in range(6 if kind == "full" else 0):
            for n in range(len(builds)):
                times[n].append(verify(n)[3])
        outputs = []
        for n, build in enumerate(builds):
            out = firsts[n][1]
            outputs.append(out)
            counts = collections.Counter(v["code_status"] for v in json.loads(out))
            print(f"  {kind}, {build}: verify {statistics.median(times[n]):.2f} s (median of "
                  f"{len(times[n])}); missing objects {before[n]} -> {missing(n)}; {dict(counts)}")
        if len(outputs) > 1:
            print(f"  {kind}: the builds' outputs are {'the same' if len(set(outputs)) == 1 else 'different'}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work")
    parser.add_argument("--real")
    parser.add_argument("builds", nargs="+")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="mem-boundary-")
    os.makedirs(work, exist_ok=True)
    builds = [os.path.abspath(b) for b in args.builds]
    big_file(work, builds)
    partial_clone(work, builds)
    if args.real:
        real_repository(work, os.path.abspath(args.real), builds)
    if not args.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
