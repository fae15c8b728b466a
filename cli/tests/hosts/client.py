"""A host, played by the official MCP Python SDK, connecting to a server the
way a host's configuration says (cli/tests/hosts.rs):

    client.py stdio '{"command": "...", "args": [...], "env": {...}}' [--calls JSON]
    client.py http URL [--calls JSON]

stdio starts the command with its arguments (and `env` on top of the
inherited environment, as hosts do), http connects to the URL with the
streamable-HTTP client. Either way: initialize, tools/list, then each call
of --calls ('[{"name": "links_create", "arguments": {...}}]') in order, in
the one session.

Prints one JSON line and exits 0:

    {"server": name, "tools": [names], "calls": [{"name", "is_error", "text"}]}

or {"error": "..."} and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def run(session: ClientSession, calls: list[dict]) -> dict:
    init = await session.initialize()
    listed = await session.list_tools()
    done = []
    for call in calls:
        result = await session.call_tool(call["name"], call.get("arguments", {}))
        done.append({"name": call["name"], "is_error": bool(result.is_error), "text": text_of(result)})
    return {"server": init.server_info.name, "tools": [t.name for t in listed.tools], "calls": done}


async def main() -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("target")
    parser.add_argument("--calls", default="[]")
    args = parser.parse_args()
    calls = json.loads(args.calls)
    if args.transport == "stdio":
        server = json.loads(args.target)
        env = dict(os.environ)
        env.update(server.get("env") or {})
        params = StdioServerParameters(command=server["command"], args=server.get("args", []), env=env)
        async with stdio_client(params, errlog=sys.stderr) as (read, write):
            async with ClientSession(read, write) as session:
                return await run(session, calls)
    async with streamable_http_client(args.target) as (read, write):
        async with ClientSession(read, write) as session:
            return await run(session, calls)


if __name__ == "__main__":
    try:
        summary = asyncio.run(asyncio.wait_for(main(), 60))
    except BaseException as e:  # noqa: BLE001 - the test prints what went wrong
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
    print(json.dumps(summary))
