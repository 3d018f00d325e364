#!/usr/bin/env python3
"""The server time of 20 memory pages of `mem ui` started in a git project (its root
`TOP/.memory`, found from TOP, so the code its memories cite is checked), median of the
`Server-Timing` headers (issue #53, item 6).

    scripts/ui_git_page.py MEM TOP/.memory
"""
import json, statistics, subprocess, sys, time, urllib.request, os
mem, root = sys.argv[1], sys.argv[2]
env = dict(os.environ, MEM_NO_SERVER="1", MEM_NOW="2026-11-30T12:00:00Z")
subprocess.run([mem, "--dir", root, "index"], capture_output=True, env=env)
p = subprocess.Popen([mem, "ui", "--port", "0"], cwd=os.path.dirname(root), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
url = p.stdout.readline().decode().strip()
base = url[:-1]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
ids = json.loads(subprocess.run([mem, "--dir", root, "list", "--json"], capture_output=True, env=env).stdout)[:21]
def timing(path):
    with opener.open(base + path) as r:
        r.read()
        return float(r.headers["Server-Timing"].split("dur=")[1])
timing("/memory/" + ids[0]["id"])
t = [timing("/memory/" + m["id"]) for m in ids[1:21]]
print("memory page in a git root: %.1f ms median server time (20 pages)" % statistics.median(t))
p.kill()
