#!/usr/bin/env python3
"""`mem ui` with idle connections held (issue #53, item 1): the owner's request while N
connections send nothing, and how many of them the server closed 7 s later; the server's
soft limit of open files is LIMIT (`hard` after it: the hard limit too).

    scripts/ui_idle.py MEM ROOT LIMIT N [hard]
"""
import socket, subprocess, sys, time, re, os
mem, root, soft = sys.argv[1], sys.argv[2], int(sys.argv[3])
def limit():
    import resource
    hard = soft if len(sys.argv) > 5 else resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
p = subprocess.Popen([mem, "--dir", root, "ui", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=limit, env=dict(os.environ, MEM_NO_SERVER="1"))
url = p.stdout.readline().decode().strip()
port = int(re.search(r":(\d+)/", url).group(1))
path = url.split(str(port), 1)[1]
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(int(sys.argv[4]))]
def ask(path, extra=""):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(30)
    t = time.time()
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}Connection: close\r\n\r\n".encode())
    try:
        data = s.recv(100)
        return "%s after %.2f s" % (data.split(b"\r\n")[0].decode(), time.time() - t)
    except Exception as e:
        return "no answer after %.1f s (%s)" % (time.time() - t, e)
cookie = ""
if "token=" in url:
    tok = url.split("token=")[1]; path = "/?q=tests"; cookie = f"Cookie: mem_ui_{port}={tok}\r\n"
else:
    path = path + "?q=tests"
print("owner's request with %d idle connections held:" % len(idle), ask(path, cookie))
time.sleep(7)
closed = 0
for s in idle:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b""
    except BlockingIOError:
        pass
print("idle connections closed by the server after 7 s:", closed, "of", len(idle))
p.kill()
