"""Drives `mem mcp` with the official MCP Python SDK (issue #55, item 10): the calls a client
of that SDK makes, and a request whose params do not parse, sent through the SDK's own
send_request. Prints one JSON object of what the server answered.

Usage: python client.py MEM NOW  (run in the folder the server should find its root from; the
server gets this process's environment).
"""

import asyncio
import json
import os
import sys

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    """The text of a tool result, and whether it is an error."""
    return result.content[0].text, bool(result.is_error)


async def main(mem, now):
    params = StdioServerParameters(
        command=mem, args=["--now", now, "mcp"], env=dict(os.environ), cwd=os.getcwd()
    )
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            recall = next(t for t in tools.tools if t.name == "recall")
            seen["recall_layer_schema"] = recall.input_schema["properties"]["layer"]
            try:
                bad = types.Request[dict, str](method="tools/call", params={"name": 5})
                await session.send_request(bad, types.CallToolResult)
                seen["bad_params"] = None
            except Exception as error:  # the SDK raises the server's JSON-RPC error
                data = getattr(error, "error", None)
                seen["bad_params"] = {
                    "code": getattr(data, "code", getattr(error, "code", None)),
                    "message": getattr(data, "message", str(error)),
                }
            for name, arguments in [
                ("session_list", {}),
                ("session_search", {"query": "deploy"}),
                ("session_resume", {}),
                ("get", {"id": "claude.deploy-window"}),
                ("get", {"id": "release-notes"}),
            ]:
                result = await session.call_tool(name, arguments)
                text, is_error = text_of(result)
                key = name if name != "get" else f"get {arguments['id']}"
                seen[key] = {"error": text} if is_error else json.loads(text)
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2]))
