#!/usr/bin/env python3
"""The team store at scale: push throughput, the HNSW build, and recall through the team layer.

Usage: scripts/team_scale.py --model DIR --repo GIT_REPO --pg PG_DIR --work DIR --example EX MEM
       [--rows 1000000] [--projects 50] [--authors 200] [--base 2000] [--real 10000]
       [--queries 100] [--ask-queries 100] [--build-memory 4GB] [--steps all|recall]
       [--also OTHER_MEM ...]

MEM is a release build of mem, EX the same build's `team_scale` example
(`cargo build --release --bin mem --example team_scale`); PG_DIR holds PostgreSQL with pgvector
(`scripts/postgres.sh PG_DIR`); GIT_REPO is a real repository whose commit messages are the
memories' texts. In WORK (kept, so that a later `--steps recall` reuses the loaded store):
  1. texts: the distinct commit messages (subject and body) of GIT_REPO, no merges; the first
     BASE + REAL are memories, the next QUERIES subjects are the questions.
  2. embed: the real model's vectors of the first BASE + REAL texts (the example's `embed`).
  3. a server: PostgreSQL started in WORK/pg (as nobody when run as root), shared_buffers 4GB.
     `mem team init` without a model: the schema, no HNSW index yet.
  4. load: ROWS rows from PROJECTS projects and AUTHORS authors, whose vectors perturb the BASE
     real ones (the example's `load`, through `mem_team::Team::push`).
  5. HNSW: `ALTER DATABASE team SET maintenance_work_mem = BUILD_MEMORY`, then `mem team init`
     with the model: the build's whole time.
  6. real: a root of REAL memory files (the texts after the BASE ones) in a git repository,
     indexed with the model (`mem index`, timed), then `mem team push` (timed): the whole
     process, the model embedding each row.
  7. recall: the QUERIES questions asked (a) of the store alone, as the superuser and as a role
     granted 10 projects (the example's `ask`, the first ASK_QUERIES questions); (b) by `mem recall` (whole process, a copy of
     memories.example with the model), with no team, the team as the superuser, the team as the
     granted role, taking turns (with `--also`, other builds as the superuser among them); (c) by the prompt hook served by the session's `mem mcp`
     (`context --hook claude --budget 2000`), with no team and with the team, taking turns,
     counting the hooks whose answer held the team's block.
Prints one JSON line per step, then the medians and 95th percentiles.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hook_timings import EXAMPLE  # noqa: E402
from served_hooks import run, start_server  # noqa: E402

PASSWORD = "team-scale-secret"
PORT = 55432


def sh(cmd, env=None, cwd=None, quiet=False):
    """Runs cmd, failing the script with its output when it fails; its stdout."""
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    if not quiet and out.stderr.strip():
        print(out.stderr.strip(), file=sys.stderr)
    return out.stdout


def timed(cmd, env=None, cwd=None):
    """Runs cmd; (seconds, stdout)."""
    start = time.perf_counter()
    out = sh(cmd, env=env, cwd=cwd)
    return time.perf_counter() - start, out


def pct(times):
    """The median and the 95th percentile of times (ms)."""
    times = sorted(times)
    at = lambda q: times[round((len(times) - 1) * q)]  # noqa: E731
    return {"p50_ms": round(at(0.5), 1), "p95_ms": round(at(0.95), 1), "n": len(times)}


def texts(repo, work, base, real, queries):
    """Writes texts.jsonl (BASE + REAL memories) and queries.jsonl (QUERIES subjects)."""
    log = sh(["git", "-C", repo, "log", "--no-merges", "--format=%s%n%n%b%x00"], quiet=True)
    seen, memories, subjects = set(), [], []
    for entry in log.split("\0"):
        text = entry.strip()
        subject = text.split("\n", 1)[0].strip()
        if len(subject) < 20 or subject in seen:
            continue
        seen.add(subject)
        if len(memories) < base + real:
            memories.append(text[:1500])
        elif len(subjects) < queries:
            subjects.append(subject)
    if len(subjects) < queries:
        sys.exit(f"{repo}: {len(memories)} texts and {len(subjects)} questions, too few")
    for name, items in (("texts.jsonl", memories), ("queries.jsonl", subjects)):
        with open(os.path.join(work, name), "w") as f:
            f.writelines(json.dumps(t) + "\n" for t in items)
    return memories, subjects


def as_server_user(cmd):
    """cmd run as nobody when this runs as root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + cmd
    return cmd


def start_postgres(pg, work):
    """PostgreSQL in WORK/pg on PORT (initdb the first time); the database `team`."""
    bin_dir = os.path.join(pg, "bin")
    data = os.path.join(work, "pg", "data")
    if not os.path.isdir(data):
        os.makedirs(os.path.dirname(data), exist_ok=True)
        os.chmod(os.path.dirname(data), 0o777)
        pwfile = os.path.join(work, "pg", "pw")
        with open(pwfile, "w") as f:
            f.write(PASSWORD)
        os.chmod(pwfile, 0o644)
        sh(as_server_user([os.path.join(bin_dir, "initdb"), "-D", data, "-U", "postgres",
                           "--auth=scram-sha-256", "-E", "UTF8", "--no-locale",
                           f"--pwfile={pwfile}"]), quiet=True)
        fresh = True
    else:
        fresh = False
    options = (f"-p {PORT} -k {os.path.join(work, 'pg')} -c listen_addresses=127.0.0.1 "
               "-c shared_buffers=4GB -c max_wal_size=8GB -c max_parallel_maintenance_workers=1")
    sh(as_server_user([os.path.join(bin_dir, "pg_ctl"), "-D", data, "-o", options, "-l",
                       os.path.join(work, "pg", "log"), "-w", "start"]), quiet=True)
    if fresh:
        psql(pg, "postgres", "CREATE DATABASE team")
    return data


def stop_postgres(pg, data):
    sh(as_server_user([os.path.join(pg, "bin", "pg_ctl"), "-D", data, "-m", "fast", "-w",
                       "stop"]), quiet=True)


def psql(pg, db, sql):
    env = {**os.environ, "PGPASSWORD": PASSWORD}
    return sh([os.path.join(pg, "bin", "psql"), "-h", "127.0.0.1", "-p", str(PORT), "-U",
               "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-tA", "-c", sql], env=env,
              quiet=True).strip()


def home(work, name, role, model=None, team=True):
    """A HOME whose user configuration names the store as `role` (and the model)."""
    path = os.path.join(work, name)
    os.makedirs(os.path.join(path, ".config", "mem"), exist_ok=True)
    config = ""
    if team:
        config += (f'[team]\nurl = "postgres://{role}@127.0.0.1:{PORT}/team"\n'
                   f'author = "scale"\nmachine = "scale"\n')
    with open(os.path.join(path, ".config", "mem", "config.toml"), "w") as f:
        f.write(config)
    env = {"PATH": "/usr/bin:/bin", "HOME": path, "LANG": "C.UTF-8", "PGPASSWORD": PASSWORD,
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "XDG_CONFIG_HOME": os.path.join(path, ".config")}
    if model:
        env["MEM_EMBED_MODEL_DIR"] = model
    return env


def scratch(work):
    """A copy of memories.example for the commands that need a root but not its memories."""
    root = os.path.join(work, "scratch")
    if not os.path.isdir(root):
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mem"))
    return root


def load_steps(args, work, mem, example, model):
    memories, _ = texts(args.repo, work, args.base, args.real, args.queries)
    vectors = os.path.join(work, "vectors.f32")
    base_texts = os.path.join(work, "base.jsonl")
    with open(base_texts, "w") as f:
        f.writelines(json.dumps(t) + "\n" for t in memories)
    print(sh([example, "embed", model, base_texts, vectors]).strip(), flush=True)
    data = start_postgres(args.pg, work)
    try:
        owner = home(work, "home-owner", "postgres")
        took, out = timed([mem, "--dir", scratch(work), "team", "init"], env=owner)
        print(json.dumps({"step": "init without a model", "seconds": took,
                          "said": out.strip()}), flush=True)
        url = f"postgres://postgres@127.0.0.1:{PORT}/team"
        env = {**os.environ, "PGPASSWORD": PASSWORD}
        print(sh([example, "load", url, base_texts, vectors, str(args.rows), str(args.projects),
                  str(args.authors), str(args.base)], env=env).strip(), flush=True)
        psql(args.pg, "team", "VACUUM ANALYZE mem_memories")
        psql(args.pg, "team", f"ALTER DATABASE team SET maintenance_work_mem = '{args.build_memory}'")
        with_model = home(work, "home-owner", "postgres", model)
        took, out = timed([mem, "--dir", scratch(work), "team", "init"], env=with_model)
        sizes = psql(args.pg, "team", "SELECT pg_size_pretty(pg_table_size('mem_memories')) || ' ' "
                     "|| pg_size_pretty(pg_relation_size('mem_memories_hnsw_384')) || ' ' || "
                     "pg_size_pretty(pg_relation_size('mem_memories_search'))")
        print(json.dumps({"step": "hnsw", "seconds": took, "maintenance_work_mem":
                          args.build_memory, "said": out.strip(),
                          "table hnsw gin": sizes}), flush=True)
        real = os.path.join(work, "real")
        shutil.rmtree(real, ignore_errors=True)
        os.makedirs(real)
        sh(["git", "init", "-q", real])
        root = os.path.join(real, ".memory")
        os.makedirs(root)
        with open(os.path.join(root, "mem.toml"), "w") as f:
            f.write('[team]\nproject = "scale/real"\n')
        for i, text in enumerate(memories[args.base:]):
            title, _, rest = text.partition("\n")
            with open(os.path.join(root, f"r{i:05}.md"), "w") as f:
                f.write(f"---\nid: r{i:05}\ntype: semantic\nimportance: 5\n"
                        f"created: 2026-01-01T00:00:00Z\n---\n# {title.strip()}\n\n{rest.strip()}\n")
        took, _ = timed([mem, "--dir", root, "index"], env=with_model)
        print(json.dumps({"step": "real: mem index", "rows": args.real, "seconds": took}),
              flush=True)
        took, out = timed([mem, "--dir", root, "team", "push"], env=with_model)
        print(json.dumps({"step": "real: mem team push", "rows": args.real, "seconds": took,
                          "rows_per_second": args.real / took, "said": out.strip()}), flush=True)
        print(json.dumps({"step": "rows", "live": psql(args.pg, "team",
                          "SELECT count(*) FROM mem_memories WHERE state = 'live'")}), flush=True)
    finally:
        stop_postgres(args.pg, data)


def recall_steps(args, work, mem, example, model):
    queries = [json.loads(line) for line in open(os.path.join(work, "queries.jsonl"))]
    data = start_postgres(args.pg, work)
    try:
        psql(args.pg, "team", "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
             f"'reader') THEN CREATE ROLE reader LOGIN PASSWORD '{PASSWORD}'; END IF; END $$")
        owner = home(work, "home-owner", "postgres", model)
        granted = [f"scale/p{p:02}" for p in range(10)]
        sh([mem, "--dir", scratch(work), "team", "grant", "reader"] + granted, env=owner)
        asked = os.path.join(work, "asked.jsonl")
        with open(asked, "w") as f:
            f.writelines(json.dumps(q) + "\n" for q in queries[:args.ask_queries])
        for role in ("postgres", "reader"):
            url = f"postgres://{role}@127.0.0.1:{PORT}/team"
            env = {**os.environ, "PGPASSWORD": PASSWORD}
            print(sh([example, "ask", url, model, asked], env=env).strip(), flush=True)
        # (b) mem recall, whole process, the three settings taking turns.
        settings = {"no team": home(work, "home-none", "postgres", model, team=False),
                    "team (superuser)": owner,
                    "team (granted role)": home(work, "home-reader", "reader", model)}
        roots = {}
        for i, name in enumerate(settings):
            root = os.path.join(work, f"recall{i}")
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mem"))
            sh([mem, "--dir", root, "index"], env=settings[name])
            roots[name] = root
        # Another build (--also) beside this one, as the superuser, taking turns too.
        runs = [(name, mem) for name in settings]
        runs += [(f"team (superuser), {other}", other) for other in args.also]
        times = {name: [] for name, _ in runs}
        for query in queries:
            for name, build in runs:
                setting = name if name in settings else "team (superuser)"
                start = time.perf_counter()
                sh([build, "--dir", roots[setting], "recall", query], env=settings[setting],
                   quiet=True)
                times[name].append((time.perf_counter() - start) * 1000)
        print(json.dumps({"step": "mem recall (whole process, model)",
                          **{n: pct(t) for n, t in times.items()}}), flush=True)
        # (c) the prompt hook served by the session's mem mcp.
        served = {"no team": settings["no team"], "team (granted role)": settings["team (granted role)"]}
        repos, servers = {}, []
        try:
            for name, env in served.items():
                repo = os.path.join(work, "hook-" + name.split()[0])
                shutil.rmtree(repo, ignore_errors=True)
                os.makedirs(repo)
                sh(["git", "init", "-q", repo], env=env)
                shutil.copytree(EXAMPLE, os.path.join(repo, ".memory"),
                                ignore=shutil.ignore_patterns(".mem"))
                sh([mem, "init", os.path.join(repo, ".memory")], env=env)
                sh([mem, "--dir", os.path.join(repo, ".memory"), "index"], env=env)
                repos[name] = repo
                servers.append(start_server(mem, repo, env))
            times = {name: [] for name in served}
            with_team = 0
            for query in queries:
                for name, env in served.items():
                    payload = {"session_id": str(uuid.uuid4()), "cwd": repos[name],
                               "hook_event_name": "UserPromptSubmit", "prompt": query,
                               "transcript_path": os.path.join(work, "none.jsonl")}
                    command = [mem, "context", "--hook", "claude", "--budget", "2000"]
                    start = time.perf_counter()
                    out = subprocess.run(command, input=json.dumps(payload), text=True,
                                         capture_output=True, cwd=repos[name], env=env)
                    times[name].append((time.perf_counter() - start) * 1000)
                    if out.returncode != 0 or out.stderr.strip():
                        sys.exit(f"hook: {out.stderr}")
                    # The block's origin, in the hook's JSON answer.
                    with_team += f"team store 127.0.0.1:{PORT}/team" in out.stdout
            failed = os.path.join(repos["team (granted role)"], ".memory", ".mem", "team-failed")
            print(json.dumps({"step": "prompt hook served by mem mcp (model)",
                              **{n: pct(t) for n, t in times.items()},
                              "hooks with the team's block": with_team,
                              "team-failed": open(failed).read().strip()
                              if os.path.exists(failed) else None}), flush=True)
        finally:
            for server in servers:
                server.stdin.close()
                server.wait()
    finally:
        stop_postgres(args.pg, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--model", "--repo", "--pg", "--work", "--example"):
        parser.add_argument(name, required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--authors", type=int, default=200)
    parser.add_argument("--base", type=int, default=2000)
    parser.add_argument("--real", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ask-queries", type=int, default=100,
                        help="how many of the questions the store alone is asked")
    parser.add_argument("--build-memory", default="4GB")
    parser.add_argument("--steps", choices=["all", "recall"], default="all")
    parser.add_argument("--also", action="append", default=[], metavar="MEM",
                        help="another build whose mem recall is timed beside MEM's (step 7b)")
    parser.add_argument("mem")
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    mem, example = os.path.abspath(args.mem), os.path.abspath(args.example)
    model, args.pg = os.path.abspath(args.model), os.path.abspath(args.pg)
    if args.steps == "all":
        load_steps(args, work, mem, example, model)
    recall_steps(args, work, mem, example, model)


if __name__ == "__main__":
    sys.exit(main())
