"""Two callers of one server (`skill-examples mcp --http ... --auth api-keys`),
each with its own key, on the real Python `mcp` client: ann runs a slow tool;
while it runs, she and bob each hold the run's URI and follow it, on a
2025-11-25 session (`resources/subscribe`) and on a 2026-07-28
`subscriptions/listen` stream. Ann hears her run progress and end; bob,
holding the same URI, hears nothing of it.

Usage: run_listeners.py URL ANN_KEY BOB_KEY
"""

import sys

import anyio
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from running import running_run


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        sys.exit(1)


def client(url, key, mode, on_message=None):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    kwargs = {"message_handler": on_message} if on_message else {}
    return Client(streamable_http_client(url, http_client=http), mode=mode, **kwargs)


def updates_into(heard):
    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            heard.append(str(root.params.uri))
    return on_message


async def follow(url, key, mode, uri, heard, ready, done):
    """Follow `uri` as `key`'s caller until `done` is set; what is heard goes
    into `heard`."""
    if mode == "legacy":
        async with client(url, key, mode, updates_into(heard)) as c:
            try:
                await c.subscribe_resource(uri)
            except Exception as e:  # noqa: BLE001 - refused is an answer too
                heard.append(f"refused: {e}")
            ready.set()
            await done.wait()
    else:
        async with client(url, key, mode) as c:
            async with c.listen(resource_subscriptions=[uri]) as sub:
                ready.set()
                with anyio.move_on_after(30):
                    async with anyio.create_task_group() as tasks:
                        async def read():
                            async for event in sub:
                                heard.append(str(event))
                        tasks.start_soon(read)
                        await done.wait()
                        tasks.cancel_scope.cancel()


async def main(url, ann, bob):
    for mode in ["legacy", "auto"]:
        async with client(url, ann, mode) as hers:
            async def slow_call():
                await hers.call_tool("count_slowly", {"to": 12, "step_ms": 150})

            heard = {"ann": [], "bob": []}
            done = anyio.Event()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(slow_call)
                running = str(await running_run(hers, "count_slowly"))
                ready = {"ann": anyio.Event(), "bob": anyio.Event()}
                async with anyio.create_task_group() as followers:
                    followers.start_soon(follow, url, ann, mode, running, heard["ann"], ready["ann"], done)
                    followers.start_soon(follow, url, bob, mode, running, heard["bob"], ready["bob"], done)
                    with anyio.fail_after(10):
                        await ready["ann"].wait()
                        await ready["bob"].wait()
                    with anyio.fail_after(20):
                        while len(heard["ann"]) < 2:
                            await anyio.sleep(0.05)
                    # Past the run's end: whatever bob could hear has come.
                    await anyio.sleep(2.5)
                    done.set()
            check(len(heard["ann"]) >= 2, f"{mode}: ann hears her run progress: {len(heard['ann'])} updates")
            stolen = [h for h in heard["bob"] if not h.startswith("refused")]
            check(stolen == [], f"{mode}: bob, holding her run's URI, hears nothing of it: {heard['bob']}")
    print("run listener checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
