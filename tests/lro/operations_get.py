"""A client without tasks following long-running operations.

Run by tests/tests/lro.rs with the official MCP Python SDK (`mcp`), which
does not declare the tasks extension (`io.modelcontextprotocol/tasks`):

    python operations_get.py URL BARE_URL

URL serves `reports_build` (whose operation names an overlay gives the alias
prefix `operation`) over a backend with `google.longrunning.Operations`;
BARE_URL the same tool over a backend without that service. A call of the
tool answers with the operation itself, as JSON; `operations_get` follows it
until its result is the finished report.

Prints one line per check (`ok   - ...` or `FAIL - ...`) and then
`N passed, M failed`; exits 1 when a check failed.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, ok: bool, what: str, detail: Any = "") -> None:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        suffix = f": {detail}" if detail != "" else ""
        print(f"{'ok  ' if ok else 'FAIL'} - {what}{suffix}", flush=True)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def output(result: Any) -> dict[str, Any]:
    try:
        value = json.loads(text_of(result))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


async def follow(session: ClientSession, name: str) -> tuple[list[Any], Any]:
    """Polls `operations_get` until the operation is done: the running answers, then the last."""
    running = []
    deadline = time.monotonic() + 60
    while True:
        result = await session.call_tool("operations_get", {"name": name})
        value = output(result)
        if not result.is_error and value.get("done") is False:
            running.append(value)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} still running after 60 s")
            await asyncio.sleep(0.2)
            continue
        return running, result


async def session(url: str, stack: Any) -> ClientSession:
    http = await stack.enter_async_context(httpx2.AsyncClient(headers={"x-tenant": "acme"}, timeout=httpx2.Timeout(30, read=120)))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    client = await stack.enter_async_context(ClientSession(read, write))
    await client.initialize()
    return client


async def main(url: str, bare_url: str) -> int:
    checks = Checks()
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        a = await session(url, stack)
        b = await session(url, stack)
        bare = await session(bare_url, stack)

        tools = {tool.name: tool for tool in (await a.list_tools()).tools}
        get = tools.get("operations_get")
        checks.check(
            "reports_build" in tools and get is not None and get.input_schema.get("required") == ["name"],
            "operations_get is listed beside the long-running tool, taking the operation's name",
            get.input_schema if get else sorted(tools),
        )

        started = await a.call_tool("reports_build", {"title": "Q4", "work_ms": 1500})
        operation = output(started)
        checks.check(
            not started.is_error
            and operation.get("name") == "operation-1"
            and not operation.get("done", False)
            and "taskId" not in text_of(started)
            and not UUID.search(text_of(started)),
            "without tasks, a call answers with the operation, its name aliased",
            text_of(started),
        )

        running, done = await follow(a, "operation-1")
        report = output(done)
        checks.check(
            len(running) >= 1 and all(r.get("name") == "operation-1" for r in running),
            "operations_get says the operation is still running while it runs",
            running[:2],
        )
        checks.check(
            any("percent" in json.dumps(r.get("metadata", {})) for r in running),
            "and shows its progress (the metadata, unpacked)",
            running[-1] if running else None,
        )
        checks.check(
            not done.is_error
            and re.fullmatch(r"report-\d+", report.get("id", "")) is not None
            and report.get("title") == "Q4"
            and report.get("rows") == "9007199254740993"
            and "@type" not in report
            and not UUID.search(text_of(done))
            and done.structured_content == report,
            "once done, operations_get gives the report, unpacked and aliased",
            text_of(done),
        )

        failing = output(await a.call_tool("reports_build", {"title": "empty", "work_ms": 200, "fail": True}))
        _, failed = await follow(a, failing.get("name", ""))
        checks.check(
            failed.is_error
            and "FAILED_PRECONDITION" in text_of(failed)
            and "the dataset of empty has no rows" in text_of(failed),
            "a failed operation is an error result with the status",
            text_of(failed),
        )

        invented = await a.call_tool("operations_get", {"name": "operation-99"})
        checks.check(
            invented.is_error and "operation-1" in text_of(invented) and "operation-99" in text_of(invented),
            "an alias the conversation was never given is refused, naming the ones it was",
            text_of(invented),
        )

        unknown = await a.call_tool("operations_get", {"name": "no-such-operation"})
        checks.check(
            unknown.is_error and "does not know the operation" in text_of(unknown) and "NOT_FOUND" in text_of(unknown),
            "an operation the service does not know is a clear error",
            text_of(unknown),
        )

        stolen = await b.call_tool("operations_get", {"name": "operation-1"})
        checks.check(
            stolen.is_error and "not an operation this conversation was given" in text_of(stolen),
            "another session cannot follow this session's operation by its alias",
            text_of(stolen),
        )

        bare_started = output(await bare.call_tool("reports_build", {"title": "bare", "work_ms": 100}))
        bare_get = await bare.call_tool("operations_get", {"name": bare_started.get("name", "")})
        checks.check(
            bare_get.is_error and "does not implement google.longrunning.Operations" in text_of(bare_get),
            "a backend without the Operations service is a clear error",
            text_of(bare_get),
        )

        missing = await a.call_tool("operations_get", {})
        checks.check(
            missing.is_error and "`name`" in text_of(missing),
            "operations_get without a name says what it needs",
            text_of(missing),
        )

    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
