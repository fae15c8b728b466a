"""Drives `ai-tools mcp --http` in the stateless protocol (2026-07-28) with
the official Python MCP SDK's `Client` for the consent tests: the server
returns the consent question with a signed state instead of sending a
request, the SDK puts it to its elicitation handler and calls again.
Callers are told apart by the `x-user` header (the gateway runs with
`--alias-scope-header x-user`).

Usage: stateless.py URL
Creates a link and three workflow steps as alice, then:
- deletes step 1 through the SDK's own loop, alice's handler accepting;
- asks to delete step 2 by hand (the first leg: the question and a state);
- sends that state back, accepted, for step 3 (changed arguments), as a
  made-up string, and as bob (another caller);
- sends it back for step 2 as asked (it counts), then again (a replay);
- deletes step 3 with a handler that declines.
Prints one JSON object of what each call returned.
"""

import asyncio
import json
import sys

import httpx2
from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []) or [])


def shown(result):
    if isinstance(result, types.InputRequiredResult):
        requests = result.input_requests or {}
        return {
            "input_required": True,
            "keys": sorted(requests),
            "message": next(iter(requests.values())).params.message if requests else None,
            "has_state": bool(result.request_state),
        }
    return {"is_error": bool(result.is_error), "text": text_of(result)}


async def main() -> int:
    url = sys.argv[1]
    asked = []

    async def accept(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def decline(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    accepted = {"consent": {"action": "accept", "content": {"confirm": True}}}
    out = {}
    timeout = httpx2.Timeout(30, read=300)

    def client(http, handler):
        return Client(streamable_http_client(url, http_client=http), mode="2026-07-28", elicitation_callback=handler)

    async with httpx2.AsyncClient(headers={"x-user": "alice"}, timeout=timeout) as alice_http, httpx2.AsyncClient(
        headers={"x-user": "bob"}, timeout=timeout
    ) as bob_http:
        async with client(alice_http, accept) as alice:
            out["protocol"] = alice.protocol_version
            link = await alice.call_tool("links_create", {"destination": "https://example.com/stateless"})
            link_id = json.loads(text_of(link))["link"]["id"]
            steps = []
            for _ in range(3):
                step = await alice.call_tool("workflow_steps_create", {"link_id": link_id, "action": "ACTION_EMAIL"})
                steps.append(json.loads(text_of(step))["step"]["id"])
            out["steps"] = steps
            out["sdk_loop"] = shown(await alice.call_tool("workflow_steps_delete", {"step_id": steps[0]}))
            session = alice.session
            first = await session.call_tool(
                "workflow_steps_delete", {"step_id": steps[1]}, allow_input_required=True
            )
            out["first_leg"] = shown(first)
            state = first.request_state
            out["changed_arguments"] = shown(
                await session.call_tool(
                    "workflow_steps_delete",
                    {"step_id": steps[2]},
                    request_state=state,
                    input_responses=accepted,
                    allow_input_required=True,
                )
            )
            out["made_up_state"] = shown(
                await session.call_tool(
                    "workflow_steps_delete",
                    {"step_id": steps[1]},
                    request_state="made-up",
                    input_responses=accepted,
                    allow_input_required=True,
                )
            )
            async with client(bob_http, accept) as bob:
                out["another_caller"] = shown(
                    await bob.session.call_tool(
                        "workflow_steps_delete",
                        {"step_id": steps[1]},
                        request_state=state,
                        input_responses=accepted,
                        allow_input_required=True,
                    )
                )
            out["redeemed"] = shown(
                await session.call_tool(
                    "workflow_steps_delete",
                    {"step_id": steps[1]},
                    request_state=state,
                    input_responses=accepted,
                    allow_input_required=True,
                )
            )
            out["replayed"] = shown(
                await session.call_tool(
                    "workflow_steps_delete",
                    {"step_id": steps[1]},
                    request_state=state,
                    input_responses=accepted,
                    allow_input_required=True,
                )
            )
        async with client(alice_http, decline) as alice:
            out["declined"] = shown(await alice.call_tool("workflow_steps_delete", {"step_id": steps[2]}))
    out["asked"] = asked
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
