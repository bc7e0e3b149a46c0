// The registry's consumer in TypeScript: load `skill-registry.json` (or the
// UnifiedSkillContract v1 export), check contracts as ADR-0002 says, and
// ground a model's tool calls with the answer the Rust runtime gives
// (`Runtime::ground`): the same resolution, the same limits, the same schema
// checks, the same formats.

import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { FORMATS } from "./formats.js";

const CONTRACT_SCHEMA = JSON.parse(
  readFileSync(new URL("../schemas/unified-skill-contract-v1.schema.json", import.meta.url), "utf8"),
);

/** The runtime's default limits on a call's arguments (`Limits::default()`). */
export const DEFAULT_LIMITS = Object.freeze({ maxInputBytes: 1 << 20, maxDepth: 64 });

// serde_json's parser refuses to nest deeper than this (its recursion limit).
const PARSER_DEPTH = 127;

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: false, unicodeRegExp: true });
  addFormats(ajv);
  for (const [name, check] of Object.entries(FORMATS)) {
    ajv.addFormat(name, { type: "string", validate: check });
  }
  return ajv;
}

const contractCheck = validator().compile(CONTRACT_SCHEMA.items);

function errorsOf(ajvErrors) {
  return (ajvErrors ?? []).map((e) => ({
    path: e.instancePath,
    message: e.keyword === "required" ? `"${e.params.missingProperty}" is a required property` : e.message,
  }));
}

/**
 * Check one UnifiedSkillContract v1, strictly: any missing or wrongly typed
 * field rejects the whole contract.
 */
export function validateSkillContract(value) {
  if (contractCheck(value)) return { ok: true, contract: value };
  return { ok: false, errors: errorsOf(contractCheck.errors) };
}

/** A registry that does not load: every contract that failed, with why. */
export class RegistryError extends Error {
  constructor(message, errors) {
    super(message);
    this.name = "RegistryError";
    this.errors = errors;
  }
}

// --- Versions (semver 2.0.0 precedence, build metadata last, as the runtime orders them).

function parseVersion(text) {
  const m = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/.exec(text);
  if (!m) return undefined;
  return { core: [BigInt(m[1]), BigInt(m[2]), BigInt(m[3])], pre: m[4] ?? "", build: m[5] ?? "" };
}

function compareIdentifiers(a, b) {
  const x = a.split("."), y = b.split(".");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const nx = /^\d+$/.test(x[i]), ny = /^\d+$/.test(y[i]);
    if (nx && ny) {
      const d = BigInt(x[i]) - BigInt(y[i]);
      if (d !== 0n) return d < 0n ? -1 : 1;
    } else if (nx !== ny) {
      return nx ? -1 : 1;
    } else if (x[i] !== y[i]) {
      return x[i] < y[i] ? -1 : 1;
    }
  }
  return Math.sign(x.length - y.length);
}

function compareVersions(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a.core[i] !== b.core[i]) return a.core[i] < b.core[i] ? -1 : 1;
  }
  if (a.pre !== b.pre) {
    if (!a.pre) return 1;
    if (!b.pre) return -1;
    return compareIdentifiers(a.pre, b.pre);
  }
  if (a.build !== b.build) {
    if (!a.build) return -1;
    if (!b.build) return 1;
    return compareIdentifiers(a.build, b.build);
  }
  return 0;
}

// --- Arguments as the runtime reads them.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// --- Integers beyond a double's 53 bits.
//
// The runtime reads an integer literal within `i64`/`u64` exactly, and the
// schema's integer bounds too (`u64::MAX` is 18446744073709551615); here both
// are doubles. Rounding keeps order, so a double comparison can only be wrong
// where the value and a bound round to the same double: such a value is moved
// to the neighbouring double on the side its exact value lies.

const BOUNDS = new Set(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]);
const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;
const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;

/** The integer the runtime reads for the number `v` written as `source`
 *  (Node 22 tells the source; without it, the double itself). */
function exactOf(v, source) {
  if (source !== undefined && INTEGER_LITERAL.test(source)) {
    const exact = BigInt(source);
    if (exact >= I64_MIN && exact <= U64_MAX) return exact;
  }
  return BigInt(v);
}

function nextDouble(v, up) {
  const bits = new BigInt64Array(new Float64Array([v]).buffer);
  bits[0] += (v > 0) === up ? 1n : -1n;
  return new Float64Array(bits.buffer)[0];
}

/** Record in `table` (double -> exact bounds) a schema bound that is an
 *  unsafe integer. */
function recordBound(table, key, v, source) {
  if (!BOUNDS.has(key) || typeof v !== "number" || !Number.isInteger(v) || Number.isSafeInteger(v)) return;
  // Parsed already (no source): the widths the runtime writes are exact integers.
  const exact = source !== undefined ? exactOf(v, source) : { [2 ** 64]: U64_MAX, [2 ** 63]: 2n ** 63n - 1n }[v] ?? BigInt(v);
  const bounds = table.get(v) ?? new Set();
  bounds.add(exact);
  table.set(v, bounds);
}

function boundsOf(value, table = new Map()) {
  if (value !== null && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      recordBound(table, key, v, undefined);
      boundsOf(v, table);
    }
  }
  return table;
}

/** `v` as the runtime compares it with the bounds in `table`. */
function compared(v, source, table) {
  const bounds = table.get(v);
  if (!bounds) return v;
  const exact = exactOf(v, source);
  const sides = new Set([...bounds].filter((b) => b !== exact).map((b) => exact > b));
  return sides.size === 1 ? nextDouble(v, sides.has(true)) : v;
}

/** The arguments' JSON text parsed as serde_json would: no number beyond a
 *  double, no string that is not Unicode text. */
function parseArguments(text, bounds) {
  try {
    const value = JSON.parse(text, (key, v, context) => {
      if (LONE_SURROGATE.test(key)) throw new SyntaxError("lone surrogate in a key");
      if (typeof v === "number") {
        if (!Number.isFinite(v)) throw new SyntaxError("number out of range");
        if (!Number.isSafeInteger(v) && Number.isInteger(v)) return compared(v, context?.source, bounds);
      }
      if (typeof v === "string" && LONE_SURROGATE.test(v)) throw new SyntaxError("lone surrogate in a string");
      return v;
    });
    return { value };
  } catch (e) {
    return { error: e.message };
  }
}

/** How deeply `v` nests arrays and objects (a flat object is 1), counted no
 *  further than `limit + 1`. */
function depthOf(v, limit) {
  let deepest = 0;
  const stack = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop();
    if (x === null || typeof x !== "object") continue;
    if (d + 1 > deepest) deepest = d + 1;
    if (deepest > limit) return deepest;
    for (const item of Array.isArray(x) ? x : Object.values(x)) stack.push([item, d + 1]);
  }
  return deepest;
}

function refused(code, message, path = "") {
  // A message may quote a piece of the arguments cut inside a surrogate pair.
  return { ok: false, code, errors: [{ path, message: message.toWellFormed() }] };
}

/** Skills by name: their versions, highest last, and the contract of each. */
export class SkillRegistry {
  #byName = new Map();
  #byTool = new Map();
  #contracts = [];
  #ajv = validator();
  #checks = new Map();
  #limits;
  #bounds;

  /** Read `path`: `skill-registry.json`, or the UnifiedSkillContract v1 export. */
  static fromFile(path, options = {}) {
    const bounds = new Map();
    const value = JSON.parse(readFileSync(path, "utf8"), (key, v, context) => {
      recordBound(bounds, key, v, context?.source);
      return v;
    });
    return new SkillRegistry(value, { ...options, bounds });
  }

  /**
   * A registry from a parsed `skill-registry.json` (`{registry_version,
   * skills}`) or a UnifiedSkillContract v1 array. Every contract must pass
   * `validateSkillContract`, or nothing loads (a `RegistryError` names each).
   */
  static fromJson(value, options = {}) {
    return new SkillRegistry(value, options);
  }

  constructor(value, { limits = DEFAULT_LIMITS, bounds } = {}) {
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
    this.#bounds = bounds ?? boundsOf(value);
    const entries = Array.isArray(value) ? value.map(fromContract) : registryEntries(value);
    const errors = [];
    entries.forEach((entry, i) => {
      const check = validateSkillContract(entry.contract);
      if (!check.ok) {
        errors.push(...check.errors.map((e) => ({ ...e, path: `/${i}${e.path}`, skill: entry.contract?.skill_id })));
        return;
      }
      const parsed = parseVersion(entry.version);
      if (!parsed) {
        errors.push({ path: `/${i}`, skill: entry.contract.skill_id, message: `version "${entry.version}" is not semver` });
        return;
      }
      entry.parsed = parsed;
      const versions = this.#byName.get(entry.name) ?? [];
      versions.push(entry);
      this.#byName.set(entry.name, versions);
      this.#contracts.push(entry.contract);
    });
    if (errors.length) {
      throw new RegistryError(`${errors.length} contract error(s): ${errors.map((e) => `${e.skill ?? "?"} at ${e.path || "/"}: ${e.message}`).join("; ")}`, errors);
    }
    for (const versions of this.#byName.values()) versions.sort((a, b) => compareVersions(a.parsed, b.parsed));
    for (const entry of entries) {
      if (entry.exposed && entry.toolName && !this.#byTool.has(entry.toolName)) this.#byTool.set(entry.toolName, entry.name);
    }
  }

  /** Every contract, in the file's order. */
  get contracts() {
    return [...this.#contracts];
  }

  /** The contract `id` names (`name@version`, or `name` for its highest version), or undefined. */
  getSkill(id) {
    const found = this.#lookup(id);
    return found.entry?.contract;
  }

  #lookup(reference) {
    const at = reference.indexOf("@");
    const [name, version] = at < 0 ? [reference, undefined] : [reference.slice(0, at), reference.slice(at + 1)];
    const versions = this.#byName.get(name);
    if (!versions) return { versions: undefined };
    if (version === undefined) return { entry: versions.at(-1), versions };
    const wanted = parseVersion(version);
    const entry =
      versions.find((e) => e.version === version) ??
      (wanted && versions.find((e) => compareVersions(e.parsed, wanted) === 0 && e.parsed.build === wanted.build));
    return { entry, versions };
  }

  #check(entry) {
    let check = this.#checks.get(entry.contract.skill_id);
    if (!check) {
      check = this.#ajv.compile(entry.contract.interface.input_schema);
      this.#checks.set(entry.contract.skill_id, check);
    }
    return check;
  }

  /**
   * Ground a model's tool call before it runs: `name` is a skill's name, its
   * `name@version`, or its MCP/OpenAI tool name; `arguments` is JSON text (as
   * a tool call carries it) or a value. The answer is the Rust runtime's
   * (`skill-examples ground`): the skill exists and may run here, and the
   * arguments pass its input stage (size and depth limits, the input schema
   * with its formats); or why not, each error with its JSON pointer.
   */
  ground({ name = "", arguments: args = "{}" } = {}) {
    name = String(name);
    const reference = this.#byName.has(name) ? name : (this.#byTool.get(name) ?? name);
    const { entry, versions } = this.#lookup(reference);
    if (!versions) return refused("unknown_skill", `unknown skill \`${reference}\``);
    if (!entry) return refused("unknown_version", `skill \`${reference}\` has no such version; known: ${versions.map((e) => e.version).join(", ")}`);
    const { contract } = entry;
    if (contract.constraints.sandbox_type !== "LOCAL") {
      return refused("sandbox_unavailable", `skill \`${entry.name}\` needs a ${contract.constraints.sandbox_type} sandbox, which this runtime does not provide`);
    }
    if (entry.status === "disabled") return refused("disabled", `skill \`${entry.name}\` is disabled`);
    const text = typeof args === "string" ? args : JSON.stringify(args);
    const limits = this.#limits;
    if (Buffer.byteLength(text, "utf8") > limits.maxInputBytes) {
      return refused("too_large", `arguments of ${Buffer.byteLength(text, "utf8")} bytes exceed the limit of ${limits.maxInputBytes}`);
    }
    const parsed = parseArguments(text, this.#bounds);
    if (parsed.error !== undefined) return refused("malformed_json", `arguments are not JSON: ${parsed.error}`);
    const depth = depthOf(parsed.value, Math.max(limits.maxDepth, PARSER_DEPTH));
    if (depth > PARSER_DEPTH) return refused("malformed_json", "arguments are not JSON: recursion limit exceeded");
    if (depth > limits.maxDepth) return refused("too_deep", `arguments nest deeper than ${limits.maxDepth}`);
    const check = this.#check(entry);
    if (!check(parsed.value)) return { ok: false, code: "invalid_input", errors: errorsOf(check.errors) };
    return {
      ok: true,
      skill: contract,
      arguments: parsed.value,
      isDestructive: contract.constraints.is_destructive,
      requiresHitl: contract.constraints.requires_hitl,
    };
  }
}

// --- The two file shapes.

function registryEntries(value) {
  if (value === null || typeof value !== "object" || !Array.isArray(value.skills)) {
    throw new RegistryError("neither skill-registry.json (an object with `skills`) nor a UnifiedSkillContract v1 array", []);
  }
  return value.skills.map((skill) => {
    const s = skill ?? {};
    const constraints = s.constraints ?? {};
    return {
      name: s.name,
      version: s.version,
      status: s.status ?? "enabled",
      exposed: s.mcp?.exposed === true,
      toolName: s.mcp?.tool_name || s.name,
      contract: {
        skill_id: `${s.name}@${s.version}`,
        metadata: {
          name: s.title || s.name,
          description: s.description,
          source: constraints.source,
          status: s.status,
          version: s.version,
        },
        interface: { input_schema: s.inputs_schema, output_schema: s.outputs_schema },
        constraints: {
          is_destructive: constraints.is_destructive,
          requires_hitl: constraints.requires_hitl,
          sandbox_type: constraints.sandbox_type,
        },
      },
    };
  });
}

function fromContract(contract) {
  const id = typeof contract?.skill_id === "string" ? contract.skill_id : "";
  const at = id.indexOf("@");
  return {
    name: at < 0 ? id : id.slice(0, at),
    version: contract?.metadata?.version ?? (at < 0 ? "0.0.0" : id.slice(at + 1)),
    status: contract?.metadata?.status ?? "enabled",
    exposed: false,
    toolName: undefined,
    contract,
  };
}
