#!/usr/bin/env python3
"""The median server time (`Server-Timing`, 11 requests after one warm-up) of each page PATH
of `mem ui` started on ROOT (issue #53, item 2).

    scripts/ui_pages.py MEM ROOT / /overview
"""
import statistics, subprocess, sys, urllib.request, os
mem, root = sys.argv[1], sys.argv[2]
env = dict(os.environ, MEM_NO_SERVER="1", MEM_NOW="2026-11-30T12:00:00Z")
p = subprocess.Popen([mem, "--dir", root, "ui", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
url = p.stdout.readline().decode().strip()
base = url[:-1]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def timing(path):
    with opener.open(base + path) as r:
        r.read()
        return float(r.headers["Server-Timing"].split("dur=")[1])
for page in sys.argv[3:]:
    timing(page)
    t = [timing(page) for _ in range(11)]
    print("%s: %.1f ms median of 11" % (page, statistics.median(t)))
p.kill()
