#!/usr/bin/env python3
"""The prune review of `mem ui` on ROOT once usage has been observed for a while (issue #53,
item 2: the issue's root had an observation start, and most of its memories had faded).

    scripts/ui_observed.py MEM ROOT [SINCE]

ROOT is changed: it gets `usage/bench.tsv` with `since SINCE` (default 2025-06-01), then every
faded candidate is archived from the page and the whole archive restored from it. Give it a
copy. Prints the median server time (`Server-Timing`, 11 requests after one warm-up) and size
of the review's first and last pages, and the whole time of each POST and of the review after.
"""
import os, re, statistics, subprocess, sys, time, urllib.parse, urllib.request

mem, root = sys.argv[1], sys.argv[2]
since = sys.argv[3] if len(sys.argv) > 3 else "2025-06-01T00:00:00Z"
os.makedirs(os.path.join(root, "usage"), exist_ok=True)
with open(os.path.join(root, "usage", "bench.tsv"), "w") as f:
    f.write("# mem usage events of one machine: append-only; commit it (docs/teams.md)\n")
    f.write("since\t%s\n" % since)
env = dict(os.environ, MEM_NO_SERVER="1", MEM_NOW="2026-11-30T12:00:00Z")
p = subprocess.Popen([mem, "--dir", root, "ui", "--port", "0"], stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, env=env)
url = p.stdout.readline().decode().strip()
base = url[:-1]
origin = "http://" + urllib.parse.urlsplit(url).netloc
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


poster = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())


def get(path):
    with opener.open(base + path) as r:
        body = r.read()
        return float(r.headers["Server-Timing"].split("dur=")[1]), body


def pages(path, label):
    get(path)
    runs = [get(path) for _ in range(11)]
    times = [t for t, _ in runs]
    print("%s: %.1f ms median of 11, %.1f KB" % (label, statistics.median(times),
                                                 len(runs[0][1]) / 1024))
    return runs[0][1].decode()


def post(path, form, label):
    req = urllib.request.Request(base + path, data=form.encode(), method="POST", headers={
        "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"})
    start = time.monotonic()
    try:
        poster.open(req)
    except urllib.error.HTTPError as e:
        if e.code != 303:
            raise
    print("%s: %.1f s" % (label, time.monotonic() - start))


first = pages("/prune", "review, first page")
reasons = re.findall(r"([a-z_ ]+) \((\d+)\)</(?:a|strong)>", first)
print("candidates by reason: " + ", ".join("%s %s" % (k, n) for k, n in reasons))
faded = dict((k.strip(), int(n)) for k, n in reasons).get("faded", 0)
if faded:
    last = (faded + 49) // 50
    pages("/prune?reason=faded&page=%d" % last, "faded, last page (%d)" % last)
    post("/prune/archive", "all=faded", "archive all %d faded (POST)" % faded)
    pages("/prune", "review with them archived")
    pages("/prune?archived=%d" % ((faded + 49) // 50),
          "review, the archive's last page")
    post("/prune/restore", "all=archive", "restore all (POST)")
    pages("/prune", "review after the restore")
p.kill()
