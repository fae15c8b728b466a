"""The official Python MCP SDK's streamable-HTTP client calling a gateway
that drains, for cli/tests/admin.rs.

Usage: client.py URL
Opens a session, starts `links_create` named `hold:c1` (the test's backend
holds it) and prints `started`. Once a line comes on stdin (the test has
sent SIGTERM to the gateway), calls `links_create` named `c2`, then waits
for the first call's answer. Prints one JSON object: each call's result
(`is_error`, `text`) or the error the SDK raised (`error`).
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def outcome(call):
    try:
        result = await asyncio.wait_for(call, timeout=20)
        return {"is_error": bool(result.is_error), "text": text_of(result)}
    except Exception as e:  # what the SDK raised, by type and text
        return {"error": f"{type(e).__name__}: {e}"}


async def main() -> int:
    url = sys.argv[1]
    out = {}
    try:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                # As a host does first; the SDK also checks each result
                # against the listed output schemas, and lists the tools for
                # them itself otherwise (after the held answer, when the
                # gateway has gone).
                await session.list_tools()
                held = asyncio.create_task(
                    outcome(
                        session.call_tool(
                            "links_create",
                            {"destination": "https://example.com/held", "name": "hold:c1"},
                        )
                    )
                )
                print("started", flush=True)
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
                out["during_drain"] = await outcome(
                    session.call_tool(
                        "links_create", {"destination": "https://example.com/late", "name": "c2"}
                    )
                )
                out["in_flight"] = await held
                print(json.dumps(out), flush=True)
    except BaseException as e:
        # Closing the session (its DELETE) on a gateway that has stopped
        # fails, after the answers were printed; anything before is the
        # test's to see.
        if "in_flight" not in out:
            raise
        print(f"closing: {type(e).__name__}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
