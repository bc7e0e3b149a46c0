"""End to end: the real `skill-examples mcp` server driven by the real Python `mcp`
client, in both protocol eras, over stdio (every server message checked against
the official MCP schema of the negotiated revision) and over Streamable HTTP.

Usage: client_e2e.py SERVER_BINARY WORK_DIR

Prints one line per check and exits non-zero on the first failure (the Rust test
`tests/mcp_clients.rs` runs it and shows the output).
"""

import json
import os
import subprocess
import sys
import time

import anyio
import jsonschema
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult, ResourceTemplateReference

from running import running_run

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = {
    "2025-11-25": os.path.join(HERE, "schema-2025-11-25.json"),
    "2026-07-28": os.path.join(HERE, "schema-2026-07-28.json"),
}
GRANTS = ["seo:read", "obsidian:read", "rag:admin"]
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
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def server(binary, log, *extra, role="executor"):
    """The server over stdio, its caller acting as `role` (most seed skills
    are reusable by an executor; the cache purge by an orchestrator only)."""
    args = [os.path.join(HERE, "tee.py"), log, "--", binary, "mcp", "--role", role]
    for g in GRANTS:
        args += ["--grant", g]
    return StdioServerParameters(command=sys.executable, args=args + list(extra))


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def protocol_error(client, name, arguments):
    try:
        await client.call_tool(name, arguments)
    except MCPError as e:
        return e
    return None


async def session(binary, mode, log, expected_tools):
    async with Client(server(binary, log), mode=mode) as client:
        version = client.session.protocol_version
        print(f"mode {mode}: negotiated {version}")
        check(version in SCHEMAS, f"negotiated revision {version} is one we hold a schema for")

        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        check(names == [t["name"] for t in expected_tools], f"tools/list lists exactly the permitted exposed tools, in order: {names}")

        ok = await client.call_tool("ai_cos_vlevel_calc", VLEVEL_INPUT)
        check(not ok.is_error, "valid input: isError is false")
        out_schema = next(t["outputSchema"] for t in expected_tools if t["name"] == "ai_cos_vlevel_calc")
        errors = [e.message for e in jsonschema.Draft202012Validator(out_schema).iter_errors(ok.structured_content)]
        check(not errors, f"valid input: structuredContent conforms to the tool's outputSchema {errors}")
        check(json.loads(text_of(ok)) == ok.structured_content, "valid input: the text content is the same JSON")

        bad = await client.call_tool("ai_cos_vlevel_calc", {"page_data": {"url": 42}})
        text = text_of(bad)
        check(bad.is_error, "invalid input: isError is true")
        check("/page_data/url" in text and "/page_data" in text, f"invalid input: every violation with its instance path: {text!r}")

        missing = await client.call_tool("read_note", {"path": "no/such/note.md"})
        check(missing.is_error and "note_not_found" in text_of(missing), f"handler failure: isError with the failure mode code: {text_of(missing)!r}")

        unknown = await protocol_error(client, "no_such_tool", {})
        check(unknown is not None and unknown.error.code == -32602, f"unknown tool: protocol error -32602: {unknown}")

        hidden = await protocol_error(client, "ai_cos_routes_sync", {})
        check(hidden is not None and hidden.error.code == -32602 and "seo:write" in hidden.error.message,
              f"tool not permitted: protocol error naming the missing permission: {hidden}")

        refused = await client.call_tool("ai_cos_rag_cache_purge", {"namespace": "knowledge:faq"})
        check(refused.is_error and "not in reusable_by" in text_of(refused),
              f"a role the skill does not list: refused with a clear message: {text_of(refused)!r}")

        await registry_resources(client, names, version)
    async with Client(server(binary, log, role="orchestrator"), mode=mode) as client:
        refused = await client.call_tool("ai_cos_rag_cache_purge", {"namespace": "knowledge:faq"})
        check(refused.is_error and "approval" in text_of(refused), f"approval required and not allowed: refused with a clear message: {text_of(refused)!r}")
    return version


async def registry_resources(client, names, version):
    """The registry as resources: the caller's registry, one manifest per
    permitted tool, the template with completion of its `tool` argument, and
    nothing of a tool the caller may not call (resource not found: -32002 on
    2025-11-25, invalid params on 2026-07-28, which folded it in)."""
    listed = await client.list_resources()
    uris = [r.uri for r in listed.resources if not r.uri.startswith("skill://runs/")]
    check(uris == ["skill://registry"] + [f"skill://skills/{n}" for n in names],
          f"resources/list: the registry, then one manifest per permitted tool: {uris}")
    registry = await client.read_resource("skill://registry")
    document = json.loads(registry.contents[0].text)
    check(registry.contents[0].mime_type == "application/json" and document["registry_version"]
          and len(document["skills"]) == len(names),
          "resources/read skill://registry: the registry document of the permitted skills")
    entry = json.loads((await client.read_resource("skill://skills/ai_cos_vlevel_calc")).contents[0].text)
    check(entry["name"] == "vlevel_calculator" and "inputs_schema" in entry and "capabilities" in entry,
          f"resources/read of a tool's manifest: its registry entry {sorted(entry)[:6]}")
    templates = await client.list_resource_templates()
    check([t.uri_template for t in templates.resource_templates] == ["skill://skills/{tool}", "skill://runs/{job_id}"],
          "resources/templates/list: one skill's manifest by tool name, one run of the caller's by job id")
    completed = await client.complete(
        ResourceTemplateReference(type="ref/resource", uri="skill://skills/{tool}"),
        {"name": "tool", "value": "ai_cos_v"})
    check(completed.completion.values == [n for n in names if n.startswith("ai_cos_v")] and completed.completion.values,
          f"completion/complete of the template's tool argument: {completed.completion.values}")
    try:
        await client.read_resource("skill://skills/ai_cos_routes_sync")
        hidden = None
    except MCPError as e:
        hidden = e
    check(hidden is not None and hidden.error.code == (-32002 if version == "2025-11-25" else -32602),
          f"a tool the caller may not call has no readable manifest: {hidden!r}")


async def runs_session(binary, mode, log, records):
    """The caller's runs as resources (`skill://runs/{job_id}`): listed while
    they run and after, a running one's progress and then its record, the
    template with completion of `job_id`; on 2025-11-25 a subscriber is told
    as the run progresses and when it ends."""
    updates = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            updates.append(root.params.uri)

    async with Client(server(binary, log, "--record", records), mode=mode, message_handler=on_message) as client:
        version = client.session.protocol_version
        r = await client.call_tool("echo", {"message": "remember me"})
        job = r.meta["dev.skill-runtime/manifest"]["job_id"]
        uri = f"skill://runs/{job}"
        listed = [x for x in (await client.list_resources()).resources if x.uri.startswith("skill://runs/")]
        check([x.uri for x in listed] == [uri] and listed[0].title == "echo: succeeded",
              f"{version}: resources/list names the caller's run: {[(x.uri, x.title) for x in listed]}")
        record = json.loads((await client.read_resource(uri)).contents[0].text)
        check(record["job_id"] == job and record["skill"] == "echo" and record["status"] == "succeeded"
              and record["output"] == {"message": "remember me"} and record["steps"],
              f"{version}: resources/read of the run: its record {sorted(record)[:8]}")
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        check("skill://runs/{job_id}" in templates, f"{version}: the runs template is listed: {templates}")
        completed = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="skill://runs/{job_id}"),
            {"name": "job_id", "value": job[:6]})
        check(completed.completion.values == [job], f"{version}: completion of job_id: {completed.completion.values}")
        try:
            await client.read_resource("skill://runs/00000000-0000-0000-0000-000000000000")
            unknown = None
        except MCPError as e:
            unknown = e
        check(unknown is not None, f"{version}: an unknown run is not found: {unknown!r}")

        async def on_progress(progress, total, message):
            pass

        async def slow_call():
            await client.call_tool("count_slowly", {"to": 8, "step_ms": 150}, progress_callback=on_progress)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(slow_call)
            running = await running_run(client, "count_slowly", within=5)
            if mode == "legacy":
                await client.subscribe_resource(running)
            with anyio.fail_after(5):
                while True:
                    shown = json.loads((await client.read_resource(running)).contents[0].text)
                    if shown.get("progress"):
                        break
                    await anyio.sleep(0.05)
            check(shown["status"] == "running" and shown["skill"] == "count_slowly" and shown["progress"]["done"] >= 1,
                  f"{version}: a running job's resource is its progress: {shown}")
        ended = json.loads((await client.read_resource(running)).contents[0].text)
        check(ended["status"] == "succeeded" and ended["output"] == {"counted": 8},
              f"{version}: the ended job's resource is its record: {ended['status']}")
        if mode == "legacy":
            with anyio.fail_after(5):
                while updates.count(running) < 2:
                    await anyio.sleep(0.02)
            check(set(updates) == {running}, f"{version}: the subscriber was told as the run progressed and ended: {len(updates)} updates")
        return version


async def approved_session(binary, log):
    async with Client(server(binary, log, "--approve", role="orchestrator"), mode="legacy") as client:
        r = await client.call_tool("ai_cos_rag_cache_purge", {"namespace": "knowledge:faq"})
        check(not r.is_error and r.structured_content == {"purged": False, "applied": True},
              f"server started with --approve: the approved destructive tool runs: {text_of(r)!r}")
        return client.session.protocol_version


async def http_session(url, mode, expected_tools, records):
    async with Client(url, mode=mode) as client:
        version = client.session.protocol_version
        print(f"HTTP, mode {mode}: negotiated {version}")
        listed = await client.list_tools()
        check([t.name for t in listed.tools] == [t["name"] for t in expected_tools], "HTTP: tools/list lists the permitted tools")
        ok = await client.call_tool("ai_cos_vlevel_calc", VLEVEL_INPUT)
        check(not ok.is_error and ok.structured_content["vlevel"] == "V5", "HTTP: valid call returns structured content")
        bad = await client.call_tool("ai_cos_vlevel_calc", {"page_data": {"url": 42}})
        check(bad.is_error and "/page_data/url" in text_of(bad), "HTTP: invalid call is a tool error with the path")
        unknown = await protocol_error(client, "no_such_tool", {})
        check(unknown is not None and unknown.error.code == -32602, "HTTP: unknown tool is a protocol error")
        reports = []

        async def on_progress(progress, total, message):
            reports.append(progress)

        counted = await client.call_tool("count_slowly", {"to": 10, "step_ms": 60}, progress_callback=on_progress)
        check(counted.structured_content == {"counted": 10}, "HTTP: count_slowly counts")
        check(len(reports) >= 5 and reports[-1] == 10, f"HTTP: {len(reports)} progress notifications on the request's stream")
        # Abandoned: notifications/cancelled (2025-11-25) or the request's
        # stream closed (2026-07-28) cancels the job.
        before = len(records_of(records, "cancelled"))
        with anyio.move_on_after(0.5):
            await client.call_tool("count_slowly", {"to": 100, "step_ms": 100})
        deadline = time.monotonic() + 10
        while len(records_of(records, "cancelled")) == before and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        found = records_of(records, "cancelled")[before:]
        check(len(found) == 1 and found[0]["duration_us"] < 700_000, f"HTTP {version}: the abandoned call is recorded cancelled")
    # Log lines over HTTP: per session on 2025-11-25 (a second session that
    # did not ask gets none), per request on 2026-07-28.
    lines = []

    async def on_log(params):
        lines.append((params.level, params.data))

    level = None if mode == "legacy" else "info"
    async with Client(url, mode=mode, logging_callback=on_log, log_level=level) as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        await client.call_tool("count_slowly", {"to": 2, "step_ms": 1})
        check(lines == [("info", "counted to 2")], f"HTTP {version}: the log line the client asked for: {lines}")
    async with Client(url, mode=mode, logging_callback=on_log) as client:
        await client.call_tool("count_slowly", {"to": 2, "step_ms": 1})
        check(len(lines) == 1, f"HTTP {version}: a session or request that did not ask gets no log line: {lines}")
    return version


def with_http_server(binary, expected_tools, work):
    """Start the server on a loopback port the OS picks, read the endpoint it
    prints, and run the HTTP checks in both eras."""
    records = os.path.join(work, "runs-http.jsonl")
    args = [binary, "mcp", "--role", "executor", "--http", "127.0.0.1:0", "--record", records]
    for g in GRANTS:
        args += ["--grant", g]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        line = proc.stderr.readline()
        check("http://127.0.0.1:" in line, f"HTTP server announces its endpoint: {line.strip()}")
        url = line.strip().split(" at ")[-1]
        versions = {anyio.run(http_session, url, mode, expected_tools, records) for mode in ["legacy", "auto"]}
        check(versions == set(SCHEMAS), "HTTP: both protocol eras")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def validator_for(schema, definition):
    root = dict(schema)
    root["$ref"] = f"#/$defs/{definition}"
    return jsonschema.Draft202012Validator(root)


# What each request's answer must be, per revision. The 2026 schema names whole
# responses; the 2025 one names results.
RESPONSES = {
    "2025-11-25": {
        "initialize": ("result", "InitializeResult"),
        "tools/list": ("result", "ListToolsResult"),
        "tools/call": ("result", "CallToolResult"),
        "ping": ("result", "EmptyResult"),
        "resources/list": ("result", "ListResourcesResult"),
        "resources/templates/list": ("result", "ListResourceTemplatesResult"),
        "resources/read": ("result", "ReadResourceResult"),
        "completion/complete": ("result", "CompleteResult"),
        "logging/setLevel": ("result", "EmptyResult"),
        "resources/subscribe": ("result", "EmptyResult"),
        # Tasks in that revision's form (docs/long-running.md): a call that
        # asked for one answers `CreateTaskResult` (below), `tasks/result`
        # the tool's result.
        "tasks/get": ("result", "GetTaskResult"),
        "tasks/cancel": ("result", "CancelTaskResult"),
        "tasks/result": ("result", "CallToolResult"),
    },
    "2026-07-28": {
        "server/discover": ("message", "DiscoverResultResponse"),
        "tools/list": ("message", "ListToolsResultResponse"),
        "tools/call": ("message", "CallToolResultResponse"),
        "resources/list": ("message", "ListResourcesResultResponse"),
        "resources/templates/list": ("message", "ListResourceTemplatesResultResponse"),
        "resources/read": ("message", "ReadResourceResultResponse"),
        "completion/complete": ("message", "CompleteResultResponse"),
    },
}


def validate_log(log, version):
    schema = json.load(open(SCHEMAS[version], encoding="utf-8"))
    any_message = validator_for(schema, "JSONRPCMessage")
    error_response = validator_for(schema, "JSONRPCErrorResponse")
    notification = validator_for(schema, "ServerNotification")
    methods = {}
    counted = 0
    for line in open(log, encoding="utf-8"):
        entry = json.loads(line)
        check_raw = "raw" not in entry
        if entry["from"] == "client":
            if check_raw and "method" in entry["message"] and "id" in entry["message"]:
                methods[entry["message"]["id"]] = entry["message"]["method"]
            continue
        if not check_raw:
            raise AssertionError(f"server wrote a line that is not JSON: {entry['raw']!r}")
        message = entry["message"]
        any_message.validate(message)
        if "id" not in message:
            notification.validate(message)
        elif "method" in message:
            # A request to the client (2025-11-25 only: elicitation).
            check(version == "2025-11-25", f"{version}: the server sends requests to the client only before 2026-07-28")
            validator_for(schema, "ServerRequest").validate(message)
        elif "error" in message:
            error_response.validate(message)
        else:
            method = methods.get(message["id"])
            if method not in RESPONSES[version]:
                raise AssertionError(f"no schema check for the answer to {method!r}: {message}")
            part, definition = RESPONSES[version][method]
            if method == "tools/call" and "task" in message.get("result", {}):
                definition = "CreateTaskResult"
            validator_for(schema, definition).validate(message[part] if part == "result" else message)
        counted += 1
    check(counted > 0, f"all {counted} server messages of {os.path.basename(log)} conform to the {version} schema")


async def logged_session(binary, mode, log):
    """Log lines of handlers (`ctx.log`) as `notifications/message`: none
    before the client asks; after `logging/setLevel` (2025-11-25) or with the
    level in each request's `_meta` (2026-07-28), those at that level or
    above, the tool's name as logger, a redacted input scrubbed out."""
    lines = []

    async def on_log(params):
        lines.append((params.level, params.logger, params.data))

    legacy = mode == "legacy"
    level = None if legacy else "info"
    # search_notes needs review: these servers approve.
    async with Client(server(binary, log, "--approve"), mode=mode, logging_callback=on_log, log_level=level) as client:
        version = client.session.protocol_version
        if legacy:
            await client.call_tool("count_slowly", {"to": 2, "step_ms": 1})
            check(lines == [], f"{version}: no log lines before the client asks for them")
            await client.set_logging_level("info")
        await client.call_tool("count_slowly", {"to": 3, "step_ms": 1})
        check(lines == [("info", "count_slowly", "counted to 3")],
              f"{version}: a handler's log line at the level asked for, its logger the tool: {lines}")
        await client.call_tool("search_notes", {"query": "brake pads"})
        check(len(lines) == 1 and lines[0][1] == "count_slowly", f"{version}: a line below the level asked for is not sent: {lines}")
    lines.clear()
    level = None if legacy else "debug"
    async with Client(server(binary, log, "--approve"), mode=mode, logging_callback=on_log, log_level=level) as client:
        if legacy:
            await client.set_logging_level("debug")
        await client.call_tool("search_notes", {"query": "brake pads"})
        check(lines == [("debug", "search_notes", "searching the vault for [REDACTED]")],
              f"{version}: the value of a redacted input is scrubbed from log lines: {lines}")
    return version


def records_of(path, status):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [r for r in map(json.loads, f) if r["skill"] == "count_slowly" and r["status"] == status]


async def long_running(binary, mode, log, records):
    """Progress and cancellation of `count_slowly`, as a client sees them."""
    async with Client(server(binary, log, "--record", records), mode=mode) as client:
        version = client.session.protocol_version
        reports = []

        async def on_progress(progress, total, message):
            reports.append((progress, total, message))

        r = await client.call_tool("count_slowly", {"to": 20, "step_ms": 100}, progress_callback=on_progress)
        check(not r.is_error and r.structured_content["counted"] == 20, f"{version}: count_slowly counts to 20")
        check(len(reports) >= 10, f"{version}: {len(reports)} progress notifications before the result")
        done = [p for p, _, _ in reports]
        check(done == sorted(done) and reports[-1][:2] == (20, 20), f"{version}: progress grows to 20 of 20")
        check(reports[-1][2] == "counted 20 of 20", f"{version}: progress carries the handler's message")

        # Abandoned after 0.5 s: the client cancels, the server stops the job.
        with anyio.move_on_after(0.5):
            await client.call_tool("count_slowly", {"to": 100, "step_ms": 100})
        cancelled_at = time.monotonic()
        found = []
        while not found and time.monotonic() - cancelled_at < 10:
            found = records_of(records, "cancelled")
            await anyio.sleep(0.02)
        check(len(found) == 1, f"{version}: the cancelled call's record says cancelled")
        rec = found[0]
        check(rec["error"]["code"] == "cancelled", f"{version}: its error is `cancelled`")
        # Started, cancelled 0.5 s in: stopped within 200 ms of that.
        check(rec["duration_us"] < 700_000, f"{version}: stopped {rec['duration_us'] / 1000:.0f} ms after it started")
        check(rec["progress"]["done"] < 10, f"{version}: the record keeps the last progress, {rec['progress']}")
        check([a["outcome"] for a in rec["attempts"]] == ["stopped"], f"{version}: one attempt, stopped, not retried")
        r = await client.call_tool("echo", {"message": "still serving"})
        check(not r.is_error, f"{version}: the server goes on serving")
    return version


async def asked_session(binary, mode, log, records):
    """Approval asked of the client's user by elicitation: a request to the
    client on 2025-11-25, an `input_required` round trip on 2026-07-28; the
    Python client answers both through the same callback."""
    asked = []

    async def answer(context, params):
        asked.append(params.message)
        if "knowledge:faq" in params.message:
            return ElicitResult(action="accept", content={"approve": True})
        return ElicitResult(action="decline")

    async with Client(server(binary, log, "--record", records, role="orchestrator"), mode=mode, elicitation_callback=answer) as client:
        version = client.session.protocol_version
        r = await client.call_tool("ai_cos_rag_cache_purge", {"namespace": "knowledge:faq"})
        check(not r.is_error and r.structured_content["applied"], f"{version}: the user approved: the destructive tool runs: {text_of(r)!r}")
        check(len(asked) == 1 and "ai_cos_rag_cache_purge" in asked[0] and "destructive" in asked[0],
              f"{version}: the user was asked once, told the tool and why: {asked}")
        r = await client.call_tool("ai_cos_rag_cache_purge", {"namespace": "knowledge:reference"})
        check(r.is_error and "not_approved" in text_of(r) and "declined" in text_of(r),
              f"{version}: the user declined: refused, saying so: {text_of(r)!r}")
        r = await client.call_tool("echo", {"message": "no question"})
        check(not r.is_error and len(asked) == 2, f"{version}: a tool that needs no approval asks nothing")
    runs = [json.loads(line) for line in open(records, encoding="utf-8")]
    steps = [s for rec in runs for s in rec["steps"] if s["step"] == "approval" and s["outcome"] != "skipped"]
    check(len(steps) == 2 and steps[0]["detail"].startswith("approved by the user of MCP client")
          and steps[1]["detail"].startswith("denied by"),
          f"{version}: the records name who decided and when: {[s['detail'] for s in steps]}")
    return version


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    exported = json.loads(subprocess.run([binary, "export", "--format", "mcp"], check=True, capture_output=True).stdout)
    expected = [
        t for t in exported["tools"]
        if all(p in GRANTS for p in t["_meta"]["dev.skill-runtime/manifest"].get("permissions", []))
    ]
    logs = []
    for mode in ["legacy", "auto"]:
        log = os.path.join(work, f"mcp-{mode}.jsonl")
        version = anyio.run(session, binary, mode, log, expected)
        logs.append((log, version))
    log = os.path.join(work, "mcp-approved.jsonl")
    logs.append((log, anyio.run(approved_session, binary, log)))
    for mode in ["legacy", "auto"]:
        log = os.path.join(work, f"mcp-asked-{mode}.jsonl")
        records = os.path.join(work, f"runs-asked-{mode}.jsonl")
        logs.append((log, anyio.run(asked_session, binary, mode, log, records)))
    for mode in ["legacy", "auto"]:
        log = os.path.join(work, f"mcp-runs-{mode}.jsonl")
        records = os.path.join(work, f"runs-runs-{mode}.jsonl")
        logs.append((log, anyio.run(runs_session, binary, mode, log, records)))
    for mode in ["legacy", "auto"]:
        log = os.path.join(work, f"mcp-logged-{mode}.jsonl")
        logs.append((log, anyio.run(logged_session, binary, mode, log)))
    check({v for _, v in logs} == set(SCHEMAS), "both protocol eras were exercised")
    for mode in ["legacy", "auto"]:
        log = os.path.join(work, f"mcp-long-{mode}.jsonl")
        records = os.path.join(work, f"runs-long-{mode}.jsonl")
        logs.append((log, anyio.run(long_running, binary, mode, log, records)))

    # The exact tool definitions on the wire are the exported ones.
    for log, version in logs[:2]:
        for line in open(log, encoding="utf-8"):
            entry = json.loads(line)
            result = entry.get("message", {}).get("result", {})
            if entry["from"] == "server" and "tools" in result:
                check(result["tools"] == expected, f"{version}: tools/list on the wire equals `export --format mcp` for the granted permissions")
    for log, version in logs:
        validate_log(log, version)
    with_http_server(binary, expected, work)
    print("all MCP client checks passed")


if __name__ == "__main__":
    main()
