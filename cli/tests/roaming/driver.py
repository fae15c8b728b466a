"""Drives one MCP session through a round-robin proxy in front of two
`ai-tools mcp --http --redis … --tool-search` gateways, with the official
MCP Python SDK (`ClientSession`, protocol 2025-11-25, `Mcp-Session-Id`).

Its HTTP client keeps no connection alive, so each request opens a new
connection and the proxy sends it to the gateway whose turn it is: every
step is done twice in a row, so that each is seen by both gateways.

    driver.py URL

Prints `SESSION <id>` once the session is started, `PAUSE` when the test
may restart the gateways (it then waits for a line on stdin), one line per
check, and `N passed, M failed`; exits non-zero on a failure.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

META = {"search_tools", "list_toolsets", "enable_toolset", "call_tool"}
LINKS = "links.v1.LinksService"
LINKS_TOOLS = {"links_create", "links_update", "links_list"}


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def body_of(result):
    try:
        return json.loads(text_of(result))
    except ValueError:
        return {}


async def main() -> int:
    url = sys.argv[1]
    results = []

    def check(ok, what, detail=""):
        results.append(bool(ok))
        print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else f": {detail}"), flush=True)

    session_ids = set()

    async def seen(response):
        sid = response.headers.get("mcp-session-id")
        if sid:
            session_ids.add(sid)

    # No connection kept alive: one request, one connection, one turn of
    # the proxy's round robin.
    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30.0, read=300.0),
        limits=httpx2.Limits(max_keepalive_connections=0),
        event_hooks={"response": [seen]},
    )
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check(
                    init.protocol_version == "2025-11-25",
                    "the session speaks the handshake era (2025-11-25)",
                    init.protocol_version,
                )
                check(len(session_ids) == 1, "the server gave one session id", session_ids)
                print(f"SESSION {next(iter(session_ids), '')}", flush=True)

                for turn in (1, 2):
                    listed = {t.name for t in (await session.list_tools()).tools}
                    check(listed == META, f"list {turn}: only the meta-tools before a toolset is enabled", sorted(listed))

                created = await session.call_tool(
                    "call_tool",
                    {"name": "links_create", "arguments": {"destination": "https://roam.example/1", "name": "one"}},
                )
                alias = body_of(created).get("link", {}).get("id")
                check(alias == "link-1", "a link is created through call_tool, its id aliased link-1", text_of(created))

                for turn in (1, 2):
                    updated = await session.call_tool(
                        "call_tool",
                        {"name": "links_update", "arguments": {"link_id": alias, "name": f"renamed {turn}"}},
                    )
                    check(
                        not updated.is_error
                        and body_of(updated).get("link", {}).get("destination") == "https://roam.example/1",
                        f"resolve {turn}: link-1 resolves to the link it was given for",
                        text_of(updated),
                    )

                enabled = await session.call_tool("enable_toolset", {"toolset": LINKS})
                check(not enabled.is_error, "enable_toolset enables the links toolset", text_of(enabled))
                for turn in (1, 2):
                    listed = {t.name for t in (await session.list_tools()).tools}
                    check(
                        listed == META | LINKS_TOOLS,
                        f"list {turn} after enabling: the toolset's tools are listed",
                        sorted(listed),
                    )

                # The test restarts both gateways, one after the other:
                # neither process that served the session so far is left.
                print("PAUSE", flush=True)
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)

                for turn in (1, 2):
                    listed = {t.name for t in (await session.list_tools()).tools}
                    check(
                        listed == META | LINKS_TOOLS,
                        f"list {turn} after the restarts: the toolset is still enabled",
                        sorted(listed),
                    )
                for turn in (1, 2):
                    moved = await session.call_tool(
                        "links_update",
                        {"link_id": alias, "destination": f"https://roam.example/moved-{turn}"},
                    )
                    check(
                        not moved.is_error
                        and body_of(moved).get("link", {}).get("destination") == f"https://roam.example/moved-{turn}",
                        f"call {turn} after the restarts: link-1 still resolves, called directly",
                        text_of(moved),
                    )
                second = await session.call_tool(
                    "links_create", {"destination": "https://roam.example/2", "name": "two"}
                )
                check(
                    body_of(second).get("link", {}).get("id") == "link-2",
                    "a new link after the restarts is link-2: the numbering goes on",
                    text_of(second),
                )
                check(len(session_ids) == 1, "one session id from start to end", session_ids)
        # Leaving the client sent DELETE, ending the session.
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
