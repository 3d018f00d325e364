#!/usr/bin/env python3
"""A memory page of `mem ui` alone, then behind a slow page (issue #53, item 2): the median wall
time of each, 10 requests each.

    scripts/ui_stall.py MEM ROOT /capture
"""
import json, re, statistics, subprocess, sys, threading, time, urllib.request, os
mem, root, slow = sys.argv[1], sys.argv[2], sys.argv[3]
p = subprocess.Popen([mem, "--dir", root, "ui", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                     env=dict(os.environ, MEM_NO_SERVER="1", MEM_NOW="2026-11-30T12:00:00Z"))
url = p.stdout.readline().decode().strip()
base = url[:-1] if url.endswith("/") else url.split("/?token=")[0]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
cookie = None
if "token=" in url:
    port = re.search(r":(\d+)/", url).group(1)
    cookie = "mem_ui_%s=%s" % (port, url.split("token=")[1])
def get(path):
    req = urllib.request.Request(base + path, headers={"Cookie": cookie} if cookie else {})
    t = time.time()
    with opener.open(req) as r:
        r.read()
    return time.time() - t
ids = json.loads(subprocess.run([mem, "--dir", root, "list", "--json"], capture_output=True, env=dict(os.environ, MEM_NO_SERVER="1")).stdout)[:20]
get("/memory/" + ids[0]["id"]); get(slow)
alone = [get("/memory/" + m["id"]) for m in ids[:10]]
behind = []
for m in ids[10:20]:
    t = threading.Thread(target=get, args=(slow,)); t.start()
    time.sleep(0.2)
    behind.append(get("/memory/" + m["id"]))
    t.join()
print("memory page alone: %.0f ms median; while %s is being served: %.0f ms median" % (statistics.median(alone)*1000, slow, statistics.median(behind)*1000))
p.kill()
