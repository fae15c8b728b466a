"""Drives `ai-tools mcp` over stdio with the official Python MCP SDK for the
consent tests: creates a link and two workflow steps, then deletes the
first step (a destructive tool), asks to delete the second with a
model-set `confirm: true` argument, and updates the link.

Usage: driver.py MODE [--call-tool] -- GATEWAY ARG...
MODE is how the client answers elicitation: `none` (it declares no
elicitation capability), `accept`, `decline` or `cancel`. With
`--call-tool` the calls go through tool search's `call_tool`.
Prints one JSON object: each call's `is_error` and text, and each
elicitation request the server sent (message and requested schema).
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main() -> int:
    split = sys.argv.index("--")
    mode, *options = sys.argv[1:split]
    via_call_tool = "--call-tool" in options
    gateway, *gateway_args = sys.argv[split + 1 :]
    asked = []

    async def answer(context, params):
        asked.append(
            {
                "message": params.message,
                "schema": params.requested_schema,
            }
        )
        if mode == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action=mode)

    callback = None if mode == "none" else answer
    params = StdioServerParameters(command=gateway, args=gateway_args)
    out = {}
    with open(os.environ.get("CONSENT_GATEWAY_LOG", os.devnull), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()

                async def call(name, arguments):
                    if via_call_tool:
                        result = await session.call_tool(
                            "call_tool", {"name": name, "arguments": arguments}
                        )
                    else:
                        result = await session.call_tool(name, arguments)
                    return {"is_error": bool(result.is_error), "text": text_of(result)}

                link = await call("links_create", {"destination": "https://example.com/consent"})
                link_id = json.loads(link["text"])["link"]["id"]
                steps = []
                for _ in range(2):
                    step = await call("workflow_steps_create", {"link_id": link_id, "action": "ACTION_EMAIL"})
                    steps.append(json.loads(step["text"])["step"]["id"])
                out["steps"] = steps
                out["delete"] = await call("workflow_steps_delete", {"step_id": steps[0]})
                out["delete_confirm"] = await call(
                    "workflow_steps_delete", {"step_id": steps[1], "confirm": True}
                )
                out["update"] = await call(
                    "links_update", {"link_id": link_id, "destination": "https://example.com/changed"}
                )
    out["asked"] = asked
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
