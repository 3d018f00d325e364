#!/usr/bin/env python3
"""A prompt hook against local processes that misbehave, and a server against endless requests
(issue #51), for one or more mem builds.

Usage: scripts/local_processes.py [--runs N] [--cap S] MEM [MEM ...]

For each build, on a copy of memories.example/ with a private XDG_RUNTIME_DIR, a `mem mcp` of
the root is started and the per-prompt hook (`context --hook claude --budget 2000`) is timed:
  in-process     MEM_NO_SERVER=1
  stopped        the server stopped (SIGSTOP, between calls) and its listen backlog full
                 (connections closed at once stay queued)
  dribbling      a fake server at the stopped server's socket takes the request, then sends
                 its answer a byte a second
  huge           the fake server answers 15 MiB at once (the bytes the hook prints are shown)
Each hook is killed after --cap seconds (shown as ">CAP"). Then, against a running server, 32
clients send requests that never end (no line break) for 8 s: the server's resident memory
before, during and 3 s after. Prints medians of --runs runs. Nothing leaves the temporary
folder.
"""

import argparse
import fcntl
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "memories.example")
PROMPT = "why does the login test fail on staging"


class Root:
    def __init__(self, mem, tmp):
        self.mem = mem
        self.root = os.path.join(tmp, "root")
        shutil.copytree(EXAMPLE, self.root)
        self.env = dict(os.environ)
        self.env.update(
            HOME=os.path.join(tmp, "home"),
            XDG_CONFIG_HOME=os.path.join(tmp, "home/.config"),
            XDG_RUNTIME_DIR=os.path.join(tmp, "run"),
            MEM_NOW="2026-11-30T12:00:00Z",
        )
        for var in ["MEM_DIR", "MEM_EMBED_MODEL_DIR", "ORT_DYLIB_PATH"]:
            self.env.pop(var, None)
        os.makedirs(self.env["HOME"])
        os.makedirs(self.env["XDG_RUNTIME_DIR"], mode=0o700)
        subprocess.run([mem, "--dir", self.root, "index"], env=self.env, capture_output=True)
        self.hooks = 0

    def hook(self, served, cap):
        """The hook's wall time (None past `cap`) and the bytes it printed."""
        self.hooks += 1
        env = dict(self.env, MEM_NO_SERVER="0" if served else "1")
        payload = json.dumps({"session_id": f"s{self.hooks}", "hook_event_name": "UserPromptSubmit",
                              "prompt": PROMPT, "cwd": self.root})
        start = time.monotonic()
        try:
            out = subprocess.run([self.mem, "--dir", self.root, "context", "--hook", "claude", "--budget", "2000"],
                                 input=payload.encode(), env=env, cwd=self.root,
                                 capture_output=True, timeout=cap)
        except subprocess.TimeoutExpired:
            return None, 0
        return time.monotonic() - start, len(out.stdout)

    def server(self):
        """A `mem mcp` of the root past its handshake, its socket and its process."""
        proc = subprocess.Popen([self.mem, "--dir", self.root, "mcp"], env=dict(self.env, MEM_NO_SERVER="0"),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "probe", "version": "1"}}}
        proc.stdin.write((json.dumps(init) + "\n").encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        folder = os.path.join(self.env["XDG_RUNTIME_DIR"], "mem")
        for _ in range(1200):
            socks = [f for f in os.listdir(folder)] if os.path.isdir(folder) else []
            socks = [s for s in socks if s.endswith(f"-{proc.pid}.sock")]
            if socks:
                return proc, os.path.join(folder, socks[0])
            time.sleep(0.05)
        raise SystemExit("the server never listened")

    def stop(self, proc):
        """Stops the server between calls (not holding the root's lock)."""
        with open(os.path.join(self.root, ".mem/lock"), "a") as lock:
            while True:
                os.kill(proc.pid, signal.SIGSTOP)
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    return
                except BlockingIOError:
                    os.kill(proc.pid, signal.SIGCONT)
                    time.sleep(0.02)


def fill_backlog(path):
    queued = 0
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except (BlockingIOError, ConnectionRefusedError):
            s.close()
            return queued
        s.close()
        queued += 1


def fake(path, reply):
    """Serves `reply(conn)` at `path` (the stopped server's socket) until the returned event."""
    os.remove(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    listener.settimeout(0.2)
    end = threading.Event()

    def one(conn):
        try:
            conn.makefile("rb").readline()
            reply(conn, end)
        except OSError:
            pass
        finally:
            conn.close()

    def loop():
        while not end.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            threading.Thread(target=one, args=(conn,), daemon=True).start()
        listener.close()

    threading.Thread(target=loop, daemon=True).start()
    return end


def answer(text):
    return (json.dumps({"Answer": {"text": text, "memories": 1, "sent": [], "warnings": []}}) + "\n").encode()


def dribble(conn, end):
    conn.sendall(b'"Accepted"\n')
    for b in answer("DRIBBLED"):
        if end.wait(1.0):
            return
        conn.sendall(bytes([b]))


HUGE = answer("HUGE" + "x" * (15 << 20))


def huge(conn, end):
    conn.sendall(b'"Accepted"\n')
    conn.sendall(HUGE)


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024


def endless(path, pid, seconds=8, clients=32):
    stop = threading.Event()

    def client():
        chunk = b"x" * (64 << 10)
        while not stop.is_set():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1)
            try:
                s.connect(path)
                while not stop.is_set():
                    s.sendall(chunk)
            except OSError:
                pass
            finally:
                s.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    before = rss(pid)
    for t in threads:
        t.start()
    time.sleep(seconds)
    during = rss(pid)
    stop.set()
    for t in threads:
        t.join()
    time.sleep(3)
    return before, during, rss(pid)


def fmt(times, cap):
    done = [t for t in times if t is not None]
    if len(done) < len(times):
        return f">{cap:.0f} s ({len(times) - len(done)} of {len(times)} killed)"
    return f"{statistics.median(done) * 1000:.0f} ms"


def measure(mem, runs, cap):
    with tempfile.TemporaryDirectory() as tmp:
        root = Root(mem, tmp)
        results = {"in-process": [], "stopped": [], "dribbling": [], "huge": []}
        printed = []
        queued = []
        for _ in range(runs):
            results["in-process"].append(root.hook(False, cap)[0])
            proc, path = root.server()
            root.hook(True, cap)
            root.stop(proc)
            queued.append(fill_backlog(path))
            results["stopped"].append(root.hook(True, cap)[0])
            # The stopped server's socket, served by a fake (the process alive).
            end = fake(path, dribble)
            results["dribbling"].append(root.hook(True, cap)[0])
            end.set()
            time.sleep(0.3)
            end = fake(path, huge)
            took, size = root.hook(True, cap)
            results["huge"].append(took)
            printed.append(size)
            end.set()
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        proc, path = root.server()
        root.hook(True, cap)
        before, during, after = endless(path, proc.pid)
        proc.kill()
        proc.wait()
    print(f"{mem}:")
    for name, times in results.items():
        print(f"  {name:11} {fmt(times, cap)}")
    print(f"  backlog filled with {statistics.median(queued):.0f} connections; "
          f"the huge answer's hook printed {statistics.median(printed):.0f} bytes")
    print(f"  endless requests: server {before} MiB before, {during} MiB during, {after} MiB after")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("mem", nargs="+")
    args = parser.parse_args()
    for mem in args.mem:
        measure(os.path.abspath(mem), args.runs, args.cap)


if __name__ == "__main__":
    main()
