"""An MCP host's OAuth client, played by the official MCP Python SDK: connects
to an MCP server that is an OAuth 2.1 resource server and goes through the
discovery the MCP authorization spec describes, with the SDK's own
`OAuthClientProvider`:

    401 with WWW-Authenticate: Bearer resource_metadata="..."
    -> the protected resource metadata (RFC 9728)
    -> the authorization server's metadata (RFC 8414 / OpenID discovery)
    -> the authorization-code grant with PKCE (S256) and `resource` (RFC 8707)
    -> the token
    -> tools/list and tools/call, with the token

Usage:
    mcp_oauth_client.py --url http://127.0.0.1:PORT/mcp
        [--calls '[{"name": "links_list", "arguments": {}}]']

The user agent is played here: the redirect handler fetches the authorization
URL without following the redirect (the authorization server approves at
once) and hands the code and state in its Location to the callback handler.

The client is pre-registered: its registration (client_id
`ai-tools-oauth-test`, a public client, token_endpoint_auth_method `none`) is
seeded in the SDK's token storage (`TokenStorage.get_client_info`), as a
host does for an authorization server without dynamic client registration
(RFC 7591); oauth2-mock-server has none.

Prints one JSON line, a summary for tests/tests/oauth.rs to assert on:

    {"tools": [names listed], "calls": [{"name", "is_error", "text", "structured"}],
     "requests": ["POST http://.../mcp -> 401", ...every HTTP request, in order,
                  the user agent's to the authorization endpoint included],
     "authorize": {the authorization request's query parameters},
     "token": {"scope", "expires_in", "claims": the access token's claims, unverified}}

and exits 0; on any failure it prints {"error": "..."} and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import traceback
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

CLIENT_ID = "ai-tools-oauth-test"
# Never listened on: the code is read from the redirect's Location.
REDIRECT_URI = "http://127.0.0.1:9/callback"
TIMEOUT = 30.0


class SeededStorage:
    """The SDK's TokenStorage, in memory, holding a pre-registered client."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = OAuthClientInformationFull(
            client_id=CLIENT_ID,
            redirect_uris=[REDIRECT_URI],
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            client_name="ai-tools OAuth test",
        )

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class UserAgent:
    """The browser: follows the authorization URL to its redirect, once."""

    def __init__(self, requests: list[str]) -> None:
        self.result: AuthorizationCodeResult | None = None
        self.authorize_query: dict[str, str] = {}
        self.requests = requests

    async def redirect(self, authorization_url: str) -> None:
        self.authorize_query = {k: v[-1] for k, v in parse_qs(urlsplit(authorization_url).query).items()}
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            response = await http.get(authorization_url, follow_redirects=False)
        self.requests.append(f"GET {authorization_url} -> {response.status_code}")
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"the authorization endpoint answered {response.status_code} without a redirect: {response.text[:300]}")
        query = parse_qs(urlsplit(location).query)
        if "error" in query:
            raise RuntimeError(f"the authorization endpoint redirected with an error: {location}")
        self.result = AuthorizationCodeResult(
            code=query["code"][-1],
            state=query.get("state", [None])[-1],
            iss=query.get("iss", [None])[-1],
        )

    async def callback(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise RuntimeError("the callback came before the redirect")
        return self.result


def claims_of(jwt: str) -> Any:
    """A JWT's claims, read without verifying (the server under test verifies)."""
    parts = jwt.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def run(url: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    storage = SeededStorage()
    requests: list[str] = []
    agent = UserAgent(requests)
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="ai-tools OAuth test",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=agent.redirect,
        callback_handler=agent.callback,
    )

    async def on_response(response: httpx2.Response) -> None:
        request = response.request
        requests.append(f"{request.method} {request.url} -> {response.status_code}")

    summary: dict[str, Any] = {"tools": [], "calls": []}
    timeout = httpx2.Timeout(TIMEOUT, read=300)
    async with httpx2.AsyncClient(auth=provider, timeout=timeout, event_hooks={"response": [on_response]}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                summary["tools"] = [tool.name for tool in listed.tools]
                for call in calls:
                    result = await session.call_tool(call["name"], call.get("arguments", {}))
                    summary["calls"].append(
                        {
                            "name": call["name"],
                            "is_error": bool(result.is_error),
                            "text": text_of(result),
                            "structured": result.structured_content,
                        }
                    )
    tokens = storage.tokens
    summary["requests"] = requests
    summary["authorize"] = agent.authorize_query
    summary["token"] = (
        None
        if tokens is None
        else {"scope": tokens.scope, "expires_in": tokens.expires_in, "claims": claims_of(tokens.access_token)}
    )
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the MCP endpoint, http://127.0.0.1:PORT/mcp")
    parser.add_argument("--calls", default="[]", help='tool calls after the listing, JSON: [{"name", "arguments"}]')
    args = parser.parse_args()
    try:
        summary = asyncio.run(asyncio.wait_for(run(args.url, json.loads(args.calls)), 120))
    except BaseException as error:  # noqa: BLE001 - reported, whatever it is
        detail = "".join(traceback.format_exception(error))
        print(detail, file=sys.stderr, flush=True)
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
        return 1
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
