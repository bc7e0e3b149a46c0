// The official TypeScript SDK, both its eras, against the example server
// over Streamable HTTP: v1 (`@modelcontextprotocol/sdk` 1.32, 2025-11-25
// sessions) and v2 (`@modelcontextprotocol/client` 2.3, 2026-07-28
// stateless requests). Each lists the tools and calls every one of them
// with valid arguments, the long `count_slowly` with progress too, and v1
// runs it as a 2025-11-25 task as well; the SDKs check each structured
// result against the tool's output schema. Exits
// non-zero on the first failure.
//
// With a second argument, every message of the v1 session, the client's and
// the server's, is written there as JSON lines for tests/mcp/client_e2e.py's
// check against the official 2025-11-25 schema.
//
//   node tests/mcp/ts_clients.mjs http://127.0.0.1:PORT/mcp [LOG]

import { writeFileSync } from "node:fs";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { check, fail } from "./checks.mjs";
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client";

const url = new URL(process.argv[2]);

// Valid arguments for every tool of the example server.
const page = { url: "https://shop.example.com/p/1", gamme: "plaquettes", marque: "renault", modele: "clio", type: "1.5 dci", ktypnr: "12345" };
const ARGUMENTS = {
  ai_cos_canonical_check: { urls: ["https://shop.example.com/p/1"] },
  ai_cos_rag_cache_purge: { namespace: "knowledge:faq" },
  ai_cos_rag_reindex: { namespace: "knowledge:faq" },
  ai_cos_routes_sync: { dryRun: true },
  ai_cos_seo_role_audit: { urls: ["https://shop.example.com/p/1"], check_content: false },
  ai_cos_vlevel_calc: { page_data: page },
  count_slowly: { to: 5, step_ms: 20 },
  creator_profile: { handle: "@Ada" },
  echo: { message: "hi" },
  handle_normalization: { handle: " @Ada " },
  normalize_handle: { handle: "@Ada" },
  notify: { channel: "team", to: "ada", message: "hello" },
  read_note: { path: "rust-ownership.md" },
  search_notes: { query: "tokio" },
  summarize_note: { path: "tokio-notes.md" },
  summarize_text: { text: "One sentence. Two sentences. Three sentences. Four." },
};

// Refused by the server as started (role executor): a tool error, as a
// client must be able to read it. The cache purge is an orchestrator's.
const REFUSED = { ai_cos_rag_cache_purge: "(code: denied)" };

async function session(era, client, transport) {
  await client.connect(transport);
  const version = era === "v1" ? transport.protocolVersion ?? "2025-11-25" : "2026-07-28";
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check(names.length === Object.keys(ARGUMENTS).length && names.every((n) => n in ARGUMENTS),
    `${era}: tools/list lists every example tool: ${names.join(", ")}`);
  for (const name of names) {
    const args = ARGUMENTS[name];
    let result;
    try {
      result = await client.callTool({ name, arguments: args });
    } catch (e) {
      fail(`${era}: ${name} threw in the client: ${e}`);
    }
    const text = (result.content ?? []).map((c) => c.text ?? "").join("");
    if (name in REFUSED) {
      check(result.isError && text.includes(REFUSED[name]), `${era}: ${name} is refused as a tool error: ${text}`);
    } else {
      check(!result.isError, `${era}: ${name} answers ${result.isError ? text : "its output"}`);
    }
  }
  const progress = [];
  const onprogress = (p) => progress.push(p.progress);
  const call = { name: "count_slowly", arguments: { to: 10, step_ms: 60 } };
  // v1 takes a result schema before the options; v2 the options alone.
  const counted = era === "v1"
    ? await client.callTool(call, undefined, { onprogress })
    : await client.callTool(call, { onprogress });
  check(counted.structuredContent?.counted === 10 && progress.length >= 3 && progress.at(-1) === 10,
    `${era}: count_slowly counts to 10 with ${progress.length} progress notifications`);
  if (era === "v1") await tasks(client, tools);
  const bad = await client.callTool({ name: "echo", arguments: { message: 5 } });
  check(bad.isError && JSON.stringify(bad.content).includes("/message"), `${era}: a schema violation is a tool error with its path`);
  await client.close();
  return version;
}

// 2025-11-25's tasks (the SDK's `experimental.tasks`): the long tool says
// it may run as one, a call that asks for one gets a task it polls with
// tasks/get and reads with tasks/result, a task is cancelled with
// tasks/cancel, and a task id that is not the caller's is unknown.
async function tasks(client, tools, era = "v1") {
  const long = tools.find((t) => t.name === "count_slowly");
  check(long.execution?.taskSupport === "optional" && client.getServerCapabilities().tasks?.requests?.tools?.call,
    `${era}: the server offers tasks for tools/call, count_slowly may run as one`);
  const quick = ["echo", "normalize_handle", "ai_cos_vlevel_calc"];
  check(tools.filter((t) => quick.includes(t.name)).every((t) => !t.execution),
    `${era}: quick tools say nothing of tasks (long ones: ${tools.filter((t) => t.execution).map((t) => t.name).join(", ")})`);
  const seen = [];
  for await (const m of client.experimental.tasks.callToolStream({ name: "count_slowly", arguments: { to: 6, step_ms: 150 } })) {
    seen.push(m);
    if (m.type === "error") fail(`${era}: count_slowly as a task: ${m.error}`);
  }
  const created = seen.find((m) => m.type === "taskCreated");
  const result = seen.at(-1);
  check(created && created.task.status === "working" && typeof created.task.ttl === "number",
    `${era}: count_slowly answered with a task ${created?.task.taskId}`);
  check(seen.some((m) => m.type === "taskStatus" && m.task.status === "working")
      && seen.some((m) => m.type === "taskStatus" && m.task.status === "completed"),
    `${era}: the task polled from working to completed (${seen.map((m) => m.task?.status ?? m.type).join(", ")})`);
  check(result.type === "result" && result.result.structuredContent?.counted === 6
      && result.result._meta?.["io.modelcontextprotocol/related-task"]?.taskId === created.task.taskId,
    `${era}: tasks/result gives the tool's result, tied to its task`);
  // Cancelled while it runs.
  const stream = client.experimental.tasks.callToolStream({ name: "count_slowly", arguments: { to: 100, step_ms: 100 } });
  const first = (await stream.next()).value;
  check(first.type === "taskCreated", `${era}: a second task is created`);
  const id = first.task.taskId;
  const cancelled = await client.experimental.tasks.cancelTask(id);
  let state = cancelled;
  for (let i = 0; i < 50 && state.status !== "cancelled"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    state = await client.experimental.tasks.getTask(id);
  }
  check(state.status === "cancelled", `${era}: tasks/cancel stops the task (${cancelled.status}, then ${state.status})`);
  await stream.return();
  let again;
  try {
    await client.experimental.tasks.cancelTask(id);
  } catch (e) {
    again = e;
  }
  check(again && String(again).includes("already ended"), `${era}: a task that ended cannot be cancelled: ${again}`);
  let unknown;
  try {
    await client.experimental.tasks.getTask(id.replace(/\.[^.]*$/, ".forged"));
  } catch (e) {
    unknown = e;
  }
  check(unknown && String(unknown).includes("no task"), `${era}: a forged task id is unknown: ${unknown}`);
  // A quick tool says nothing of tasks ("forbidden"): a call that asks for
  // one anyway is refused with -32601, as the revision says.
  let forbidden;
  try {
    await client.request({ method: "tools/call", params: { name: "echo", arguments: ARGUMENTS.echo, task: { ttl: 60000 } } },
      CallToolResultSchema);
  } catch (e) {
    forbidden = e;
  }
  check(forbidden?.code === -32601 && String(forbidden).includes("does not run as a task"),
    `${era}: a quick tool called as a task is refused: ${forbidden}`);
}

// The messages of a session, as fetch carries them: each request body, and
// each answer (a JSON body, or the events of a stream, read from a copy of
// the response as the SDK reads the original).
const logged = [];
const reading = [];
function loggingFetch(to, init) {
  if (typeof init?.body === "string") {
    for (const m of [].concat(JSON.parse(init.body))) logged.push({ from: "client", message: m });
  }
  return fetch(to, init).then((response) => {
    const type = response.headers.get("content-type") ?? "";
    if (response.ok && (type.includes("json") || type.includes("event-stream"))) {
      reading.push(read(response.clone(), type.includes("json")));
    }
    return response;
  });
}

// Each message of `response`'s body as it arrives, until it ends or the
// client closes it (a stream's read so far counts).
async function read(response, json) {
  const add = (text) => {
    for (const m of [].concat(JSON.parse(text))) logged.push({ from: "server", message: m });
  };
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk, { stream: true });
      if (json) continue;
      let end;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("");
        if (data) add(data);
      }
    }
  } catch {
    return; // closed by the client
  }
  if (json && buffered) add(buffered);
}

const info = { name: "ts-clients", version: "1.0.0" };
const log = process.argv[3];
await session("v1", new V1Client(info), new V1Transport(url, log ? { fetch: loggingFetch } : undefined));
if (log) {
  await Promise.all(reading);
  writeFileSync(log, logged.map((e) => JSON.stringify(e)).join("\n") + "\n");
}
await session("v2", new V2Client(info), new V2Transport(url));

// Over stdio too (SKILL_SERVER: the server's command line, as JSON): v1's
// tasks on the same binary started as a client's child process.
if (process.env.SKILL_SERVER) {
  const [command, ...args] = JSON.parse(process.env.SKILL_SERVER);
  const client = new V1Client(info);
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  const { tools } = await client.listTools();
  await tasks(client, tools, "v1 over stdio");
  await client.close();
}
console.log("ok: both TypeScript SDK eras");
