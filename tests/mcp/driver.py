"""Drives the example MCP server of ai-tools with the official MCP Python SDK.

The server binary (tests/examples/mcp_server.rs) starts a real tonic links
service on loopback and serves its generated tools plus one native tool over
MCP. This driver talks to it the way a host would, through the SDK's stdio
client and its streamable-HTTP client, and checks what the tools return:

    python tests/mcp/driver.py --server target/debug/mcp_server

With --forwarding URL --scenario JSON it runs, against an MCP server that
tests/tests/mcp.rs started, sessions sending their own headers; that test
then checks what reached its gRPC server.

It prints one line per check and closes with "N passed, M failed"; the exit
code is 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.client import Client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

EXPECTED_TOOLS = {
    "whoami",
    "links_create",
    "links_update",
    "links_list",
    "workflow_steps_create",
    "workflow_steps_delete",
    "links_share_text",
    "feed_follow",
}
TIMEOUT = 30.0


class Warnings(logging.Handler):
    """Collects the SDK's warnings (a failed session termination is one)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, ok: bool, what: str, detail: Any = "") -> None:
        if ok:
            self.passed += 1
            print(f"ok   - {what}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL - {what}: {detail}", flush=True)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def output(result: Any) -> dict[str, Any]:
    """The JSON object a tool returned (its text content)."""
    try:
        value = json.loads(text_of(result))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


async def list_and_check_tools(session: ClientSession, checks: Checks, label: str) -> None:
    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    checks.check(names == EXPECTED_TOOLS, f"{label}: tools/list names every tool", sorted(names))
    create = next((t for t in listed.tools if t.name == "links_create"), None)
    schema = create.input_schema if create else {}
    checks.check(
        schema.get("type") == "object"
        and "destination" in schema.get("required", [])
        and "name" not in schema.get("required", []),
        f"{label}: links_create inputSchema is an object, destination required, name optional",
        schema,
    )
    # Hints from the proto: `idempotency_level` and `rpc_tool.title` / `destructive`.
    listing = next((t for t in listed.tools if t.name == "links_list"), None)
    hints = listing.annotations if listing else None
    checks.check(
        hints is not None and hints.read_only_hint is True and listing.title == "List links",
        f"{label}: links_list is read-only and titled, from its proto options",
        hints,
    )
    delete = next((t for t in listed.tools if t.name == "workflow_steps_delete"), None)
    hints = delete.annotations if delete else None
    checks.check(
        hints is not None
        and hints.read_only_hint is False
        and hints.destructive_hint is True
        and hints.idempotent_hint is True,
        f"{label}: workflow_steps_delete is destructive and idempotent, from its proto options",
        hints,
    )
    checks.check(
        create is not None and create.annotations is None,
        f"{label}: a tool whose proto says nothing has no annotations",
        create.annotations if create else None,
    )
    share = next((t for t in listed.tools if t.name == "links_share_text"), None)
    checks.check(
        share is not None and share.input_schema.get("properties", {}).get("link_id", {}).get("type") == "string",
        f"{label}: the native tool is listed with its schema",
        share,
    )


async def stdio_checks(server: str, checks: Checks) -> None:
    label = "stdio"
    params = StdioServerParameters(command=server, args=["stdio"])
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                checks.check(init.server_info.name == "links", f"{label}: initialize names the server", init.server_info)
                await list_and_check_tools(session, checks, label)

                created = await session.call_tool(
                    "links_create", {"destination": "https://example.com/spring", "name": "Spring sale"}
                )
                link = output(created).get("link", {})
                checks.check(
                    not created.is_error and link.get("id") == "link-1",
                    f"{label}: links_create returns the new link as alias link-1",
                    text_of(created),
                )
                checks.check(
                    isinstance(created.structured_content, dict)
                    and created.structured_content.get("link", {}).get("id") == "link-1",
                    f"{label}: the JSON output also arrives as structuredContent",
                    created.structured_content,
                )
                uuid = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
                checks.check(
                    uuid.match(link.get("workspace_id", "")) is not None
                    and link.get("page_theme_id") == "theme-1",
                    f"{label}: annotated ids are aliased, the unannotated workspace_id stays raw",
                    link,
                )

                updated = await session.call_tool("links_update", {"link_id": "link-1", "name": "Spring sale 2027"})
                checks.check(
                    not updated.is_error
                    and output(updated).get("link", {}).get("name") == "Spring sale 2027"
                    and output(updated).get("link", {}).get("id") == "link-1",
                    f"{label}: links_update resolves link-1 to the created link",
                    text_of(updated),
                )
                step = await session.call_tool("workflow_steps_create", {"link_id": "link-1", "action": "ACTION_EMAIL"})
                step_out = output(step).get("step", {})
                checks.check(
                    not step.is_error and step_out.get("id") == "step-1" and step_out.get("link_id") == "link-1",
                    f"{label}: workflow_steps_create takes link-1 and returns step-1",
                    text_of(step),
                )
                shared = await session.call_tool("links_share_text", {"link_id": "link-1"})
                checks.check(
                    not shared.is_error and "Spring sale 2027" in text_of(shared),
                    f"{label}: the native tool resolves the alias a generated tool gave out",
                    text_of(shared),
                )

                invented = await session.call_tool("links_update", {"link_id": "link-42", "name": "x"})
                checks.check(
                    invented.is_error and "link-42" in text_of(invented) and "link-1" in text_of(invented),
                    f"{label}: an invented alias is an isError result naming the valid ones",
                    text_of(invented),
                )
                bad_args = await session.call_tool("links_list", {"limit": 5})
                checks.check(
                    bad_args.is_error and "limit" in text_of(bad_args),
                    f"{label}: an unknown argument is an isError result naming it",
                    text_of(bad_args),
                )
                await streaming_checks(session, checks, label)
                try:
                    await session.call_tool("links_delete_everything", {})
                    checks.check(False, f"{label}: an unknown tool is a protocol error", "no error")
                except MCPError as e:
                    checks.check(e.error.code == -32602, f"{label}: an unknown tool is a protocol error (-32602)", e.error)


async def stdio_stateless_checks(server: str, checks: Checks) -> None:
    """Over stdio a 2026-07-28 client (no initialize) has the process as
    its scope: an alias from one call resolves in the next."""
    label = "stdio 2026-07-28"
    params = StdioServerParameters(command=server, args=["stdio"])
    async with Client(params, mode="auto") as client:
        checks.check(
            client.protocol_version == "2026-07-28",
            f"{label}: mcp.Client (auto mode) speaks 2026-07-28 over stdio",
            client.protocol_version,
        )
        created = await client.call_tool("links_create", {"destination": "https://stdio.example/", "name": "s"})
        updated = await client.call_tool("links_update", {"link_id": "link-1", "name": "s2"})
        checks.check(
            output(created).get("link", {}).get("id") == "link-1"
            and not updated.is_error
            and output(updated).get("link", {}).get("destination") == "https://stdio.example/",
            f"{label}: link-1 from one call resolves in the next (the process is the scope)",
            (text_of(created), text_of(updated)),
        )


async def streaming_checks(session: ClientSession, checks: Checks, label: str) -> None:
    """A server-streaming tool: one result listing every message, ids
    aliased, and a progress notification per message for a client that
    asked for progress."""
    listed = await session.list_tools()
    follow = next((t for t in listed.tools if t.name == "feed_follow"), None)
    hints = follow.annotations if follow else None
    checks.check(
        hints is not None and hints.read_only_hint is True and follow.title == "Follow the feed",
        f"{label}: feed_follow is read-only and titled, from the proto",
        hints,
    )
    progress: list[tuple[float, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, message))

    result = await session.call_tool("feed_follow", {"count": 3}, progress_callback=on_progress)
    messages = output(result).get("messages", [])
    checks.check(
        not result.is_error and [m.get("id") for m in messages] == ["event-1", "event-2", "event-3"],
        f"{label}: feed_follow collects the stream, every id aliased",
        text_of(result),
    )
    checks.check(
        [done for done, _ in progress] == [1, 2, 3] and progress[-1][1] == "3 messages received",
        f"{label}: one progress notification per streamed message, before the result",
        progress,
    )


def start_http_server(server: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    proc = subprocess.Popen(
        [server, "http", "127.0.0.1:0", "--alias-scope-header", SCOPE_HEADER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    url: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            m = re.search(r"listening on (http://\S+)", line)
            if m and not url:
                url.append(m.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(TIMEOUT) or not url:
        proc.kill()
        raise RuntimeError(f"the HTTP server did not start: {lines}")
    return proc, url[0], lines


async def http_checks(server: str, checks: Checks) -> None:
    proc, url, stderr_lines = start_http_server(server)
    try:
        await http_sessions(url, checks)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
        stdout = proc.stdout.read() if proc.stdout else ""
        checks.check(code == 0, "http: SIGTERM stops the server gracefully (exit 0)", code)
        time.sleep(0.1)
        checks.check(
            any("MCP server stopped" in line for line in stderr_lines),
            "http: the server says it stopped, on stderr",
            stderr_lines[-3:],
        )
        checks.check(stdout == "", "http: nothing on stdout", stdout[:200])


async def approve(context, params):
    """An elicitation handler whose user accepts, checking the box."""
    from mcp import types

    return types.ElicitResult(action="accept", content={"confirm": True})


async def http_sessions(url: str, checks: Checks) -> None:
    label = "http"
    warnings = Warnings()
    logging.getLogger("mcp").addHandler(warnings)
    async with streamable_http_client(url) as (read_a, write_a), streamable_http_client(url) as (read_b, write_b):
        # A's user approves what the server asks to confirm (elicitation):
        # the destructive call below is asked about over HTTP, then runs.
        async with ClientSession(read_a, write_a, elicitation_callback=approve) as a, ClientSession(
            read_b, write_b
        ) as b:
            init_a, init_b = await asyncio.gather(a.initialize(), b.initialize())
            checks.check(
                init_a.server_info.name == "links" and init_b.server_info.name == "links",
                f"{label}: two sessions initialize at once",
                (init_a.server_info, init_b.server_info),
            )
            await list_and_check_tools(a, checks, f"{label} A")

            created_a = await a.call_tool("links_create", {"destination": "https://a.example/", "name": "A's link"})
            checks.check(
                not created_a.is_error and output(created_a).get("link", {}).get("id") == "link-1",
                f"{label}: session A creates link-1",
                text_of(created_a),
            )
            stolen = await b.call_tool("links_update", {"link_id": "link-1", "name": "hijacked"})
            checks.check(
                stolen.is_error and "link-1" in text_of(stolen),
                f"{label}: session B cannot resolve session A's link-1 (isError)",
                text_of(stolen),
            )

            # Both sessions work concurrently; each link-1 is its own link.
            created_b, step_a = await asyncio.gather(
                b.call_tool("links_create", {"destination": "https://b.example/", "name": "B's link"}),
                a.call_tool("workflow_steps_create", {"link_id": "link-1", "action": "ACTION_WEBHOOK"}),
            )
            checks.check(
                not created_b.is_error and output(created_b).get("link", {}).get("id") == "link-1",
                f"{label}: session B's first link is its own link-1",
                text_of(created_b),
            )
            checks.check(
                not step_a.is_error and output(step_a).get("step", {}).get("link_id") == "link-1",
                f"{label}: session A passes its link-1 to workflow_steps_create",
                text_of(step_a),
            )
            renamed_a, renamed_b = await asyncio.gather(
                a.call_tool("links_update", {"link_id": "link-1", "name": "A renamed"}),
                b.call_tool("links_update", {"link_id": "link-1", "name": "B renamed"}),
            )
            link_a = output(renamed_a).get("link", {})
            link_b = output(renamed_b).get("link", {})
            checks.check(
                link_a.get("destination") == "https://a.example/" and link_a.get("name") == "A renamed",
                f"{label}: A's link-1 is A's link",
                link_a,
            )
            checks.check(
                link_b.get("destination") == "https://b.example/" and link_b.get("name") == "B renamed",
                f"{label}: B's link-1 is B's link",
                link_b,
            )
            invented = await a.call_tool("workflow_steps_delete", {"step_id": "step-9"})
            checks.check(
                invented.is_error and "step-1" in text_of(invented),
                f"{label}: an invented step alias is an isError result naming step-1",
                text_of(invented),
            )

    checks.check(
        not any("termination" in m for m in warnings.messages),
        f"{label}: both sessions end cleanly (DELETE accepted)",
        warnings.messages,
    )

    # Forwarded headers: each session's own `x-user` reaches its own calls,
    # and only those, with calls of both sessions interleaved.
    # httpx2 is the SDK's own HTTP client; the SDK's timeouts: 30 s, 300 s to read a stream.
    timeout = httpx2.Timeout(30, read=300)
    async with httpx2.AsyncClient(headers={"x-user": "alice"}, timeout=timeout) as http_a, httpx2.AsyncClient(
        headers={"x-user": "bob"}, timeout=timeout
    ) as http_b:
        async with streamable_http_client(url, http_client=http_a) as (read_a, write_a), streamable_http_client(
            url, http_client=http_b
        ) as (read_b, write_b):
            async with ClientSession(read_a, write_a) as a, ClientSession(read_b, write_b) as b:
                await asyncio.gather(a.initialize(), b.initialize())
                calls = [a.call_tool("whoami", {}) if i % 2 == 0 else b.call_tool("whoami", {}) for i in range(40)]
                answers = await asyncio.gather(*calls)
                seen = [text_of(r) for r in answers]
                expected = ["alice" if i % 2 == 0 else "bob" for i in range(40)]
                checks.check(
                    seen == expected,
                    f"{label}: 40 interleaved calls of two sessions each see only their own forwarded x-user",
                    [s for s, e in zip(seen, expected) if s != e][:5],
                )
    async with streamable_http_client(url) as (read_c, write_c):
        async with ClientSession(read_c, write_c) as c:
            await c.initialize()
            anonymous = await c.call_tool("whoami", {})
            checks.check(
                text_of(anonymous) == "nobody",
                f"{label}: a request without the header forwards nothing",
                text_of(anonymous),
            )

    await stateless_checks(url, checks)


SCOPE_HEADER = "x-principal"


def mcp_error_in(error: BaseException) -> MCPError | None:
    """The MCPError in `error`, or in the exception groups around it."""
    if isinstance(error, MCPError):
        return error
    for inner in getattr(error, "exceptions", ()):
        found = mcp_error_in(inner)
        if found is not None:
            return found
    return None


def stateless_client(url: str, http: httpx2.AsyncClient | None, mode: str = "2026-07-28") -> Client:
    transport = streamable_http_client(url, http_client=http) if http is not None else url
    return Client(transport, mode=mode)


async def stateless_checks(url: str, checks: Checks) -> None:
    """Protocol 2026-07-28 has no sessions: each request carries who is
    calling (here the header the server was told a trusted proxy sets), and
    that caller's aliases live across requests and clients, never shared
    with another caller or with a handshake-era session."""
    label = "stateless"
    timeout = httpx2.Timeout(30, read=300)

    # The SDK's default client probes `server/discover`, sees 2026-07-28 and
    # goes stateless; without the caller's identity it is refused, clearly.
    try:
        async with Client(url) as client:
            await client.list_tools()
            checks.check(False, f"{label}: a request without the caller's identity is refused", "it was served")
    except Exception as e:  # the SDK raises the refusal inside its task groups
        refusal = mcp_error_in(e)
        message = refusal.error.message if refusal else repr(e)
        checks.check(
            SCOPE_HEADER in message and "initialize" in message,
            f"{label}: mcp.Client (auto mode) without the scope header is refused, naming it",
            message,
        )

    async with httpx2.AsyncClient(headers={SCOPE_HEADER: "alice"}, timeout=timeout) as alice_http, httpx2.AsyncClient(
        headers={SCOPE_HEADER: "bob"}, timeout=timeout
    ) as bob_http:
        async with stateless_client(url, alice_http, mode="auto") as alice:
            checks.check(
                alice.protocol_version == "2026-07-28",
                f"{label}: mcp.Client (auto mode) with the scope header speaks 2026-07-28",
                alice.protocol_version,
            )
            first = await alice.call_tool("links_create", {"destination": "https://alice.example/1", "name": "A1"})
            second = await alice.call_tool("links_create", {"destination": "https://alice.example/2", "name": "A2"})
            checks.check(
                [output(first).get("link", {}).get("id"), output(second).get("link", {}).get("id")] == ["link-1", "link-2"],
                f"{label}: alice's creates are link-1 and link-2",
                (text_of(first), text_of(second)),
            )
        # A new client, and with it new connections: the aliases are the caller's, not a connection's.
        async with stateless_client(url, alice_http) as alice_again:
            renamed = await alice_again.call_tool("links_update", {"link_id": "link-2", "name": "A2 renamed"})
            link = output(renamed).get("link", {})
            checks.check(
                not renamed.is_error and link.get("destination") == "https://alice.example/2",
                f"{label}: a later client of alice resolves her link-2",
                text_of(renamed),
            )
        async with stateless_client(url, bob_http) as bob:
            created = await bob.call_tool("links_create", {"destination": "https://bob.example/", "name": "B1"})
            checks.check(
                output(created).get("link", {}).get("id") == "link-1",
                f"{label}: bob's first link is his own link-1",
                text_of(created),
            )
            reached = await bob.call_tool("links_update", {"link_id": "link-2", "name": "stolen"})
            checks.check(
                reached.is_error and "link-2" in text_of(reached),
                f"{label}: bob cannot resolve alice's link-2 (isError)",
                text_of(reached),
            )
            own = await bob.call_tool("links_update", {"link_id": "link-1", "name": "B1 renamed"})
            checks.check(
                output(own).get("link", {}).get("destination") == "https://bob.example/",
                f"{label}: bob's link-1 is bob's link",
                text_of(own),
            )
        # A handshake-era client keeps a session, and the session is its scope.
        async with stateless_client(url, alice_http, mode="legacy") as legacy:
            checks.check(
                legacy.protocol_version <= "2025-11-25",
                f"{label}: mcp.Client (legacy mode) gets a session",
                legacy.protocol_version,
            )
            fresh = await legacy.call_tool("links_update", {"link_id": "link-2", "name": "x"})
            checks.check(
                fresh.is_error,
                f"{label}: a session has its own aliases, not those of the caller's stateless requests",
                text_of(fresh),
            )


async def forwarding_checks(url: str, scenario: dict[str, Any], checks: Checks) -> None:
    """Sessions that each send their own headers with every request, calling
    the generated links_create concurrently and interleaved, each call named
    after its session. What reached the gRPC server is checked by the caller
    (tests/tests/mcp.rs), which started it and gave this scenario."""
    label = "forwarding"
    timeout = httpx2.Timeout(30, read=300)
    calls = int(scenario["calls"])
    names = list(scenario["sessions"])
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[str, ClientSession] = {}
        for name in names:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=scenario["sessions"][name], timeout=timeout)
            )
            read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
            sessions[name] = await stack.enter_async_context(ClientSession(read, write))
        await asyncio.gather(*(s.initialize() for s in sessions.values()))
        order = [(names[i % len(names)], i // len(names)) for i in range(calls * len(names))]
        results = await asyncio.gather(
            *(
                sessions[name].call_tool(
                    "links_create", {"destination": f"https://{name}.example/{n}", "name": f"{name}-{n}"}
                )
                for name, n in order
            )
        )
        failed = [text_of(r) for r in results if r.is_error]
        checks.check(
            not failed,
            f"{label}: {len(order)} interleaved links_create calls of {len(names)} sessions succeed",
            failed[:3],
        )

    # A `-bin` header that is not base64: that call is an error naming the
    # header (not its value), and nothing is sent.
    bad = scenario["undecodable"]
    async with httpx2.AsyncClient(headers=bad, timeout=timeout) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                refused = await session.call_tool(
                    "links_create", {"destination": "https://undecodable.example/", "name": "undecodable"}
                )
                text = text_of(refused)
                checks.check(
                    refused.is_error
                    and all(k in text for k in bad if k.endswith("-bin"))
                    and "base64" in text
                    and not any(v in text for k, v in bad.items() if k.endswith("-bin")),
                    f"{label}: an undecodable -bin header is an isError result naming the header, not its value",
                    text,
                )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", help="path to the mcp_server binary: run the stdio and HTTP checks")
    parser.add_argument("--forwarding", metavar="URL", help="run the header forwarding scenario against URL")
    parser.add_argument("--scenario", help="the forwarding scenario, JSON: {sessions: {name: headers}, calls, undecodable}")
    args = parser.parse_args()
    checks = Checks()
    runs: list[tuple[str, Any]] = []
    if args.server:
        runs += [
            ("stdio", lambda: stdio_checks(args.server, checks)),
            ("stdio 2026-07-28", lambda: stdio_stateless_checks(args.server, checks)),
            ("http", lambda: http_checks(args.server, checks)),
        ]
    if args.forwarding:
        scenario = json.loads(args.scenario or "{}")
        runs.append(("forwarding", lambda: forwarding_checks(args.forwarding, scenario, checks)))
    if not runs:
        parser.error("give --server, --forwarding, or both")
    for name, run in runs:
        try:
            await asyncio.wait_for(run(), TIMEOUT * 2)
        except Exception as e:  # a crash of one transport's checks is one failure, reported
            checks.check(False, f"{name}: the checks ran to the end", repr(e))
    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
