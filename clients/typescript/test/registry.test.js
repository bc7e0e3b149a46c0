// The package's own tests, on the example registry (SKILL_REGISTRY, else the
// repository's skill-registry.json). tests/consumers.rs runs them, and holds
// `ground` to the runtime's answers on generated calls.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { SkillRegistry, RegistryError, validateSkillContract } from "../src/index.js";
import { typesOf } from "../src/types.js";

const path = process.env.SKILL_REGISTRY ?? new URL("../../../skill-registry.json", import.meta.url).pathname;
const registry = SkillRegistry.fromFile(path);
const vlevel = { page_data: { url: "https://shop.example.com/p/1", gamme: "plaquettes", marque: "renault" } };

test("getSkill finds a skill by name and by name@version", () => {
  assert.equal(registry.getSkill("vlevel_calculator").skill_id, "vlevel_calculator@1.0.0");
  assert.equal(registry.getSkill("vlevel_calculator@1.0.0").metadata.name, "V-Level Calculator");
  assert.equal(registry.getSkill("vlevel_calculator@2.0.0"), undefined);
  assert.equal(registry.getSkill("nope"), undefined);
});

test("a valid call grounds, by its skill's name or its tool name, as text or a value", () => {
  for (const call of [
    { name: "vlevel_calculator", arguments: JSON.stringify(vlevel) },
    { name: "ai_cos_vlevel_calc", arguments: vlevel },
  ]) {
    const answer = registry.ground(call);
    assert.equal(answer.ok, true, JSON.stringify(answer));
    assert.equal(answer.skill.skill_id, "vlevel_calculator@1.0.0");
    assert.equal(answer.isDestructive, false);
    assert.equal(answer.requiresHitl, false);
    assert.deepEqual(answer.arguments, vlevel);
  }
});

test("invalid arguments are refused with each error's path", () => {
  const wrong = registry.ground({ name: "vlevel_calculator", arguments: { page_data: { url: "x", gamme: 1 } } });
  assert.equal(wrong.ok, false);
  assert.equal(wrong.code, "invalid_input");
  assert.deepEqual(wrong.errors.map((e) => e.path), ["/page_data/gamme"]);
  const missing = registry.ground({ name: "vlevel_calculator", arguments: "{}" });
  assert.deepEqual(missing.errors.map((e) => e.path), [""]);
  assert.match(missing.errors[0].message, /page_data/);
  const badUri = registry.ground({ name: "canonical_check", arguments: { urls: ["https://ok.example/", "not a uri"] } });
  assert.deepEqual(badUri.errors.map((e) => e.path), ["/urls/1"]);
  assert.equal(registry.ground({ name: "echo", arguments: "{\"message\": " }).code, "malformed_json");
});

test("a destructive skill that needs a person says so", () => {
  const answer = registry.ground({ name: "rag_cache_purge", arguments: { namespace: "knowledge:faq" } });
  assert.equal(answer.ok, true, JSON.stringify(answer));
  assert.equal(answer.isDestructive, true);
  assert.equal(answer.requiresHitl, true);
});

test("an unknown skill is refused", () => {
  const answer = registry.ground({ name: "drop_everything", arguments: "{}" });
  assert.equal(answer.ok, false);
  assert.equal(answer.code, "unknown_skill");
  assert.equal(registry.ground({ arguments: "{}" }).code, "unknown_skill");
});

test("contracts are checked strictly, and a registry with a bad one does not load", () => {
  const contract = structuredClone(registry.getSkill("echo"));
  assert.equal(validateSkillContract(contract).ok, true);
  delete contract.constraints.sandbox_type;
  const missing = validateSkillContract(contract);
  assert.equal(missing.ok, false);
  assert.deepEqual(missing.errors.map((e) => e.path), ["/constraints"]);
  const wrong = structuredClone(registry.getSkill("echo"));
  wrong.constraints.is_destructive = "no";
  assert.deepEqual(validateSkillContract(wrong).errors.map((e) => e.path), ["/constraints/is_destructive"]);
  const raw = JSON.parse(readFileSync(path, "utf8"));
  raw.skills[0].constraints.requires_hitl = "maybe";
  assert.throws(() => SkillRegistry.fromJson(raw), RegistryError);
});

test("the UnifiedSkillContract export loads and grounds the same", () => {
  const unified = SkillRegistry.fromJson(registry.contracts);
  assert.equal(unified.ground({ name: "vlevel_calculator", arguments: vlevel }).ok, true);
  assert.equal(unified.ground({ name: "rag_cache_purge", arguments: { namespace: "knowledge:faq" } }).requiresHitl, true);
});

test("types name every skill's input and output", async () => {
  const types = await typesOf(registry);
  for (const name of ["VlevelCalculatorInput", "VlevelCalculatorOutput", "RagCachePurgeInput"]) {
    assert.match(types, new RegExp(`export (interface|type) ${name}\\b`));
  }
});
