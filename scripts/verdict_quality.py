#!/usr/bin/env python3
"""Precision and recall of `mem verify`'s flags on memories written the way agents write them.

Usage: scripts/verdict_quality.py --repo DIR [--old COMMIT | --years N] [--count N] [--seed N]
                                  [--list] MEM [MEM ...]

DIR is a git clone with its whole history (not shallow, not partial). An old commit (COMMIT,
or the newest first-parent commit at least N years, default 3, before HEAD's date) is when the
memories are written: about --count of them (default 150, seeded by --seed, default 55) from
that commit's tree, in the forms agents write (below). Each memory's truth is computed from git
and Python's own parser, sharing no code with mem:

- a path cited holds when HEAD's tree (`git ls-tree -r HEAD`) has it; otherwise it is gone or
  moved (where to, by git's rename detection commit after commit, `git log -M`, is printed);
- a function cited with its file holds when HEAD's version of that file defines it (`ast`:
  a `def`, `async def` or `class` of that name, at any depth); otherwise it is gone from there
  (defined elsewhere, or nowhere). A function cited alone holds when any Python file of HEAD
  defines it.

A memory is stale when one thing it cites does not hold. For each build MEM, a copy of DIR at
HEAD gets a project root (`mem init --project`, `.memory/`, untracked) holding the memories,
each created at the old commit's time, and `mem verify --json` runs there with an empty HOME.
A memory is flagged when its `code_status` is `moved` or `gone` (what mem flags: exit status 1,
the "may be outdated" note); `changed` is not a flag. Prints, per build, precision and recall of
the flags against the truth, by form, and each miss and false flag (`--list`: every memory).

The forms, mixed: a path plain, in backticks, with a line number (`src/a.py:42`, `#L12`), with
Windows separators (`src\\a.py`), or relative to a subfolder (`click/core.py`, `core.py`: only
tails that named one file at the old commit); a function with parentheses in backticks or in
prose (`make_context()`), private ones (`_unpack_args()`), a method with its class
(`Context.invoke()`), and a function in backticks without parentheses (`make_context`), with
its file or alone. About half of each form's memories are drawn from what went stale, so that
both figures rest on enough cases. Paths are those docs/format.md counts (a `/` between two
names, or a name with an extension; a Windows path's last part has an extension); images and
lock files are left out.
"""

import argparse
import ast
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

PATH_FORMS = ["plain", "backticks", "line", "windows", "subfolder"]
FUNCTION_FORMS = ["call_with_file", "backticks_call_with_file", "method_with_file",
                  "backticks_bare_with_file", "backticks_call_alone", "call_alone",
                  "backticks_bare_alone"]
# How many memories of each form, out of 150 (scaled to --count).
SHARE = {
    "plain": 10, "backticks": 10, "line": 12, "windows": 12, "subfolder": 16, "two_paths": 10,
    "call_with_file": 14, "backticks_call_with_file": 14, "method_with_file": 8,
    "backticks_bare_with_file": 10, "backticks_call_alone": 14, "call_alone": 8,
    "backticks_bare_alone": 12,
}
# Forms docs/format.md says are not checked: a function without parentheses.
UNCHECKED_FORMS = {"backticks_bare_with_file", "backticks_bare_alone"}


def git(repo, *args, text=True):
    out = subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True)
    return out.stdout.decode("utf-8", "replace") if text else out.stdout


def old_commit(repo, years):
    head_time = int(git(repo, "log", "-1", "--format=%ct", "HEAD").strip())
    before = head_time - int(years * 365.25 * 86400)
    line = git(repo, "log", "--first-parent", "-1", f"--before={before}", "--format=%H", "HEAD")
    return line.strip()


def tree(repo, rev):
    return [p for p in git(repo, "ls-tree", "-r", "-z", "--name-only", rev).split("\0") if p]


def blobs(repo, rev, paths):
    """The text of each path at rev (one `git cat-file --batch`)."""
    spec = "".join(f"{rev}:{p}\n" for p in paths).encode()
    out = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input=spec,
                         capture_output=True, check=True).stdout
    found, at = {}, 0
    for path in paths:
        end = out.index(b"\n", at)
        header = out[at:end].decode().split()
        at = end + 1
        if len(header) < 3 or header[1] != "blob":
            continue
        size = int(header[2])
        found[path] = out[at:at + size].decode("utf-8", "replace")
        at += size + 1
    return found


def definitions(source):
    """Names a Python file defines (functions, methods, classes) and its methods by class."""
    try:
        parsed = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(), []
    names, methods = set(), []
    for node in ast.walk(parsed):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods.append((node.name, item.name))
    return names, methods


def renames_since(repo, old):
    """Per commit of old..HEAD (oldest first), git's renames and deletions: for where a path went."""
    out = git(repo, "log", "--reverse", "-M", "--name-status", "-z", "--format=%x01%H",
              f"{old}..HEAD")
    steps = []
    for chunk in out.split("\x01")[1:]:
        fields = [f for f in chunk.split("\0")]
        commit = fields[0].strip()
        rest = [f.strip("\n") for f in fields[1:] if f.strip("\n")]
        moves, i = {}, 0
        while i < len(rest):
            status = rest[i]
            if status.startswith("R"):
                moves[rest[i + 1]] = rest[i + 2]
                i += 3
            elif status.startswith("C"):
                i += 3
            else:
                if status == "D":
                    moves.setdefault(rest[i + 1], None)
                i += 2
        steps.append((commit, moves))
    return steps


def where_now(path, steps, head_files):
    at = path
    for _, moves in steps:
        if at in moves:
            at = moves[at]
            if at is None:
                return None
    return at if at in head_files else None


def tails(path, old_files):
    """The tails of path (one folder or more dropped) that name only it in the old tree, in the
    forms docs/format.md counts as paths (with a `/`, or a name with an extension)."""
    parts = path.split("/")
    out = []
    for k in range(1, len(parts)):
        tail = "/".join(parts[k:])
        if "/" not in tail and not has_extension(tail):
            continue
        named = [f for f in old_files if f == tail or f.endswith("/" + tail)]
        if named == [path]:
            out.append(tail)
    return out


def has_extension(path):
    name = path.rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    return bool(dot and stem and ext[:1].isalpha())


def generate(repo, old, count, seed):
    rng = random.Random(seed)
    old_files = tree(repo, old)
    head_files = set(tree(repo, "HEAD"))
    skip = (".jpg", ".png", ".svg", ".ico", ".gif", ".lock")
    paths = [p for p in old_files if not p.endswith(skip) and ("/" in p or has_extension(p))]
    gone_paths = [p for p in paths if p not in head_files]
    kept_paths = [p for p in paths if p in head_files]

    py_old = [p for p in old_files if p.endswith(".py")]
    old_text = blobs(repo, old, py_old)
    py_head = [p for p in head_files if p.endswith(".py")]
    head_text = blobs(repo, "HEAD", py_head)
    head_defs = {p: definitions(t)[0] for p, t in head_text.items()}
    anywhere = set().union(*head_defs.values()) if head_defs else set()
    functions, methods = [], []
    for path, text in old_text.items():
        names, meths = definitions(text)
        for name in sorted(names):
            if len(name) >= 3 and not (name.startswith("__") and name.endswith("__")):
                functions.append((path, name))
        for cls, name in meths:
            if len(name) >= 3 and not name.startswith("__"):
                methods.append((path, cls, name))

    def holds_in(path, name):
        return name in head_defs.get(path, set())

    def stale_fn(path, name):
        return path not in head_files or not holds_in(path, name)

    per = {form: max(1, round(n * count / 150)) for form, n in SHARE.items()}
    memories = []

    def draw(pool_stale, pool_kept, n):
        half = n // 2
        chosen = rng.sample(pool_stale, min(half, len(pool_stale)))
        chosen += rng.sample(pool_kept, min(n - len(chosen), len(pool_kept)))
        rng.shuffle(chosen)
        return chosen

    def topic(path):
        stem = path.rsplit("/", 1)[-1].split(".")[0].strip("_") or "setup"
        return stem.replace("_", " ")

    for form in PATH_FORMS:
        gone = gone_paths
        kept = kept_paths
        if form == "windows":
            gone = [p for p in gone if "/" in p and has_extension(p)]
            kept = [p for p in kept if "/" in p and has_extension(p)]
        if form == "subfolder":
            gone = [p for p in gone if tails(p, old_files)]
            kept = [p for p in kept if tails(p, old_files)]
        for path in draw(gone, kept, per[form]):
            t = topic(path)
            if form == "plain":
                text = f"The {t} part is handled in {path} and nowhere else."
            elif form == "backticks":
                text = f"See `{path}` for the {t} part."
            elif form == "line":
                n = rng.randint(2, 200)
                text = rng.choice([f"The {t} part starts at {path}:{n}.",
                                   f"Look at `{path}#L{n}` for the {t} part."])
            elif form == "windows":
                text = f"On Windows the {t} part was edited in {path.replace('/', chr(92))} first."
            else:
                tail = rng.choice(tails(path, old_files))
                text = f"From its folder: `{tail}` holds the {t} part."
            memories.append({"form": form, "text": text,
                             "cites": [("path", path)], "stale": path not in head_files})
    for _ in range(per["two_paths"]):
        a, b = rng.sample(kept_paths, 1)[0], rng.sample(gone_paths + kept_paths, 1)[0]
        text = f"The {topic(a)} part in {a} works with `{b}`."
        memories.append({"form": "two_paths", "text": text,
                         "cites": [("path", a), ("path", b)],
                         "stale": a not in head_files or b not in head_files})

    stale_fns = [f for f in functions if stale_fn(*f)]
    kept_fns = [f for f in functions if not stale_fn(*f)]
    for form in ["call_with_file", "backticks_call_with_file", "backticks_bare_with_file"]:
        for path, name in draw(stale_fns, kept_fns, per[form]):
            if form == "call_with_file":
                text = f"{name}() in {path} does the {topic(path)} work."
            elif form == "backticks_call_with_file":
                text = f"`{name}()` in `{path}` does the {topic(path)} work."
            else:
                text = f"`{name}` in {path} does the {topic(path)} work."
            memories.append({"form": form, "text": text,
                             "cites": [("path", path), ("function", path, name)],
                             "stale": stale_fn(path, name)})
    stale_m = [m for m in methods if stale_fn(m[0], m[2])]
    kept_m = [m for m in methods if not stale_fn(m[0], m[2])]
    for path, cls, name in draw(stale_m, kept_m, per["method_with_file"]):
        text = f"`{cls}.{name}()` in {path} is where the {topic(path)} work happens."
        memories.append({"form": "method_with_file", "text": text,
                         "cites": [("path", path), ("function", path, name)],
                         "stale": stale_fn(path, name)})
    names = sorted({n for _, n in functions})
    gone_names = [n for n in names if n not in anywhere]
    kept_names = [n for n in names if n in anywhere]
    for form in ["backticks_call_alone", "call_alone", "backticks_bare_alone"]:
        for name in draw(gone_names, kept_names, per[form]):
            words = name.strip("_").replace("_", " ")
            if form == "backticks_call_alone":
                text = f"`{name}()` is the helper for {words}."
            elif form == "call_alone":
                text = f"The {words} step goes through {name}() first."
            else:
                text = f"`{name}` is the helper for {words}."
            memories.append({"form": form, "text": text, "cites": [("function", None, name)],
                             "stale": name not in anywhere})
    for i, m in enumerate(memories):
        m["id"] = f"q{i:03d}"
    steps = renames_since(repo, old)
    for m in memories:
        m["now"] = {c[1]: where_now(c[1], steps, head_files) for c in m["cites"]
                    if c[0] == "path" and c[1] not in head_files}
        m["defined_in"] = {c[2]: sorted(p for p, names in head_defs.items() if c[2] in names)
                           for c in m["cites"] if c[0] == "function"}
    return memories


def run_mem(mem, repo, old, memories, work):
    copy = os.path.join(work, "copy")
    if os.path.exists(copy):
        shutil.rmtree(copy)
    subprocess.run(["git", "clone", "-q", repo, copy], check=True)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": home, "XDG_CONFIG_HOME": home, "LANG": "C.UTF-8",
           "MEM_NO_SERVER": "1"}
    subprocess.run([mem, "init", "--project"], cwd=copy, env=env, check=True,
                   capture_output=True)
    seconds = int(git(repo, "log", "-1", "--format=%ct", old).strip())
    created = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    created = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    for m in memories:
        body = (f"---\nid: {m['id']}\ntype: semantic\nimportance: 5\ncreated: {created}\n---\n"
                f"{m['text']}\n")
        with open(os.path.join(copy, ".memory", f"{m['id']}.md"), "w") as f:
            f.write(body)
    out = subprocess.run([mem, "verify", "--json"], cwd=copy, env=env, capture_output=True)
    if out.returncode not in (0, 1):
        sys.exit(f"mem verify failed: {out.stderr.decode()}")
    return {v["id"]: v for v in json.loads(out.stdout)}


def score(memories, verdicts):
    rows = []
    for m in memories:
        v = verdicts.get(m["id"])
        flagged = bool(v) and v.get("code_status") in ("moved", "gone")
        rows.append((m, v, flagged))
    def figures(subset):
        tp = sum(1 for m, _, f in subset if f and m["stale"])
        fp = sum(1 for m, _, f in subset if f and not m["stale"])
        fn = sum(1 for m, _, f in subset if not f and m["stale"])
        p = tp / (tp + fp) if tp + fp else float("nan")
        r = tp / (tp + fn) if tp + fn else float("nan")
        return tp, fp, fn, p, r
    return rows, figures


def moves(rows):
    """The `moved` citations whose `to` is right, and the others."""
    right, wrong = 0, []
    for m, v, _ in rows:
        for cite in (v or {}).get("cites", []):
            if cite["status"] != "moved":
                continue
            if cite.get("symbol"):
                ok = cite.get("to") in m["defined_in"].get(cite["symbol"], [])
            else:
                ok = m["now"].get(cite["path"]) == cite.get("to")
            if ok:
                right += 1
            else:
                wrong.append((m, cite))
    return right, wrong


def describe_cite(c):
    return (f"{c.get('path')}{'::' + c['symbol'] if c.get('symbol') else ''} {c['status']}"
            f"{' -> ' + c['to'] if c.get('to') else ''}")


def describe(v):
    if not v:
        return "no verdict (cites nothing mem checks)"
    cites = "; ".join(describe_cite(c) for c in v.get("cites", []))
    return f"{v.get('code_status')}: {cites}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--old")
    parser.add_argument("--years", type=float, default=3)
    parser.add_argument("--count", type=int, default=150)
    parser.add_argument("--seed", type=int, default=55)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("mems", nargs="+")
    args = parser.parse_args()
    repo = os.path.abspath(args.repo)
    old = args.old or old_commit(repo, args.years)
    head = git(repo, "rev-parse", "HEAD").strip()
    memories = generate(repo, old, args.count, args.seed)
    stale = sum(1 for m in memories if m["stale"])
    print(f"repository {repo}: old {old} ({git(repo, 'log', '-1', '--format=%cs', old).strip()}),"
          f" HEAD {head} ({git(repo, 'log', '-1', '--format=%cs', 'HEAD').strip()})")
    print(f"{len(memories)} memories, {stale} stale by git's truth")
    for mem in args.mems:
        with tempfile.TemporaryDirectory() as work:
            verdicts = run_mem(os.path.abspath(mem), repo, old, memories, work)
        rows, figures = score(memories, verdicts)
        print(f"\n== {mem}")
        tp, fp, fn, p, r = figures(rows)
        print(f"all forms: precision {p:.3f} ({tp}/{tp + fp}), recall {r:.3f} ({tp}/{tp + fn})")
        checked = [row for row in rows if row[0]["form"] not in UNCHECKED_FORMS]
        tp, fp, fn, p, r = figures(checked)
        print(f"without the functions written without parentheses (docs/format.md checks only those "
              f"joined as names are): precision {p:.3f} ({tp}/{tp + fp}), recall {r:.3f} ({tp}/{tp + fn})")
        right, wrong = moves(rows)
        print(f"moved to: {right} of {right + len(wrong)} `to` right (a path: where git's renames "
              f"lead; a function: a file that defines it at HEAD)")
        for m, cite in wrong:
            print(f"  {m['id']}: {describe_cite(cite)}; truth: {m['now'] or m['defined_in']}")
        print("by form: stale, flagged right, missed, false flags")
        for form in PATH_FORMS + ["two_paths"] + FUNCTION_FORMS:
            sub = [row for row in rows if row[0]["form"] == form]
            tp, fp, fn, _, _ = figures(sub)
            print(f"  {form:26} {len(sub):3} memories: {tp + fn:3} stale, {tp:3} flagged, "
                  f"{fn:3} missed, {fp:3} false")
        for title, pick in [("misses", lambda m, f: m["stale"] and not f),
                            ("false flags", lambda m, f: f and not m["stale"]),
                            ("all", lambda m, f: args.list)]:
            chosen = [(m, v) for m, v, f in rows if pick(m, f)]
            if not chosen:
                continue
            print(f"{title}:")
            for m, v in chosen:
                now = "".join(f" [{p} now: {n or 'gone'}]" for p, n in m["now"].items())
                print(f"  {m['id']} {m['form']}: {m['text']}{now}\n      mem: {describe(v)}")


if __name__ == "__main__":
    main()
