"""Drives the `ai-tools` gateway with the official Python MCP SDK over stdio,
end to end: tools listed, a call made, an id aliased, the alias resolved in
a second call, an invented alias refused.

Usage: driver.py LIST_TOOL LIST_ARGS_JSON ID_PATH GET_TOOL ID_FIELD -- GATEWAY ARG...
`ID_PATH` is where the aliased id sits in the first result (dot-separated,
numbers index lists); `GET_TOOL` takes it back in `ID_FIELD`.
Prints one line per check and `N passed, M failed`; exits non-zero on a
failure.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def at(value, path):
    for step in path.split("."):
        value = value[int(step)] if isinstance(value, list) else value.get(step)
    return value


async def main() -> int:
    split = sys.argv.index("--")
    list_tool, list_args, id_path, get_tool, id_field = sys.argv[1:split]
    gateway, *gateway_args = sys.argv[split + 1 :]
    results = []

    def check(ok, what, detail=""):
        results.append(ok)
        print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else f": {detail}"), flush=True)

    params = StdioServerParameters(command=gateway, args=gateway_args)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                names = {t.name for t in listed.tools}
                check(list_tool in names and get_tool in names, "tools/list has both tools", sorted(names))
                first = await session.call_tool(list_tool, json.loads(list_args))
                out = json.loads(text_of(first)) if not first.is_error else {}
                alias = at(out, id_path) if out else None
                check(
                    isinstance(alias, str) and alias.endswith("-1") and len(alias) < 20,
                    f"{list_tool} answers with an aliased id",
                    text_of(first),
                )
                second = await session.call_tool(get_tool, {id_field: alias})
                check(not second.is_error, f"{get_tool} resolves {alias} back to the real id", text_of(second))
                prefix = alias.rsplit("-", 1)[0] if isinstance(alias, str) else "x"
                invented = await session.call_tool(get_tool, {id_field: f"{prefix}-99"})
                check(
                    invented.is_error and f"{prefix}-99" in text_of(invented),
                    "an invented alias is refused, naming it",
                    text_of(invented),
                )
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
