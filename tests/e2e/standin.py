#!/usr/bin/env python3
"""A stand-in for the model service of Claude Code and Codex, for the end-to-end tests.

Listens on 127.0.0.1 only (port 0: the system picks one, written to --port-file), logs every
request it gets as one JSON line (path and body) to --log, and answers:

- POST /v1/messages (Anthropic Messages, streamed or not; what Claude Code speaks) and
  /v1/messages/count_tokens;
- POST /v1/responses (OpenAI Responses, streamed; what Codex speaks through a custom provider);
- POST /v1/chat/completions (OpenAI Chat Completions, streamed or not; what pi speaks through a
  provider of `api: "openai-completions"` in its models.json);
- POST /v1beta/models/MODEL:streamGenerateContent (server-sent events) and :generateContent
  (Gemini API; what Gemini CLI speaks with GOOGLE_GEMINI_BASE_URL), and :countTokens.

The answer follows a plan (--plan, JSON): {"tool": NAME, "input": {...}, "text": "..."}, with
"namespace": NS for a tool Codex offers inside a namespace item (its MCP servers' tools). A
request that offers the tool NAME and does not yet carry that call's result gets the tool call;
any other request gets the text. Without a tool, every answer is the text. Python stdlib only.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTER = [0]


def next_id(prefix):
    with LOCK:
        COUNTER[0] += 1
        return f"{prefix}_{COUNTER[0]}"


def anthropic_has_result(body):
    """Whether the conversation already holds a tool result (the plan's call was answered)."""
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") == "tool_result" for block in content
        ):
            return True
    return False


def openai_has_result(body):
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(item, dict) and item.get("type") == "function_call_output" for item in items
    )


def chat_has_result(body):
    return any(
        isinstance(message, dict) and message.get("role") == "tool"
        for message in body.get("messages", [])
    )


def gemini_has_result(body):
    return any(
        isinstance(part, dict) and "functionResponse" in part
        for content in body.get("contents", [])
        if isinstance(content, dict)
        for part in content.get("parts", [])
    )


def gemini_offered(tools, name):
    return any(
        isinstance(decl, dict) and decl.get("name") == name
        for tool in tools or []
        if isinstance(tool, dict)
        for decl in tool.get("functionDeclarations", []) or []
    )


def offered(tools, name, key, namespace=None):
    """Whether the request offers the tool `name` (inside the namespace item `namespace`)."""
    if namespace is not None:
        spaces = [t for t in tools or [] if isinstance(t, dict) and t.get("name") == namespace]
        return any(offered(space.get("tools"), name, key) for space in spaces)
    return any(isinstance(t, dict) and t.get(key) == name for t in tools or [])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with LOCK, open(self.server.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        return body

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        self.read_body()
        self.send_json({"data": [], "object": "list"})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.read_body()
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.send_json({"input_tokens": 100})
        elif path.endswith("/messages"):
            self.anthropic(body)
        elif path.endswith("/responses"):
            self.openai(body)
        elif path.endswith("/chat/completions"):
            self.chat(body)
        elif path.endswith(":countTokens"):
            self.send_json({"totalTokens": 100})
        elif path.endswith(":streamGenerateContent") or path.endswith(":generateContent"):
            self.gemini(body, path.endswith(":streamGenerateContent"))
        else:
            self.send_json({"error": {"type": "not_found", "message": path}}, 404)

    def anthropic(self, body):
        plan = self.server.plan
        text = plan.get("text", "Done.")
        use_tool = (
            plan.get("tool")
            and offered(body.get("tools"), plan["tool"], "name", plan.get("namespace"))
            and not anthropic_has_result(body)
        )
        message_id = next_id("msg")
        model = body.get("model", "stand-in")
        if use_tool:
            block = {"type": "tool_use", "id": next_id("toolu"), "name": plan["tool"], "input": {}}
            partial = json.dumps(plan.get("input", {}))
            content = [dict(block, input=plan.get("input", {}))]
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            content = [{"type": "text", "text": text}]
            stop = "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 10}
        if not body.get("stream"):
            self.send_json({
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage,
            })
            return
        delta = (
            {"type": "input_json_delta", "partial_json": partial}
            if use_tool else {"type": "text_delta", "text": text}
        )
        self.send_events([
            ("message_start", {"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def gemini(self, body, stream):
        plan = self.server.plan
        use_tool = (
            plan.get("tool")
            and gemini_offered(body.get("tools"), plan["tool"])
            and not gemini_has_result(body)
        )
        if use_tool:
            part = {"functionCall": {"name": plan["tool"], "args": plan.get("input", {})}}
        else:
            part = {"text": plan.get("text", "Done.")}
        answer = {
            "candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                              "totalTokenCount": 110},
            "modelVersion": "stand-in",
        }
        if not stream:
            self.send_json(answer)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(f"data: {json.dumps(answer)}\r\n\r\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def openai(self, body):
        plan = self.server.plan
        text = plan.get("text", "Done.")
        use_tool = (
            plan.get("tool")
            and offered(body.get("tools"), plan["tool"], "name", plan.get("namespace"))
            and not openai_has_result(body)
        )
        response_id = next_id("resp")
        model = body.get("model", "stand-in")
        if use_tool:
            item = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                    "name": plan["tool"], "arguments": json.dumps(plan.get("input", {})),
                    "status": "completed"}
            if plan.get("namespace"):
                item["namespace"] = plan["namespace"]
            events = [
                ("response.output_item.added", {"type": "response.output_item.added",
                                                "output_index": 0, "item": item}),
                ("response.output_item.done", {"type": "response.output_item.done",
                                               "output_index": 0, "item": item}),
            ]
        else:
            item_id = next_id("msg")
            item = {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
            events = [
                ("response.output_item.added", {"type": "response.output_item.added",
                                                "output_index": 0,
                                                "item": dict(item, status="in_progress",
                                                             content=[])}),
                ("response.output_text.delta", {"type": "response.output_text.delta",
                                                "item_id": item_id, "output_index": 0,
                                                "content_index": 0, "delta": text}),
                ("response.output_item.done", {"type": "response.output_item.done",
                                               "output_index": 0, "item": item}),
            ]
        response = {"id": response_id, "object": "response", "created_at": 0, "model": model,
                    "status": "in_progress", "output": []}
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 110}
        done = dict(response, status="completed", output=[item], usage=usage)
        self.send_events(
            [("response.created", {"type": "response.created", "response": response})]
            + events
            + [("response.completed", {"type": "response.completed", "response": done})]
        )


    def chat(self, body):
        plan = self.server.plan
        text = plan.get("text", "Done.")
        tools = [t.get("function") for t in body.get("tools") or [] if isinstance(t, dict)]
        use_tool = (
            plan.get("tool")
            and offered(tools, plan["tool"], "name")
            and not chat_has_result(body)
        )
        head = {"id": next_id("chatcmpl"), "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model", "stand-in")}
        if use_tool:
            call = {"index": 0, "id": next_id("call"), "type": "function",
                    "function": {"name": plan["tool"],
                                 "arguments": json.dumps(plan.get("input", {}))}}
            delta, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": text}, "stop"
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if not body.get("stream"):
            message = {k: v for k, v in delta.items()}
            if use_tool:
                message["tool_calls"] = [{k: v for k, v in call.items() if k != "index"}]
            self.send_json(dict(head, object="chat.completion", usage=usage, choices=[
                {"index": 0, "message": message, "finish_reason": finish}]))
            return
        chunks = [
            dict(head, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
            dict(head, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
            dict(head, choices=[], usage=usage),
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--plan", default="{}")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.log_path = args.log
    server.plan = json.loads(args.plan)
    open(args.log, "a").close()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
