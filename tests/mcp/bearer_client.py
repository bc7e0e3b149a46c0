"""The real Python `mcp` client against `skill-examples mcp --http ... --auth jwt`,
with a bearer token in every request: it lists the tools the token's scopes
reach and calls one; without the token it is refused.

Usage: bearer_client.py URL TOKEN
"""

import sys

import anyio
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

VLEVEL_INPUT = {
    "page_data": {
        "url": "https://shop.example.com/p/1",
        "gamme": "plaquettes",
        "marque": "renault",
        "modele": "clio",
        "type": "1.5 dci",
        "ktypnr": "12345",
    }
}


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        sys.exit(1)


async def main(url, token):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        check("ai_cos_vlevel_calc" in tools, f"the token's scopes list the tool: {tools}")
        check("ai_cos_routes_sync" not in tools, "a tool the scopes do not reach is not listed")
        r = await client.call_tool("ai_cos_vlevel_calc", VLEVEL_INPUT)
        check(not r.is_error and r.structured_content["vlevel"] == "V5", "the call runs as the token's caller")
    refused = False
    try:
        async with Client(url, mode="legacy") as client:
            await client.list_tools()
    except BaseException:  # noqa: BLE001 - any failure to connect is the point
        refused = True
    check(refused, "without the token, the client is refused")
    print("bearer client checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
