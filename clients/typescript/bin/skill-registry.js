#!/usr/bin/env node
// skill-registry: the package's command line.
//   skill-registry check REGISTRY    load it, every contract checked; print the skills
//   skill-registry ground REGISTRY   JSON lines of calls on stdin, one answer per line
//   skill-registry types REGISTRY    TypeScript types of every skill's input and output

import { createInterface } from "node:readline";
import { SkillRegistry, RegistryError } from "../src/index.js";
import { typesOf } from "../src/types.js";

// A reader that went away (`| head`) ends the command quietly.
process.stdout.on("error", (e) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(0);
});

const [command, path] = process.argv.slice(2);
if (!["check", "ground", "types"].includes(command) || !path) {
  process.stderr.write("usage: skill-registry check|ground|types REGISTRY\n");
  process.exit(2);
}

let registry;
try {
  registry = SkillRegistry.fromFile(path);
} catch (e) {
  process.stderr.write(`error: ${path}: ${e.message}\n`);
  process.exit(e instanceof RegistryError ? 1 : 2);
}

if (command === "check") {
  for (const c of registry.contracts) process.stdout.write(`${c.skill_id}\n`);
} else if (command === "types") {
  process.stdout.write(await typesOf(registry));
} else {
  const out = [];
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    const call = JSON.parse(line);
    const answer = registry.ground(call);
    out.push(
      JSON.stringify(
        answer.ok
          ? {
              ok: true,
              skill: answer.skill.skill_id.split("@")[0],
              version: answer.skill.metadata.version,
              isDestructive: answer.isDestructive,
              requiresHitl: answer.requiresHitl,
            }
          : answer,
      ),
    );
    if (out.length >= 1024) process.stdout.write(out.splice(0).join("\n") + "\n");
  }
  if (out.length) process.stdout.write(out.join("\n") + "\n");
}
