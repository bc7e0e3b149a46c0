"""What the Python client scripts share about runs: the URI of a run in
flight, as `resources/list` names it while it runs."""

import anyio


async def running_run(client, skill, within=10):
    """The URI of `skill`'s run of the client's caller while it runs
    (`skill://runs/{job_id}`, titled `skill: running`), waited for up to
    `within` seconds."""
    with anyio.fail_after(within):
        while True:
            found = [x for x in (await client.list_resources()).resources
                     if x.uri.startswith("skill://runs/") and x.title == f"{skill}: running"]
            if found:
                return found[0].uri
            await anyio.sleep(0.02)
