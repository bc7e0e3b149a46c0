// The official TypeScript SDK, both its eras, against the example server
// over Streamable HTTP: v1 (`@modelcontextprotocol/sdk` 1.32, 2025-11-25
// sessions) and v2 (`@modelcontextprotocol/client` 2.3, 2026-07-28
// stateless requests). Each lists the tools and calls every one of them
// with valid arguments, the long `count_slowly` with progress too; the SDKs
// check each structured result against the tool's output schema. Exits
// non-zero on the first failure.
//
//   node tests/mcp/ts_clients.mjs http://127.0.0.1:PORT/mcp

import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
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

function fail(what) {
  console.error(`FAIL: ${what}`);
  process.exit(1);
}

function check(condition, what) {
  if (!condition) fail(what);
  console.log(`ok: ${what}`);
}

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
  const bad = await client.callTool({ name: "echo", arguments: { message: 5 } });
  check(bad.isError && JSON.stringify(bad.content).includes("/message"), `${era}: a schema violation is a tool error with its path`);
  await client.close();
  return version;
}

const info = { name: "ts-clients", version: "1.0.0" };
await session("v1", new V1Client(info), new V1Transport(url));
await session("v2", new V2Client(info), new V2Transport(url));
console.log("ok: both TypeScript SDK eras");
