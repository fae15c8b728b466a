"""Drives `ai-tools mcp --tool-search` with the official Python MCP SDK over
stdio: the first list holds only the meta-tools, `search_tools` finds a
tool by what it does (with a one-line summary), `list_toolsets` gives
every toolset with its summary, `call_tool` calls it as a direct call
would (the same result for the same bad arguments), and `enable_toolset` sends
`notifications/tools/list_changed`, after which the list holds that
toolset's tools, callable directly.

Usage: driver.py -- GATEWAY ARG...
Prints one line per check and `N passed, M failed`; exits non-zero on a
failure.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

META = {"search_tools", "list_toolsets", "enable_toolset", "call_tool"}
LINKS = "links.v1.LinksService"


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main() -> int:
    split = sys.argv.index("--")
    gateway, *gateway_args = sys.argv[split + 1 :]
    results = []

    def check(ok, what, detail=""):
        results.append(ok)
        print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else f": {detail}"), flush=True)

    changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=gateway, args=gateway_args)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                tools_capability = init.capabilities.tools
                check(
                    tools_capability is not None and tools_capability.list_changed is True,
                    "the server says its tool list changes",
                    init.capabilities,
                )

                first = {t.name for t in (await session.list_tools()).tools}
                check(first == META, "the first list holds only the meta-tools", sorted(first))

                found = await session.call_tool(
                    "search_tools", {"query": "change where a short link sends people"}
                )
                out = json.loads(text_of(found)) if not found.is_error else {}
                tools = out.get("tools", [])
                names = [t["name"] for t in tools]
                check("links_update" in names, "search_tools finds links_update by what it does", text_of(found))
                update = next((t for t in tools if t["name"] == "links_update"), {})
                check(
                    update.get("toolset") == LINKS
                    and update.get("inputSchema", {}).get("type") == "object"
                    and "link_id" in update.get("inputSchema", {}).get("properties", {}),
                    "a found tool comes with its toolset and its whole inputSchema",
                    update,
                )
                summary = update.get("summary")
                check(
                    isinstance(summary, str)
                    and 0 < len(summary) <= 200
                    and "\n" not in summary
                    and summary.split()[0] in update.get("description", ""),
                    "a found tool carries a one-line summary of its description",
                    update,
                )
                browsed = await session.call_tool("list_toolsets", {})
                listed = json.loads(text_of(browsed)) if not browsed.is_error else {}
                by_name = {t.get("name"): t for t in listed.get("toolsets", [])}
                check(
                    LINKS in by_name
                    and by_name[LINKS].get("tools") == 3
                    and isinstance(by_name[LINKS].get("summary"), str)
                    and by_name[LINKS]["summary"],
                    "list_toolsets gives each toolset with a summary and its number of tools",
                    text_of(browsed),
                )
                nothing = await session.call_tool("search_tools", {"query": ""})
                check(
                    nothing.is_error and "`query` is empty" in text_of(nothing),
                    "an empty query is refused, saying what to send",
                    text_of(nothing),
                )

                created = await session.call_tool(
                    "call_tool",
                    {"name": "links_create", "arguments": {"destination": "https://example.com/search"}},
                )
                body = json.loads(text_of(created)) if not created.is_error else {}
                alias = body.get("link", {}).get("id")
                check(
                    isinstance(alias, str) and alias.startswith("link-"),
                    "call_tool runs a found tool, its id aliased",
                    text_of(created),
                )

                bad = {"destination": 5}
                through = await session.call_tool("call_tool", {"name": "links_create", "arguments": bad})
                direct = await session.call_tool("links_create", bad)
                check(
                    through.is_error and direct.is_error and text_of(through) == text_of(direct),
                    "call_tool refuses bad arguments exactly as a direct call does",
                    (text_of(through), text_of(direct)),
                )
                unknown = await session.call_tool("call_tool", {"name": "links_erase", "arguments": {}})
                check(
                    unknown.is_error and "links_erase" in text_of(unknown) and "search_tools" in text_of(unknown),
                    "call_tool of a tool that is not there names it and points to the search",
                    text_of(unknown),
                )

                wrong = await session.call_tool("enable_toolset", {"toolset": "LinksService"})
                check(
                    wrong.is_error and LINKS in text_of(wrong),
                    "a toolset named by its short name is refused, naming the full one",
                    text_of(wrong),
                )
                check(not changed.is_set(), "no list_changed before a toolset is enabled")

                enabled = await session.call_tool("enable_toolset", {"toolset": LINKS})
                check(not enabled.is_error, "enable_toolset enables a toolset", text_of(enabled))
                try:
                    await asyncio.wait_for(changed.wait(), timeout=10)
                    heard = True
                except asyncio.TimeoutError:
                    heard = False
                check(heard, "enable_toolset sends notifications/tools/list_changed")

                now = {t.name for t in (await session.list_tools()).tools}
                check(
                    now == META | {"links_create", "links_update", "links_list"},
                    "the list now holds the toolset's tools, and no other",
                    sorted(now),
                )
                moved = await session.call_tool(
                    "links_update", {"link_id": alias, "destination": "https://example.com/moved"}
                )
                check(not moved.is_error, "an enabled tool is called directly, the alias resolved", text_of(moved))
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
