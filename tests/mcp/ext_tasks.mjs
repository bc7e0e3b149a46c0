// The official tasks client (`@modelcontextprotocol/ext-tasks` 0.2.2, over the
// TypeScript SDK v2) against the example server over Streamable HTTP, in both
// eras: a 2025-11-25 session (the SDK's legacy mode: tasks as that revision
// defines them) and 2026-07-28 stateless requests (the tasks extension, the
// library's raw request path, which the host frames: here plain `fetch` with
// the revision's headers). In each: `count_slowly` run as a task and settled
// to its result, checked against the tool's output; a second one cancelled;
// a quick tool answered at once. Exits non-zero on the first failure.
//
//   node tests/mcp/ext_tasks.mjs http://127.0.0.1:PORT/mcp

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { check } from "./checks.mjs";

const url = new URL(process.argv[2]);
const info = { name: "ext-tasks", version: "1.0.0" };
const MODERN = "2026-07-28";

// The library's raw path for 2026-07-28: one POST per request, the headers
// that revision asks for (the method, and the name, URI or task id it is
// about), the JSON-RPC response read back.
let nextId = 1;
async function rawDispatch(request, options) {
  const message = { jsonrpc: "2.0", id: `raw-${nextId++}`, ...request };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": message.method,
  };
  const named = message.params?.name ?? message.params?.uri ?? message.params?.taskId;
  if (named !== undefined) headers["mcp-name"] = String(named);
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message), signal: options?.signal });
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").includes("event-stream")) {
    const events = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)));
    return events.find((m) => m.id === message.id);
  }
  return JSON.parse(text);
}

async function era(name, client, options) {
  await client.connect(new StreamableHTTPClientTransport(url));
  check(client.getNegotiatedProtocolVersion() === name, `${name}: negotiated ${client.getNegotiatedProtocolVersion()}`);
  const session = createTaskSessionFromClient(client, { endpointId: `local-${name}`, ...options });
  const prefer = { task: { preference: "prefer" } };

  const counted = await session.callTool("count_slowly", { to: 5, step_ms: 100 }, prefer);
  check(counted.kind === "task", `${name}: count_slowly runs as a task (${counted.kind})`);
  const { outcome } = await counted.settle();
  const result = resultFromTaskOutcome(outcome);
  check(outcome.status === "completed" && result.structuredContent?.counted === 5,
    `${name}: the task settles to the tool's result: ${JSON.stringify(result.structuredContent)}`);

  const long = await session.callTool("count_slowly", { to: 100, step_ms: 100 }, prefer);
  check(long.kind === "task", `${name}: a second task`);
  await new Promise((r) => setTimeout(r, 300));
  await long.cancel();
  const stopped = await long.settle();
  check(stopped.outcome.status === "cancelled", `${name}: cancelled, it settles cancelled (${stopped.outcome.status})`);

  const echo = await session.callTool("echo", { message: "hi" }, prefer);
  const echoed = resultFromTaskOutcome((await echo.settle()).outcome);
  check(echo.kind === "immediate" && echoed.structuredContent?.message === "hi",
    `${name}: a quick tool answers at once (${echo.kind})`);

  await session.close();
  await client.close();
}

await era("2025-11-25", new Client(info), {});
await era(MODERN, new Client(info, { versionNegotiation: { mode: { pin: MODERN } } }), {
  rawDispatch,
  v2RequestFraming: {
    protocolVersion: MODERN,
    clientInfo: info,
    clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
  },
});
console.log("ok: the tasks client in both eras");
