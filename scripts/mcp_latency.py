#!/usr/bin/env python3
"""Times `recall` calls inside a running `mem mcp` server, as an agent makes them.

    scripts/mcp_latency.py MEM ROOT QUERIES.jsonl MODE [RUNS [PASSES]]

Starts `MEM --dir ROOT mcp`, completes the MCP handshake, makes 5 warm-up recalls, then RUNS
(default 50) timed recalls cycling through the queries of QUERIES.jsonl ("query" field), each
in MODE (bm25, vector or hybrid), with --no-record semantics left to the root's settings.
Prints one JSON object: median, mean, p95 and min of the round-trip time per call in ms.

With PASSES, there is no warm-up: the clock starts before the server does, the first call's
time includes the server's start and the handshake, and the RUNS calls are made PASSES times;
one JSON object per pass (the first queries after `mem index` against the later ones).
"""
import json
import statistics
import subprocess
import sys
import time


def main():
    mem, root, queries_path, mode = sys.argv[1:5]
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 50
    passes = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    launched = time.perf_counter()
    queries = [json.loads(line)["query"] for line in open(queries_path) if line.strip()]
    server = subprocess.Popen(
        [mem, "--dir", root, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    next_id = [0]

    def request(method, params):
        next_id[0] += 1
        message = {"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("id") == next_id[0]:
                return reply

    request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp_latency", "version": "0"},
        },
    )
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    server.stdin.flush()

    def recall(query):
        reply = request("tools/call", {"name": "recall", "arguments": {"query": query, "mode": mode}})
        result = reply["result"]
        if result.get("isError"):
            sys.exit("recall failed: " + result["content"][0]["text"])
        found = json.loads(result["content"][0]["text"])
        # The tool answers {"hits": [...]}.
        return found["hits"] if isinstance(found, dict) else found

    if not passes:
        for query in queries[:5]:
            recall(query)
    for number in range(max(passes, 1)):
        times = []
        for i in range(runs):
            started = launched if passes and number == 0 and i == 0 else time.perf_counter()
            hits = recall(queries[i % len(queries)])
            times.append((time.perf_counter() - started) * 1000)
            if mode != "bm25" and hits and "cosine" not in hits[0]:
                sys.exit("the server did not use the model")
        times.sort()
        figures = {"mode": mode, "runs": runs}
        if passes:
            figures["pass"] = number + 1
        figures["median_ms"] = round(statistics.median(times), 2)
        figures["mean_ms"] = round(statistics.mean(times), 2)
        figures["p95_ms"] = round(times[int(0.95 * (len(times) - 1))], 2)
        figures["min_ms"] = round(times[0], 2)
        print(json.dumps(figures))
    server.stdin.close()
    server.wait(timeout=60)


if __name__ == "__main__":
    main()
